#!/usr/bin/env bash
# Kafka's bin/kafka-delegation-tokens.sh: zkafka delegation-tokens (builds bin/zkafka when missing or stale).
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" && exec_zkafka delegation-tokens "$@"
