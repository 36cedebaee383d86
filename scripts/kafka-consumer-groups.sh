#!/usr/bin/env bash
# Kafka's bin/kafka-consumer-groups.sh: zkafka consumer-groups (builds bin/zkafka when missing or stale).
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" && exec_zkafka consumer-groups "$@"
