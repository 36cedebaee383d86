#!/usr/bin/env bash
# A local zkafka cluster: ZooKeeper on 127.0.0.1:2181 and brokers 1-3 on 9092-9094.
# Everything it writes (data, logs, pid files) lives under ./data.
#
#   ./scripts/cluster.sh up           install ZooKeeper if needed, build, start all, wait for registration
#   ./scripts/cluster.sh up --secure  the same with SASL_SSL, SCRAM users and ACLs (docs/SECURITY.md)
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
# A ZooKeeper ensemble instead of one server: ZKAFKA_ZK_SERVERS=3 (or 5) runs servers 1-3 on client
# ports ZK_PORT, ZK_PORT+1, ZK_PORT+2, their quorum ports next and their election ports after those;
# zk then names all of them and zkI one (`kill zk2`, `pause zk1`), and status shows each one's mode.
#
# A secure cluster (up --secure) stays secure until reset: its brokers listen on SASL_SSL with the
# settings of config/server-secure.properties, and ./data/secure holds its CA, the brokers' keys and
# certificates and the client configs of its users (admin, a super user, and alice), made once with
# scripts/secure-files.sh; the users' SCRAM credentials are created in ZooKeeper before the brokers
# first start.
#
# A second cluster beside the first: ZKAFKA_BASE_PORT (broker N on BASE+N-1, default 9092),
# ZKAFKA_ZK_PORT (default 2181), ZKAFKA_DATA (default ./data); ZKAFKA_BIN runs that zkafka binary
# instead of building bin/zkafka.
#
# ZK_SERVER_HEAP is ZooKeeper's heap in MB, as in ZooKeeper's own zkEnv.sh (default 128 here, enough
# for a few thousand partitions; `zkafka bench partitions N` reports what N partitions need).
#
# A broker with a $DATA/run/broker-N.netns file ("NAMESPACE ADDRESS ZOOKEEPER-ADDRESS", written by
# `zkafka chaos`, which also creates the namespace) starts inside that network namespace, listening on
# and advertising ADDRESS, and reaches ZooKeeper at ZOOKEEPER-ADDRESS. An ensemble server with a
# $DATA/run/zookeeper-I.cgroup file (a cgroup v2 directory, also written by `zkafka chaos`) starts in
# that cgroup, so nftables rules can tell its quorum traffic from the other servers'.
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

# The secure cluster's files, and its users as USER:PASSWORD (teaching passwords, as in Kafka's
# documentation; admin's is also the brokers' login in config/server-secure.properties).
SECURE=$DATA/secure
SECURE_USERS=(admin:admin-secret alice:alice-secret)
# The brokers' own login to ZooKeeper (SASL DIGEST-MD5): ZooKeeper's JAAS Server context knows it,
# and the brokers find it in the Client context of the file KAFKA_OPTS names, as 2.8's did.
ZK_LOGIN=kafka:kafka-secret
ZK_CLIENT_JAAS=$SECURE/zookeeper_client_jaas.conf
# SECURE_UP is set by up --secure, before the cluster's files exist.
SECURE_UP=

broker_port() { echo $((BASE_PORT + $1 - 1)); }
broker_pattern() { echo "log.dirs=$DATA/broker-$1"; }

# ZooKeeper: one server (id 0, named "zookeeper", data in $DATA/zookeeper, as before ensembles
# existed) or an ensemble of ZK_SERVERS (ids 1..N, "zookeeper-I", data in $DATA/zookeeper-I).
ZK_SERVERS=${ZKAFKA_ZK_SERVERS:-1}
case $ZK_SERVERS in
1 | 3 | 5) ;;
*) die "ZKAFKA_ZK_SERVERS=$ZK_SERVERS: give 1 (one server), 3 or 5 (an ensemble)" ;;
esac
ZK_HEAP=${ZK_SERVER_HEAP:-128}
[[ $ZK_HEAP =~ ^[1-9][0-9]*$ ]] || die "ZK_SERVER_HEAP=$ZK_HEAP: give ZooKeeper's heap in MB, e.g. 512"
if [ "$ZK_SERVERS" -eq 1 ]; then
	ZK_IDS=(0)
else
	mapfile -t ZK_IDS < <(seq 1 "$ZK_SERVERS")
