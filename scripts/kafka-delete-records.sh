#!/usr/bin/env bash
# Kafka's bin/kafka-delete-records.sh: zkafka delete-records (builds bin/zkafka when missing or stale).
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" && exec_zkafka delete-records "$@"
