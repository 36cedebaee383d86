#!/usr/bin/env bash
# Kafka's bin/zookeeper-security-migration.sh: zkafka zookeeper-security-migration (builds bin/zkafka when missing or stale).
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" && exec_zkafka zookeeper-security-migration "$@"