fi
zk_name() { if [ "$1" -eq 0 ]; then echo zookeeper; else echo "zookeeper-$1"; fi; }
zk_label() { if [ "$1" -eq 0 ]; then echo zookeeper; else echo "zookeeper $1"; fi; }
zk_client_port() { echo $((ZK_PORT + ${1/#0/1} - 1)); }
# The patterns name this cluster's data dir, so a pid file never matches another cluster's process.
zk_pattern() { echo "$DATA/$(zk_name "$1")/zoo.cfg"; }
# zk_connect HOST prints the connect string of every server, reached at HOST.
zk_connect() {
	local i out=
	for i in "${ZK_IDS[@]}"; do out+=${out:+,}$1:$(zk_client_port "$i"); done
	echo "$out"
}

# zk_layout refuses a data dir that holds the other layout's ZooKeeper data: its brokers' cluster id
# and topics live in that ZooKeeper, and a new empty one would not match them.
zk_layout() {
	if [ "$ZK_SERVERS" -eq 1 ] && [ -d "$DATA/zookeeper-1" ]; then
		die "$DATA holds a ZooKeeper ensemble's data (zookeeper-1); set ZKAFKA_ZK_SERVERS as it was, or reset"
	fi
	if [ "$ZK_SERVERS" -gt 1 ] && [ -d "$DATA/zookeeper" ]; then
		die "$DATA holds a single ZooKeeper's data (zookeeper); unset ZKAFKA_ZK_SERVERS, or reset"
	fi
}

# zk_configure I writes server I's zoo.cfg (and myid in an ensemble).
zk_configure() {
	local i=$1 dir j
	dir=$DATA/$(zk_name "$i")
	mkdir -p "$dir"
	sed -e "s|@DATA_DIR@|$dir|" -e "s|^clientPort=.*|clientPort=$(zk_client_port "$i")|" \
		config/zookeeper.cfg >"$dir/zoo.cfg"
	if zk_sasl; then
		{
			echo
			echo "# The secure cluster: SASL logins (JAAS Server context in zookeeper_jaas.conf), which ACLs name sasl:<user>."
			echo "authProvider.sasl=org.apache.zookeeper.server.auth.SASLAuthenticationProvider"
		} >>"$dir/zoo.cfg"
		printf 'Server {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n  user_%s="%s";\n};\n' \
			"${ZK_LOGIN%%:*}" "${ZK_LOGIN#*:}" >"$dir/zookeeper_jaas.conf"
	fi
	[ "$i" -ne 0 ] || return 0
	echo "$i" >"$dir/myid"
	{
		echo
		echo "# The ensemble (ZKAFKA_ZK_SERVERS=$ZK_SERVERS): server.N=host:quorum port:election port."
		echo "standaloneEnabled=false"
		for j in "${ZK_IDS[@]}"; do
			echo "server.$j=127.0.0.1:$((ZK_PORT + ZK_SERVERS + j - 1)):$((ZK_PORT + 2 * ZK_SERVERS + j - 1))"
		done
	} >>"$dir/zoo.cfg"
}

# zk_launch I starts server I unless it runs; it does not wait for it.
zk_launch() {
	local i=$1 name pid port cp cg run=()
	name=$(zk_name "$i")
	pid=$(pid_of "$name" "$(zk_pattern "$i")")
	if [ -n "$pid" ]; then
		log "$(zk_label "$i") already running (pid $pid)"
		return 0
	fi
	port=$(zk_client_port "$i")
	if port_open "$port"; then
		die "port $port is in use by a process this script did not start"
	fi
	zk_configure "$i"
	cp=$ZK_JAR
	[ -f "$SLF4J_SIMPLE" ] && cp=$cp:$SLF4J_SIMPLE
	if [ -f "$RUN/$name.cgroup" ]; then
		cg=$(<"$RUN/$name.cgroup")
		# shellcheck disable=SC2016 # $1 belongs to the inner shell
		run=(sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' _ "$cg")
	fi
	log "starting $(zk_label "$i") on 127.0.0.1:$port${cg:+ in cgroup $cg} (log $LOGS/$name.log)"
	local jaas=()
	zk_sasl && jaas=("-Djava.security.auth.login.config=$DATA/$name/zookeeper_jaas.conf")
	start_detached "$name" "${run[@]}" java "-Xmx${ZK_HEAP}m" -cp "$cp" "${jaas[@]}" \
		-Dorg.slf4j.simpleLogger.showDateTime=true \
		-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS \
		org.apache.zookeeper.server.quorum.QuorumPeerMain "$(zk_pattern "$i")"
}

# zk_await I waits until server I serves; an ensemble server serves once it has a quorum.
zk_await() { await_start "$(zk_name "$1")" 30 zk_serving "$(zk_client_port "$1")"; }

# zk_start [I] starts server I, or every server, and waits until it serves.
zk_start() {
	local i ids=("$@")
	[ $# -gt 0 ] || ids=("${ZK_IDS[@]}")
	zk_layout
	for i in "${ids[@]}"; do zk_launch "$i"; done
	for i in "${ids[@]}"; do zk_await "$i"; done
}

zk_stop() { stop "$(zk_name "$1")" "$(zk_pattern "$1")" 10; }

# broker_netns N prints broker N's namespace, address and ZooKeeper address, if it has a namespace.
broker_netns() {
	[ ! -f "$RUN/broker-$1.netns" ] || cat "$RUN/broker-$1.netns"
}

broker_host() {
	local ns host _
	read -r ns host _ <<<"$(broker_netns "$1")"
	echo "${host:-127.0.0.1}"
}

# secure succeeds when this cluster is a secure one: scripts/secure-files.sh writes ca.pem last.
secure() { [ -f "$SECURE/ca.pem" ]; }

# zk_sasl succeeds when ZooKeeper takes SASL logins: on a secure cluster, or one up --secure makes.
zk_sasl() { [ -n "$SECURE_UP" ] || secure; }

# secure_setup makes, once, the secure cluster's files and its users' SCRAM credentials, which must
# be in ZooKeeper before a broker logs in to another: as 2.8's documentation does it, with
# kafka-configs --zookeeper. The credentials come first, so that a cluster with ca.pem is complete.
secure_setup() {
	secure && return 0
	local login user config out
	ensure_command openssl
	rm -rf "$SECURE"
	for login in "${SECURE_USERS[@]}"; do
		user=${login%%:*} config="SCRAM-SHA-256=[iterations=8192,password=${login#*:}]"
		log "creating user $user: kafka-configs --zookeeper $(zk_connect 127.0.0.1) --alter --add-config '$config' --entity-type users --entity-name $user"
		out=$("$BIN" configs --zookeeper "$(zk_connect 127.0.0.1)" --alter --add-config "$config" --entity-type users --entity-name "$user" 2>&1) ||
			die "kafka-configs failed: $out"
	done
	mkdir -p "$SECURE"
	printf 'Client {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n  username="%s"\n  password="%s";\n};\n' \
		"${ZK_LOGIN%%:*}" "${ZK_LOGIN#*:}" >"$ZK_CLIENT_JAAS"
	log "making the CA, the brokers' certificates and the client configs in $SECURE (openssl)"
	scripts/secure-files.sh "$SECURE" "" "${SECURE_USERS[@]}" || {
		rm -rf "$SECURE"
		die "scripts/secure-files.sh failed"
	}
}

# secure_overrides prints the --override words that make broker N a secure one: every property of
# config/server-secure.properties, then its key store and trust store.
secure_overrides() {
	local line
	while IFS= read -r line || [ -n "$line" ]; do
		case $line in '' | '#'* | '!'*) continue ;; esac
		printf '%s\0' --override "$line"
	done <config/server-secure.properties
	printf '%s\0' --override "ssl.keystore.location=$SECURE/broker-$1.pem" --override "ssl.truststore.location=$SECURE/ca.pem"
}

broker_start() {
	local n=$1 pid port ns host zk protocol=PLAINTEXT security=()
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
	if secure; then
		# Its certificate names localhost and 127.0.0.1, not a namespace's address.
		[ -z "$ns" ] || die "broker $n has a network namespace ($RUN/broker-$n.netns): the secure cluster runs without"
		protocol=SASL_SSL
		mapfile -d '' -t security < <(secure_overrides "$n")
		# The brokers log in to ZooKeeper as kafka-run-class.sh would have them: through KAFKA_OPTS.
		run=(env "KAFKA_OPTS=-Djava.security.auth.login.config=$ZK_CLIENT_JAAS" "${run[@]}")
	fi
	log "starting broker $n on $listen:$port${ns:+ in network namespace $ns} (log $LOGS/broker-$n.log)"
	# server-N.properties with this cluster's ports and data dir (the same values by default).
	start_detached "broker-$n" "${run[@]}" broker "config/server-$n.properties" \
		--override "listeners=$protocol://$listen:$port" \
		--override "advertised.listeners=$protocol://$advertise:$port" \
		--override "log.dirs=$DATA/broker-$n" \
		--override "zookeeper.connect=$(zk_connect "${zk:-localhost}")" \
		"${security[@]}"
}

broker_wait() {
	await_start "broker-$1" 60 port_open "$(broker_port "$1")" "$(broker_host "$1")"
}

# registered_brokers prints how many broker ids /brokers/ids lists.
registered_brokers() {
	local last
	last=$(zk_cli -server "$(zk_connect 127.0.0.1)" ls /brokers/ids 2>&1 | tail -n 1)
	case $last in
	\[*\]) tr -cd '0-9,' <<<"$last" | tr ',' '\n' | grep -c . || true ;;
	*) echo 0 ;;
	esac
}

controller_elected() {
	zk_cli -server "$(zk_connect 127.0.0.1)" get /controller 2>&1 | grep -q '"brokerid"'
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
	case ${1:-} in
	"" | --secure) ;;
	*) usage ;;
	esac
	[ -z "${1:-}" ] || SECURE_UP=1
	local n
	if [ -n "${1:-}" ] && ! secure; then
		# A running broker would be left as it is: in PLAINTEXT.
		for n in "${BROKERS[@]}"; do
			[ -z "$(pid_of "broker-$n" "$(broker_pattern "$n")")" ] ||
				die "broker $n runs without security; ./scripts/cluster.sh down first, then up --secure"
		done
	fi
	ensure_packages
	zk_start
	if ! build; then
		log "build of ./cmd/zkafka failed: zookeeper is running on $(zk_connect 127.0.0.1), no broker was started"
		log "fix the build and run ./scripts/cluster.sh up again, or ./scripts/cluster.sh down"
		exit 1
	fi
	[ -z "${1:-}" ] || secure_setup
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
	if secure; then
		secure_hints "$env"
		return
	fi
	cat <<-MSG
		zkafka is up: ZooKeeper $(zk_connect 127.0.0.1), brokers localhost:$(broker_port 1), localhost:$(broker_port 2), localhost:$(broker_port 3)

		  kcat -b localhost:$(broker_port 1) -L                         # cluster metadata
		  ./scripts/zookeeper-shell.sh localhost:$ZK_PORT ls /brokers/ids
		  ./scripts/zookeeper-shell.sh localhost:$ZK_PORT get /controller
		  ${env}./bin/zkafka ui --zookeeper localhost:$ZK_PORT --bootstrap-server localhost:$(broker_port 1)   # dashboard on http://127.0.0.1:8080/ (--allow-actions: kill, pause, restart from the page)
		  ${env}./scripts/cluster.sh status | logs [N] | kill N | pause N | resume N | restart N | down
	MSG
}

# secure_hints ENV prints what cmd_up prints for a secure cluster: the same commands, each logging
# in with a client config of $SECURE (named from the checkout when it is inside it).
secure_hints() {
	local env=$1 dir=${SECURE#"$ROOT"/}
	cat <<-MSG
		zkafka is up, secure: ZooKeeper $(zk_connect 127.0.0.1), brokers localhost:$(broker_port 1), localhost:$(broker_port 2), localhost:$(broker_port 3) (SASL_SSL, SCRAM-SHA-256)
		users admin (super user) and alice; their client configs are in $dir

		  kcat -F $dir/admin.kcat.conf -b localhost:$(broker_port 1) -L       # cluster metadata, as admin
		  ./scripts/kafka-topics.sh --bootstrap-server localhost:$(broker_port 1) --command-config $dir/admin.properties --list
		  ./scripts/kafka-acls.sh --bootstrap-server localhost:$(broker_port 1) --command-config $dir/admin.properties --list
		  ./scripts/zookeeper-shell.sh localhost:$ZK_PORT get /config/users/alice
		  ${env}./scripts/cluster.sh status | logs [N] | kill N | pause N | resume N | restart N | down
	MSG
}

# cluster_env prints the ZKAFKA_* settings this cluster was started with, as a command prefix, so that
# a hint printed for it reaches this cluster and not the default one.
cluster_env() {
	local v
	for v in ZKAFKA_BASE_PORT ZKAFKA_ZK_PORT ZKAFKA_ZK_SERVERS ZKAFKA_DATA ZKAFKA_BIN; do
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
	for i in "${ZK_IDS[@]}"; do zk_stop "$i"; done
	log "cluster stopped"
}

cmd_status() {
	local pid mode n i port w=10
	# Wide enough for "zookeeper-1" with an ensemble; as before ensembles existed without one.
	[ "$ZK_SERVERS" -eq 1 ] || w=12
	printf "%-${w}s %-8s %-8s %s\n" PROCESS STATE PID PORT
	for i in "${ZK_IDS[@]}"; do
		pid=$(pid_of "$(zk_name "$i")" "$(zk_pattern "$i")")
		port=$(zk_client_port "$i")
		mode=
		if [ -n "$pid" ] && [ "$(state_of "$pid")" != paused ]; then
			mode=$(zk_srvr "$port" | sed -n 's/^Mode: //p')
		fi
		printf "%-${w}s %-8s %-8s %s\n" "$(zk_name "$i")" "$(state_of "$pid")" "${pid:--}" "$port${mode:+ ($mode)}"
	done
	for n in "${BROKERS[@]}"; do
		pid=$(pid_of "broker-$n" "$(broker_pattern "$n")")
		printf "%-${w}s %-8s %-8s %s\n" "broker-$n" "$(state_of "$pid")" "${pid:--}" "$(broker_port "$n")"
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
	zk | zookeeper) set -- "$LOGS"/zookeeper*.log ;;
	zk[0-9]*)
		zk_select "$which"
		set -- "$LOGS/$(zk_name "${ZK_SEL[0]}").log"
		;;
	*) check_broker "$which" && set -- "$LOGS/broker-$which.log" ;;
	esac
	[ -e "$1" ] || die "no logs yet under $LOGS"
	exec tail -n 50 -F "$@"
}

