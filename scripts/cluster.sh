#!/usr/bin/env bash
# A local zkafka cluster: ZooKeeper on 127.0.0.1:2181 and brokers 1-3 on 9092-9094.
# Everything it writes (data, logs, pid files) lives under ./data.
#
#   ./scripts/cluster.sh up           install ZooKeeper if needed, build, start all, wait for registration
#   ./scripts/cluster.sh down         stop the brokers (SIGTERM, then SIGKILL), then ZooKeeper
#   ./scripts/cluster.sh status       each process: running, paused or stopped, pid, port
#   ./scripts/cluster.sh logs [N|zk]  follow all logs, broker N's, or ZooKeeper's
#   ./scripts/cluster.sh kill N|zk    kill -9 broker N or ZooKeeper (a crash)
#   ./scripts/cluster.sh start N|zk   start broker N or ZooKeeper again after a kill or a stop
#   ./scripts/cluster.sh stop N       stop broker N (SIGTERM: a controlled shutdown)
#   ./scripts/cluster.sh pause N|zk   SIGSTOP broker N or ZooKeeper: alive but silent, its session times out
#   ./scripts/cluster.sh resume N|zk  SIGCONT it again
#   ./scripts/cluster.sh restart N|zk stop broker N or ZooKeeper (SIGTERM) and start it again
#   ./scripts/cluster.sh reset        down, then delete ./data (ZooKeeper's and the brokers' data together)
#
# A second cluster beside the first: ZKAFKA_BASE_PORT (broker N on BASE+N-1, default 9092),
# ZKAFKA_ZK_PORT (default 2181), ZKAFKA_DATA (default ./data); ZKAFKA_BIN runs that zkafka binary
# instead of building bin/zkafka.
#
# A broker with a $DATA/run/broker-N.netns file ("NAMESPACE ADDRESS ZOOKEEPER-ADDRESS", written by
# `zkafka chaos`, which also creates the namespace) starts inside that network namespace, listening on
# and advertising ADDRESS, and reaches ZooKeeper at ZOOKEEPER-ADDRESS.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

