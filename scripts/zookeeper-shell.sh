#!/usr/bin/env bash
# Kafka's bin/zookeeper-shell.sh: the ZooKeeper CLI (zkCli.sh) against the local cluster.
#
#   ./scripts/zookeeper-shell.sh                              interactive, localhost:2181
#   ./scripts/zookeeper-shell.sh localhost:2181 ls /brokers/ids
#   ./scripts/zookeeper-shell.sh localhost:2181 get /controller
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

[ -x "$ZK_CLI" ] || die "$ZK_CLI is missing; ./scripts/cluster.sh up installs ZooKeeper"
server=${1:-localhost:2181}
if (($#)); then
	shift
fi
zk_cli -server "$server" "$@"
