#!/usr/bin/env bash
# Builds every image the compose cluster needs without a container registry, from this repository and
# Debian's packages alone:
#
#   zkafka:offline              the broker: a static zkafka (CGO_ENABLED=0) on an empty base (docker/broker)
#   zkafka-zookeeper:offline    ZooKeeper 3.8 from Debian, with the official image's conventions (docker/zookeeper)
#   zkafka-debian-zookeeper:bookworm
#                               its base: a debootstrap root filesystem (minbase, zookeeper, a headless JRE)
#
# Then: docker-compose -f docker-compose.yml -f docker-compose.offline.yml up -d
#
# The root filesystem is made once (a few minutes) and kept as an image; later runs only rebuild the
# two small images on top, from the engine's build cache. debootstrap uses the Debian mirror of this
# machine's apt sources (or deb.debian.org); DEBIAN_MIRROR picks another. ZKAFKA_REBUILD_BASE=1 makes
# the root filesystem again.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

BASE_IMAGE=zkafka-debian-zookeeper:bookworm
BROKER_IMAGE=zkafka:offline
ZOOKEEPER_IMAGE=zkafka-zookeeper:offline
# apt_mirror prints the first Debian archive (not its security archive) in apt's sources, if any.
apt_mirror() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] && cat "$f"
	done | grep -oE '^(URIs:|deb) +https?://[^ ]+/debian/?( |$)' | awk '{ print $2; exit }' || true
}
MIRROR=${DEBIAN_MIRROR:-$(apt_mirror)}
MIRROR=${MIRROR:-http://deb.debian.org/debian}

ensure_docker
docker_answers || die "no Docker engine answers (docker info failed)"
ensure_go

# Two builds at once (two test packages on a fresh machine) would debootstrap twice.
exec 9>"${TMPDIR:-/tmp}/zkafka-docker-images.lock"
flock 9

# quietly runs a command, showing its output only when it fails (docker build warns about its
# legacy builder on every run where buildx is not installed).
quietly() {
	local out
	if ! out=$("$@" 2>&1); then
		log "$out"
		die "$* failed"
	fi
}

image_exists() { docker image inspect "$1" >/dev/null 2>&1; }

# build tags a docker build of a directory; the image the tag named before, if it changed and nothing
# uses it, is removed rather than left dangling after every rebuild.
build() {
	local tag=$1 old new
	shift
	old=$(docker image inspect --format '{{.Id}}' "$tag" 2>/dev/null || true)
	quietly docker build -q -t "$tag" "$@"
	new=$(docker image inspect --format '{{.Id}}' "$tag")
	if [ -n "$old" ] && [ "$old" != "$new" ]; then
		docker rmi "$old" >/dev/null 2>&1 || true
	fi
}

build_base() {
	if image_exists "$BASE_IMAGE" && [ -z "${ZKAFKA_REBUILD_BASE:-}" ]; then
		log "$BASE_IMAGE: present"
		return 0
	fi
	ensure_command debootstrap
	local root
	root=$(mktemp -d "${TMPDIR:-/var/tmp}/zkafka-rootfs.XXXXXX")
	# shellcheck disable=SC2064 # expand now: root is local
	trap "as_root rm -rf '$root'" EXIT
	log "$BASE_IMAGE: debootstrap bookworm from $MIRROR (a few minutes, once)"
	as_root debootstrap --variant=minbase --include=zookeeper,default-jre-headless,kcat \
		bookworm "$root" "$MIRROR" >"$root.log" 2>&1 || {
		tail -n 20 "$root.log" >&2
		die "debootstrap failed (whole log: $root.log)"
	}
	rm -f "$root.log"
	# apt's lists and the downloaded packages are not needed in the image.
	as_root rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
	as_root tar -C "$root" -c . | docker import -m "debootstrap bookworm: zookeeper, default-jre-headless, kcat" - "$BASE_IMAGE" >/dev/null
	as_root rm -rf "$root"
	trap - EXIT
}

build_binary() {
	log "$BROKER_IMAGE: go build ./cmd/zkafka (static)"
	CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o docker/broker/zkafka ./cmd/zkafka
}

build_broker() {
	log "$BROKER_IMAGE: docker build docker/broker"
	mkdir -p docker/broker/data
	build "$BROKER_IMAGE" docker/broker
}

build_zookeeper() {
	log "$ZOOKEEPER_IMAGE: docker build docker/zookeeper"
	build "$ZOOKEEPER_IMAGE" --build-arg "BASE=$BASE_IMAGE" docker/zookeeper
}

# The compiler and debootstrap (mostly downloads and dpkg) share the machine well.
build_binary &
binary=$!
build_base
wait "$binary" || die "go build ./cmd/zkafka failed"
build_broker
build_zookeeper
log "images ready: $BROKER_IMAGE $ZOOKEEPER_IMAGE"
