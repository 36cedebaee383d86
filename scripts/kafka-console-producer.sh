#!/usr/bin/env bash
# Kafka's bin/kafka-console-producer.sh: zkafka console-producer (builds bin/zkafka when missing or stale).
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" && exec_zkafka console-producer "$@"
