#!/usr/bin/env bash
# The full check, as CI runs it: install what the tests need (ZooKeeper, kcat), then go vet, gofmt,
# all tests, and a short run of every fuzz target (FUZZTIME, default 10s, each).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

step() { log "==> $*"; }

go_files() {
	find . \( -path ./data -o -path ./bin -o -path ./.git \) -prune -o -name '*.go' -print
}

ensure_packages
ensure_go

step "go mod download"
go mod download

step "go vet ./..."
go vet ./...

step "gofmt"
unformatted=$(go_files | xargs gofmt -l)
if [ -n "$unformatted" ]; then
	log "these files need gofmt -w:"
	log "$unformatted"
	exit 1
fi

if command -v shellcheck >/dev/null; then
	step "shellcheck"
	shellcheck scripts/*.sh .ci/run
fi

step "go test ./..."
go test ./... -count=1 -timeout 15m

# Every func FuzzX in a _test.go file joins automatically.
fuzzed=0
while IFS=: read -r file name; do
	step "fuzz $name in ./$(dirname "$file")"
	go test -run '^$' -fuzz "^${name}\$" -fuzztime "${FUZZTIME:-10s}" "./$(dirname "$file")"
	fuzzed=$((fuzzed + 1))
done < <(go_files | grep '_test\.go$' | xargs grep -oE '^func Fuzz[A-Za-z0-9_]*\([A-Za-z_]+ \*testing\.F\)' /dev/null |
	sed -e 's|^\./||' -e 's/:func \(Fuzz[A-Za-z0-9_]*\)(.*/:\1/' | sort)
step "ok ($fuzzed fuzz targets)"