# zk_select zk|zkI sets ZK_SEL to the ids of the servers it names: every one, or server I of the
# ensemble.
zk_select() {
	local i=${1#zk}
	case $1 in
	zk | zookeeper)
		ZK_SEL=("${ZK_IDS[@]}")
		return 0
		;;
	esac
	if [ "$ZK_SERVERS" -gt 1 ] && [[ $i =~ ^[0-9]+$ ]] && ((i >= 1 && i <= ZK_SERVERS)); then
		ZK_SEL=("$i")
		return 0
	fi
	if [ "$ZK_SERVERS" -eq 1 ]; then
		die "unknown target '$1': one ZooKeeper runs (zk); ZKAFKA_ZK_SERVERS=3 runs an ensemble"
	fi
	die "unknown target '$1' (ZooKeeper servers: zk1..zk$ZK_SERVERS, or zk for all)"
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
	zk*)
		local i
		zk_select "$n"
		for i in "${ZK_SEL[@]}"; do kill_process "$(zk_name "$i")" "$(zk_pattern "$i")" "$(zk_label "$i")"; done
		;;
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

# signal_target N|zk|zkI SIGNAL sends SIGNAL to the process group of broker N or of each ZooKeeper
# server named, and says so.
signal_target() {
	local which=${1:-} sig=$2 i
	case $which in
	zk*)
		zk_select "$which"
		for i in "${ZK_SEL[@]}"; do
			signal_one "$(zk_name "$i")" "$(zk_pattern "$i")" "$sig" "$which"
		done
		;;
	*)
		check_broker "$which"
		signal_one "broker-$which" "$(broker_pattern "$which")" "$sig" "$which"
		;;
	esac
}

signal_one() {
	local name=$1 pattern=$2 sig=$3 target=$4 pid
	pid=$(pid_of "$name" "$pattern")
	[ -n "$pid" ] || die "$name is not running"
	kill "-$sig" -- "-$pid" 2>/dev/null || kill "-$sig" "$pid"
	case $sig in
	STOP) log "paused $name (pid $pid) with SIGSTOP; ./scripts/cluster.sh resume $target continues it" ;;
	*) log "resumed $name (pid $pid) with SIG$sig" ;;
	esac
}

cmd_pause() { signal_target "${1:-}" STOP; }

cmd_resume() { signal_target "${1:-}" CONT; }

cmd_start() {
	local n=${1:-}
	case $n in
	zk*)
		zk_select "$n"
		zk_start "${ZK_SEL[@]}"
		;;
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
	zk*)
		local i
		zk_select "$n"
		for i in "${ZK_SEL[@]}"; do
			zk_stop "$i"
			zk_start "$i"
			log "$(zk_label "$i") restarted"
		done
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
	sed -n '2,30s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
	exit 2
}

case ${1:-} in
up) cmd_up "${2:-}" ;;
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
