#!/usr/bin/env bash
# Kafka's bin/kafka-preferred-replica-election.sh: zkafka preferred-replica-election (builds bin/zkafka when missing or stale).
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" && exec_zkafka preferred-replica-election "$@"
