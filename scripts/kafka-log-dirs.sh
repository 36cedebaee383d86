#!/usr/bin/env bash
# Kafka's bin/kafka-log-dirs.sh: zkafka log-dirs (builds bin/zkafka when missing or stale).
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" && exec_zkafka log-dirs "$@"
