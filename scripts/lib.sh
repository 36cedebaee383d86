# shellcheck shell=bash
# Helpers shared by scripts/*.sh. Source it from the repository root; it does nothing on its own.

# Where the Debian "zookeeper" package installs.
ZK_JAR=/usr/share/java/zookeeper.jar
ZK_CLI=/usr/share/zookeeper/bin/zkCli.sh
SLF4J_NOP=/usr/share/java/slf4j-nop.jar

log() { printf '%s\n' "$*" >&2; }
die() {
	log "error: $*"
	exit 1
}

# as_root runs a command as root, through sudo only when we are not root already.
as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	else
		sudo "$@"
	fi
}

# apt_install PACKAGE... installs Debian packages, quietly.
apt_install() {
	as_root apt-get update -qq
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# ensure_packages installs ZooKeeper (with a JRE) and kcat when any of them is missing.
ensure_packages() {
	if [ -f "$ZK_JAR" ] && [ -x "$ZK_CLI" ] && command -v java >/dev/null && command -v kcat >/dev/null; then
		return 0
	fi
	log "installing zookeeper and kcat with apt-get"
	apt_install zookeeper kcat
	[ -f "$ZK_JAR" ] || die "apt-get finished but $ZK_JAR is missing"
}

# ensure_command NAME installs the Debian package of that name when no such command is found.
ensure_command() {
	command -v "$1" >/dev/null && return 0
	log "installing $1 with apt-get"
	apt_install "$1"
}

# ensure_test_tools installs what only the full check needs, beyond ensure_packages: shellcheck,
# librdkafka's Python client for the transaction tests and kafka-python (with the lz4 and xxhash modules
# its 0.8-style LZ4 framing needs) for the old-client tests (Debian's, so /usr/bin/python3 has them), and
# Debian's headless Chromium for the dashboard's browser tests (package ui).
ensure_test_tools() {
	command -v shellcheck >/dev/null && /usr/bin/python3 -c 'import confluent_kafka, kafka, lz4, xxhash' 2>/dev/null &&
		command -v chromium >/dev/null && return 0
	log "installing shellcheck, Python's Kafka clients and chromium with apt-get"
	apt_install shellcheck python3-confluent-kafka python3-kafka python3-lz4 python3-xxhash chromium
}

# ensure_docker starts the Docker engine when its client is installed but no engine answers (a CI run
# begins with none of a session's processes); it does nothing where Docker is not installed, and the
# Docker tests then say so themselves. The engine's own output goes to data/dockerd.log.
ensure_docker() {
	command -v docker >/dev/null && command -v dockerd >/dev/null || return 0
	docker info >/dev/null 2>&1 && return 0
	log "starting the Docker engine (dockerd), log in data/dockerd.log"
	mkdir -p data
	# shellcheck disable=SC2016 # $1 belongs to the inner shell
	as_root sh -c 'nohup dockerd >>"$1" 2>&1 </dev/null &' _ "$PWD/data/dockerd.log"
	wait_until 60 "the Docker engine to answer" docker_answers
}

docker_answers() { docker info >/dev/null 2>&1; }

# ensure_go puts the Go toolchain on PATH (it lives in /usr/local/go on the project machines).
ensure_go() {
	if ! command -v go >/dev/null && [ -x /usr/local/go/bin/go ]; then
		PATH=$PATH:/usr/local/go/bin
	fi
	command -v go >/dev/null || die "go is not installed (expected /usr/local/go/bin/go)"
}

# zk_cli runs the real ZooKeeper CLI. The -cp in CLIENT_JVMFLAGS comes after zkCli.sh's own and
# wins, adding slf4j-nop so SLF4J does not print its "no binding" warning.
zk_cli() {
	local cp=/etc/zookeeper/conf:$ZK_JAR
	[ -f "$SLF4J_NOP" ] && cp=$cp:$SLF4J_NOP
	# KAFKA_OPTS reaches the JVM as kafka-run-class.sh passes it: a JAAS file's Client login too.
	CLIENT_JVMFLAGS="${CLIENT_JVMFLAGS:-} ${KAFKA_OPTS:-} -cp $cp" JMXDISABLE=true "$ZK_CLI" "$@"
}

# zk_srvr prints the answer of ZooKeeper's "srvr" four-letter word on 127.0.0.1:$1.
zk_srvr() {
	# shellcheck disable=SC2016 # $1 belongs to the inner script
	timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && printf srvr >&3 && cat <&3' _ "$1" 2>/dev/null
}

# zk_serving succeeds once ZooKeeper on 127.0.0.1:$1 accepts sessions ("ruok" answers earlier).
zk_serving() {
	zk_srvr "$1" | grep -q '^Mode:'
}

# port_open succeeds when something accepts TCP connections on port $1 of $2 (default 127.0.0.1).
port_open() {
	# shellcheck disable=SC2016 # $1 and $2 belong to the inner script
	timeout 1 bash -c 'exec 3<>"/dev/tcp/$2/$1"' _ "$1" "${2:-127.0.0.1}" 2>/dev/null
}

# wait_until SECONDS DESCRIPTION COMMAND... polls COMMAND every 0.2s until it succeeds.
wait_until() {
	local limit=$1 what=$2
	local deadline=$((SECONDS + limit))
	shift 2
	until "$@"; do
		if ((SECONDS >= deadline)); then
			log "timed out after ${limit}s waiting for $what"
			return 1
		fi
		sleep 0.2
	done
}

# alive PID [PATTERN] succeeds when PID is a live (not zombie) process whose command line contains
# PATTERN, so a stale pid file whose pid was reused does not count.
alive() {
	local pid=$1 pattern=${2:-} state
	[ -n "$pid" ] && [ -r "/proc/$pid/status" ] || return 1
	state=$(awk '/^State:/ { print $2 }' "/proc/$pid/status" 2>/dev/null) || return 1
	[ "$state" != Z ] || return 1
	[ -z "$pattern" ] || tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$pattern"
}

# exec_zkafka ARGS... replaces the shell with bin/zkafka ARGS, building bin/zkafka first when it is
# missing or older than a Go source file (so a tool added since the last build is there). It leaves
# the working directory alone, so file arguments stay relative to the caller's.
exec_zkafka() {
	local root
	root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	if [ ! -x "$root/bin/zkafka" ] || [ -n "$(find "$root" -path "$root/data" -prune -o -name '*.go' -newer "$root/bin/zkafka" -print -quit)" ]; then
		ensure_go
		log "building bin/zkafka"
		(cd "$root" && go build -o bin/zkafka ./cmd/zkafka) || die "build of ./cmd/zkafka failed"
	fi
	exec "$root/bin/zkafka" "$@"
}

# Processes started in the background: each records its pid in $RUN/NAME.pid and logs to
# $LOGS/NAME.log (the caller sets RUN and LOGS).

# pid_of NAME PATTERN prints the pid recorded for NAME if that process is still running.
pid_of() {
	local file=$RUN/$1.pid pid
	[ -f "$file" ] || return 0
	pid=$(<"$file")
	if alive "$pid" "$2"; then
		echo "$pid"
	fi
}

# start_detached NAME COMMAND... starts COMMAND in its own session (so Ctrl-C here or closing the
# terminal does not reach it), logging to $LOGS/NAME.log and recording its pid.
start_detached() {
	local name=$1
	shift
	mkdir -p "$RUN" "$LOGS"
	setsid "$@" >>"$LOGS/$name.log" 2>&1 </dev/null &
	echo $! >"$RUN/$name.pid"
}

# stop NAME PATTERN TIMEOUT sends SIGTERM, waits up to TIMEOUT seconds, then sends SIGKILL.
stop() {
	local name=$1 pattern=$2 timeout=$3 pid
	pid=$(pid_of "$name" "$pattern")
	if [ -z "$pid" ]; then
		rm -f "$RUN/$name.pid"
		return 0
	fi
	log "stopping $name (pid $pid)"
	kill -TERM "$pid" 2>/dev/null || true
	# A paused (SIGSTOPped) process only acts on SIGTERM once continued.
	kill -CONT "$pid" 2>/dev/null || true
	if ! wait_until "$timeout" "$name to exit" gone "$pid" "$pattern"; then
		log "$name did not exit after SIGTERM; sending SIGKILL"
		kill_group "$pid"
		wait_until 10 "$name to die" gone "$pid" "$pattern"
	fi
	rm -f "$RUN/$name.pid"
}
gone() { ! alive "$@"; }

# kill_group sends SIGKILL to everything in the process group that start_detached's setsid made
# (its leader is PID), so no child of a crashed process survives.
kill_group() {
	kill -KILL -- "-$1" 2>/dev/null || kill -KILL "$1" 2>/dev/null || true
}

# await_start NAME SECONDS CHECK... waits until CHECK succeeds, failing at once (with the
# end of NAME's log) if the process exits first. Until it has exec'd, the pid start_detached just
# recorded is a forked shell whose command line does not name the process yet, so liveness here is
# that pid's alone: a pid recorded a moment ago cannot have been reused.
await_start() {
	local name=$1 limit=$2 pid
	local deadline=$((SECONDS + limit))
	shift 2
	pid=$(<"$RUN/$name.pid")
	until "$@"; do
		if ! alive "$pid"; then
			tail_log "$name"
			die "$name exited during start-up"
		fi
		if ((SECONDS >= deadline)); then
			tail_log "$name"
			die "$name is not ready after ${limit}s"
		fi
		sleep 0.2
	done
}

tail_log() {
	log "--- last lines of $LOGS/$1.log ---"
	tail -n 20 "$LOGS/$1.log" >&2 || true
}
