#!/usr/bin/env bash
# The full check, as CI runs it: install what the tests need (ZooKeeper, kcat, shellcheck, librdkafka's
# Python client, Chromium) and start the Docker engine if it is installed but down, then go mod tidy
# (must change nothing), go vet, gofmt, staticcheck, shellcheck, all tests (with the race detector, but
# for the packages whose tests drive other processes), and a short run of every fuzz target (FUZZTIME,
# default 10000 executions, each).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

step() { log "==> [${SECONDS}s] $*"; }

go_files() {
	find . \( -path ./data -o -path ./bin -o -path ./.git \) -prune -o -name '*.go' -print
}

ensure_packages
ensure_test_tools
ensure_go
ensure_docker

# The Docker tests' images take minutes on a fresh machine (a debootstrap root filesystem): they are
# built beside the checks and the race-detector tests, which need no Docker, and waited for before
# the tests that do.
images_pid=
if docker_answers; then
	images_log=$(mktemp)
	./scripts/docker-images.sh >"$images_log" 2>&1 &
	images_pid=$!
fi

# Packages whose tests mostly drive zkafka as separate processes or scripts: the race detector would
# only watch the test's own goroutines there, at several times the cost.
NO_RACE='github.com/zkafka/zkafka/(cmd/zkafka|internal/tutorial|internal/dockertest)$'
STATICCHECK=honnef.co/go/tools/cmd/staticcheck@v0.8.2

step "go mod download"
go mod download

step "go mod tidy -diff"
go mod tidy -diff

step "go vet ./..."
go vet ./...

step "gofmt"
unformatted=$(go_files | xargs gofmt -l)
if [ -n "$unformatted" ]; then
	log "these files need gofmt -w:"
	log "$unformatted"
	exit 1
fi

step "staticcheck"
go run "$STATICCHECK" ./...

step "shellcheck"
shellcheck scripts/*.sh .ci/run docker/zookeeper/rootfs/usr/local/bin/docker-entrypoint.sh

mapfile -t race < <(go list ./... | grep -vE "$NO_RACE")
mapfile -t plain < <(go list ./... | grep -E "$NO_RACE")
step "go test -race (${#race[@]} packages)"
go test -race -count=1 -timeout 15m "${race[@]}"
if [ -n "$images_pid" ]; then
	step "wait for the Docker images (scripts/docker-images.sh)"
	if ! wait "$images_pid"; then
		log "$(cat "$images_log")"
		die "scripts/docker-images.sh failed"
	fi
	rm -f "$images_log"
fi
step "go test (${plain[*]})"
go test -count=1 -timeout 15m "${plain[@]}"

# Every func FuzzX in a _test.go file joins automatically.
fuzzed=0
while IFS=: read -r file name; do
	step "fuzz $name in ./$(dirname "$file")"
	# A count, not a duration: Go 1.26's fuzz coordinator can report its own -fuzztime deadline
	# as a failure, with no crashing input (golang/go#75804, fixed in 1.27).
	go test -run '^$' -fuzz "^${name}\$" -fuzztime "${FUZZTIME:-10000x}" "./$(dirname "$file")"
	fuzzed=$((fuzzed + 1))
done < <(go_files | grep '_test\.go$' | xargs grep -oE '^func Fuzz[A-Za-z0-9_]*\([A-Za-z_]+ \*testing\.F\)' /dev/null |
	sed -e 's|^\./||' -e 's/:func \(Fuzz[A-Za-z0-9_]*\)(.*/:\1/' | sort)
step "ok ($fuzzed fuzz targets)"
