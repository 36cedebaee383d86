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

# ensure_packages installs ZooKeeper (with a JRE) and kcat when any of them is missing.
ensure_packages() {
	if [ -f "$ZK_JAR" ] && [ -x "$ZK_CLI" ] && command -v java >/dev/null && command -v kcat >/dev/null; then
		return 0
	fi
	log "installing zookeeper and kcat with apt-get"
	as_root apt-get update -qq
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq zookeeper kcat >/dev/null
	[ -f "$ZK_JAR" ] || die "apt-get finished but $ZK_JAR is missing"
}

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
	CLIENT_JVMFLAGS="${CLIENT_JVMFLAGS:-} -cp $cp" JMXDISABLE=true "$ZK_CLI" "$@"
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

# port_open succeeds when something accepts TCP connections on 127.0.0.1:$1.
port_open() {
	# shellcheck disable=SC2016 # $1 belongs to the inner script
	timeout 1 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "$1" 2>/dev/null
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