ROOT=$PWD
DATA=${ZKAFKA_DATA:-$ROOT/data}
case $DATA in /*) ;; *) DATA=$ROOT/$DATA ;; esac
RUN=$DATA/run
LOGS=$DATA/logs
BIN=${ZKAFKA_BIN:-$ROOT/bin/zkafka}
ZK_PORT=${ZKAFKA_ZK_PORT:-2181}
BASE_PORT=${ZKAFKA_BASE_PORT:-9092}
BROKERS=(1 2 3)
BROKER_STOP_TIMEOUT=30
SLF4J_SIMPLE=/usr/share/java/slf4j-simple.jar

broker_port() { echo $((BASE_PORT + $1 - 1)); }
# The patterns name this cluster's data dir, so a pid file never matches another cluster's process.
ZK_PATTERN="$DATA/zookeeper/zoo.cfg"
broker_pattern() { echo "log.dirs=$DATA/broker-$1"; }

zk_start() {
	local pid cp
	pid=$(pid_of zookeeper "$ZK_PATTERN")
	if [ -n "$pid" ]; then
		log "zookeeper already running (pid $pid)"
		return 0
	fi
	if port_open "$ZK_PORT"; then
		die "port $ZK_PORT is in use by a process this script did not start"
	fi
	mkdir -p "$DATA/zookeeper"
	sed -e "s|@DATA_DIR@|$DATA/zookeeper|" -e "s|^clientPort=.*|clientPort=$ZK_PORT|" \
		config/zookeeper.cfg >"$DATA/zookeeper/zoo.cfg"
	cp=$ZK_JAR
	[ -f "$SLF4J_SIMPLE" ] && cp=$cp:$SLF4J_SIMPLE
	log "starting zookeeper on 127.0.0.1:$ZK_PORT (log $LOGS/zookeeper.log)"
	start_detached zookeeper java -Xmx128m -cp "$cp" \
		-Dorg.slf4j.simpleLogger.showDateTime=true \
		-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS \
		org.apache.zookeeper.server.quorum.QuorumPeerMain "$DATA/zookeeper/zoo.cfg"
	await_start zookeeper 30 zk_serving "$ZK_PORT"
}

# broker_netns N prints broker N's namespace, address and ZooKeeper address, if it has a namespace.
broker_netns() {
	[ ! -f "$RUN/broker-$1.netns" ] || cat "$RUN/broker-$1.netns"
}

broker_host() {
	local ns host _
	read -r ns host _ <<<"$(broker_netns "$1")"
	echo "${host:-127.0.0.1}"
}

broker_start() {
	local n=$1 pid port ns host zk
	port=$(broker_port "$n")
	pid=$(pid_of "broker-$n" "$(broker_pattern "$n")")
	if [ -n "$pid" ]; then
		log "broker $n already running (pid $pid)"
		return 0
	fi
	[ -x "$BIN" ] || die "$BIN is missing; run ./scripts/cluster.sh up"
	local run=("$BIN") listen=127.0.0.1 advertise=localhost zk=localhost
	read -r ns host zk <<<"$(broker_netns "$n")"
	if [ -n "$ns" ]; then
		run=(ip netns exec "$ns" "$BIN")
		listen=$host advertise=$host
	fi
	if port_open "$port" "$listen"; then
		die "port $port (broker $n) is in use by a process this script did not start"
	fi
	log "starting broker $n on $listen:$port${ns:+ in network namespace $ns} (log $LOGS/broker-$n.log)"
	# server-N.properties with this cluster's ports and data dir (the same values by default).
	start_detached "broker-$n" "${run[@]}" broker "config/server-$n.properties" \
		--override "listeners=PLAINTEXT://$listen:$port" \
		--override "advertised.listeners=PLAINTEXT://$advertise:$port" \
		--override "log.dirs=$DATA/broker-$n" \
		--override "zookeeper.connect=${zk:-localhost}:$ZK_PORT"
}

broker_wait() {
	await_start "broker-$1" 60 port_open "$(broker_port "$1")" "$(broker_host "$1")"
}

# registered_brokers prints how many broker ids /brokers/ids lists.
registered_brokers() {
	local last
	last=$(zk_cli -server "127.0.0.1:$ZK_PORT" ls /brokers/ids 2>&1 | tail -n 1)
	case $last in
	\[*\]) tr -cd '0-9,' <<<"$last" | tr ',' '\n' | grep -c . || true ;;
	*) echo 0 ;;
	esac
}

controller_elected() {
	zk_cli -server "127.0.0.1:$ZK_PORT" get /controller 2>&1 | grep -q '"brokerid"'
}

all_registered() { [ "$(registered_brokers)" -eq "${#BROKERS[@]}" ]; }

build() {
	if [ -n "${ZKAFKA_BIN:-}" ]; then
		[ -x "$BIN" ] || die "ZKAFKA_BIN=$BIN is not an executable"
		return 0
	fi
	ensure_go
	log "building bin/zkafka"
	mkdir -p "$ROOT/bin"
	go build -o "$BIN" ./cmd/zkafka
}

cmd_up() {
	ensure_packages
	zk_start
	if ! build; then
		log "build of ./cmd/zkafka failed: zookeeper is running on 127.0.0.1:$ZK_PORT, no broker was started"
		log "fix the build and run ./scripts/cluster.sh up again, or ./scripts/cluster.sh down"
		exit 1
	fi
	local n
	# The first broker alone until a controller is elected: on a fresh cluster, the controller is
	# broker 1 every time, not whichever broker won a race.
	broker_start "${BROKERS[0]}"
	broker_wait "${BROKERS[0]}"
	if ! wait_until 60 "a controller in /controller" controller_elected; then
		die "broker ${BROKERS[0]} is listening but no controller was elected"
	fi
	for n in "${BROKERS[@]:1}"; do broker_start "$n"; done
	for n in "${BROKERS[@]:1}"; do broker_wait "$n"; done
	if ! wait_until 60 "${#BROKERS[@]} brokers in /brokers/ids" all_registered; then
		die "brokers are listening but /brokers/ids lists $(registered_brokers) of ${#BROKERS[@]}"
	fi
	local env
	env=$(cluster_env)
	cat <<-MSG
		zkafka is up: ZooKeeper 127.0.0.1:$ZK_PORT, brokers localhost:$(broker_port 1), localhost:$(broker_port 2), localhost:$(broker_port 3)

		  kcat -b localhost:$(broker_port 1) -L                         # cluster metadata
		  ./scripts/zookeeper-shell.sh localhost:$ZK_PORT ls /brokers/ids
		  ./scripts/zookeeper-shell.sh localhost:$ZK_PORT get /controller
		  ${env}./bin/zkafka ui --zookeeper localhost:$ZK_PORT --bootstrap-server localhost:$(broker_port 1)   # dashboard on http://127.0.0.1:8080/ (--allow-actions: kill, pause, restart from the page)
		  ${env}./scripts/cluster.sh status | logs [N] | kill N | pause N | resume N | restart N | down
	MSG
}

# cluster_env prints the ZKAFKA_* settings this cluster was started with, as a command prefix, so that
# a hint printed for it reaches this cluster and not the default one.
cluster_env() {
	local v
	for v in ZKAFKA_BASE_PORT ZKAFKA_ZK_PORT ZKAFKA_DATA ZKAFKA_BIN; do
		if [ -n "${!v:-}" ]; then
			printf '%s=%q ' "$v" "${!v}"
		fi
	done
}

cmd_down() {
	local i
	# One at a time, last first, so each broker's controlled shutdown can hand over its leaders.
	for ((i = ${#BROKERS[@]} - 1; i >= 0; i--)); do
		stop "broker-${BROKERS[i]}" "$(broker_pattern "${BROKERS[i]}")" "$BROKER_STOP_TIMEOUT"
	done
	stop zookeeper "$ZK_PATTERN" 10
	log "cluster stopped"
}

cmd_status() {
	local pid mode n
	printf '%-10s %-8s %-8s %s\n' PROCESS STATE PID PORT
	pid=$(pid_of zookeeper "$ZK_PATTERN")
	if [ -n "$pid" ]; then
		mode=
		[ "$(state_of "$pid")" = paused ] || mode=$(zk_srvr "$ZK_PORT" | sed -n 's/^Mode: //p')
		printf '%-10s %-8s %-8s %s\n' zookeeper "$(state_of "$pid")" "$pid" "$ZK_PORT ${mode:+($mode)}"
	else
		printf '%-10s %-8s %-8s %s\n' zookeeper stopped - "$ZK_PORT"
	fi
	for n in "${BROKERS[@]}"; do
		pid=$(pid_of "broker-$n" "$(broker_pattern "$n")")
		printf '%-10s %-8s %-8s %s\n' "broker-$n" "$(state_of "$pid")" "${pid:--}" "$(broker_port "$n")"
	done
}

# state_of PID prints running, paused (SIGSTOP) or stopped (no pid).
state_of() {
	if [ -z "$1" ]; then
		echo stopped
	elif [ "$(awk '/^State:/ { print $2 }' "/proc/$1/status" 2>/dev/null)" = T ]; then
		echo paused
	else
		echo running
	fi
}

cmd_logs() {
	local which=${1:-}
	case $which in
	"") set -- "$LOGS"/*.log ;;
	zk | zookeeper) set -- "$LOGS/zookeeper.log" ;;
	*) check_broker "$which" && set -- "$LOGS/broker-$which.log" ;;
	esac
	[ -e "$1" ] || die "no logs yet under $LOGS"
	exec tail -n 50 -F "$@"
}

check_broker() {
	local n
	for n in "${BROKERS[@]}"; do
		[ "$1" = "$n" ] && return 0
	done
	die "unknown broker '$1' (brokers: ${BROKERS[*]})"
}

cmd_kill() {
	local n=${1:-}
	case $n in
	zk | zookeeper) kill_process zookeeper "$ZK_PATTERN" zookeeper ;;
	*)
		check_broker "$n"
		kill_process "broker-$n" "$(broker_pattern "$n")" "broker $n"
		;;
	esac
}

# kill_process NAME PATTERN LABEL kill -9s the process recorded as NAME (LABEL in messages) and waits
# until it is gone.
kill_process() {
	local name=$1 pattern=$2 label=$3 pid
	pid=$(pid_of "$name" "$pattern")
	[ -n "$pid" ] || die "$label is not running"
	kill_group "$pid"
	wait_until 10 "$label to die" gone "$pid" "$pattern"
	rm -f "$RUN/$name.pid"
	log "killed $label (pid $pid) with SIGKILL"
}

# signal_target NAME|zk SIGNAL sends SIGNAL to the process group of broker N or of ZooKeeper.
signal_target() {
	local which=${1:-} sig=$2 name pattern pid
	case $which in
	zk | zookeeper) name=zookeeper pattern=$ZK_PATTERN ;;
	*)
		check_broker "$which"
		name=broker-$which pattern=$(broker_pattern "$which")
		;;
	esac
	pid=$(pid_of "$name" "$pattern")
	[ -n "$pid" ] || die "$name is not running"
	kill "-$sig" -- "-$pid" 2>/dev/null || kill "-$sig" "$pid"
	echo "$name $pid"
}

cmd_pause() {
	local target
	target=$(signal_target "${1:-}" STOP)
	log "paused ${target% *} (pid ${target#* }) with SIGSTOP; ./scripts/cluster.sh resume ${1:-} continues it"
}

cmd_resume() {
	local target
	target=$(signal_target "${1:-}" CONT)
	log "resumed ${target% *} (pid ${target#* }) with SIGCONT"
}

cmd_start() {
	local n=${1:-}
	case $n in
	zk | zookeeper) zk_start ;;
	*)
		check_broker "$n"
		broker_start "$n"
		broker_wait "$n"
		;;
	esac
}

cmd_stop() {
	check_broker "${1:-}"
	stop "broker-$1" "$(broker_pattern "$1")" "$BROKER_STOP_TIMEOUT"
}

cmd_restart() {
	local n=${1:-}
	case $n in
	zk | zookeeper)
		stop zookeeper "$ZK_PATTERN" 10
		zk_start
		log "zookeeper restarted"
		return
		;;
	esac
	check_broker "$n"
	stop "broker-$n" "$(broker_pattern "$n")" "$BROKER_STOP_TIMEOUT"
	broker_start "$n"
	broker_wait "$n"
	log "broker $n restarted"
}

cmd_reset() {
	cmd_down
	rm -rf "$DATA"
	log "deleted $DATA"
}

usage() {
	sed -n '2,19s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
	exit 2
}

case ${1:-} in
up) cmd_up ;;
down)
	cmd_down
	log "data kept in $DATA (./scripts/cluster.sh reset deletes it)"
	;;
status) cmd_status ;;
logs) cmd_logs "${2:-}" ;;
kill) cmd_kill "${2:-}" ;;
pause) cmd_pause "${2:-}" ;;
resume) cmd_resume "${2:-}" ;;
start) cmd_start "${2:-}" ;;
stop) cmd_stop "${2:-}" ;;
restart) cmd_restart "${2:-}" ;;
reset) cmd_reset ;;
*) usage ;;
esac
