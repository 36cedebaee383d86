#!/usr/bin/env bash
# zkafka bench: produce then consume a load against the cluster (builds bin/zkafka when missing or stale).
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" && exec_zkafka bench "$@"
