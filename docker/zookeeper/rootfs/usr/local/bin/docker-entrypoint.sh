#!/bin/bash
# Starts ZooKeeper the way the official zookeeper image does: on first start it writes
# $ZOO_CONF_DIR/zoo.cfg from the ZOO_* variables and $ZOO_DATA_DIR/myid from ZOO_MY_ID, then runs the
# command (zkServer.sh start-foreground) as the zookeeper user. A zoo.cfg or myid already there is kept,
# so a configuration mounted into /conf wins and a restarted server keeps its identity.
set -euo pipefail

conf=$ZOO_CONF_DIR/zoo.cfg
if [ ! -f "$conf" ]; then
	{
		echo "dataDir=$ZOO_DATA_DIR"
		echo "dataLogDir=$ZOO_DATA_LOG_DIR"
		echo "tickTime=$ZOO_TICK_TIME"
		echo "initLimit=$ZOO_INIT_LIMIT"
		echo "syncLimit=$ZOO_SYNC_LIMIT"
		echo "autopurge.snapRetainCount=$ZOO_AUTOPURGE_SNAPRETAINCOUNT"
		echo "autopurge.purgeInterval=$ZOO_AUTOPURGE_PURGEINTERVAL"
		echo "maxClientCnxns=$ZOO_MAX_CLIENT_CNXNS"
		echo "standaloneEnabled=$ZOO_STANDALONE_ENABLED"
		echo "admin.enableServer=$ZOO_ADMINSERVER_ENABLED"
		# ZOO_SERVERS is space-separated: "server.1=host:2888:3888;2181 server.2=...".
		for server in ${ZOO_SERVERS:-server.1=localhost:2888:3888;2181}; do
			echo "$server"
		done
		if [ -n "${ZOO_4LW_COMMANDS_WHITELIST:-}" ]; then
			echo "4lw.commands.whitelist=$ZOO_4LW_COMMANDS_WHITELIST"
		fi
		for line in ${ZOO_CFG_EXTRA:-}; do
			echo "$line"
		done
	} >"$conf"
fi
if [ ! -f "$ZOO_DATA_DIR/myid" ]; then
	echo "${ZOO_MY_ID:-1}" >"$ZOO_DATA_DIR/myid"
fi

if [ "$(id -u)" = 0 ]; then
	# Volumes mounted over the data directories start out owned by root.
	chown -R zookeeper:zookeeper "$ZOO_DATA_DIR" "$ZOO_DATA_LOG_DIR" "$ZOO_LOG_DIR" "$ZOO_CONF_DIR"
	exec setpriv --reuid=zookeeper --regid=zookeeper --init-groups "$@"
fi
exec "$@"
