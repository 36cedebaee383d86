#!/usr/bin/env bash
# Kafka's bin/kafka-broker-api-versions.sh: zkafka broker-api-versions (builds bin/zkafka when missing or stale).
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" && exec_zkafka broker-api-versions "$@"
