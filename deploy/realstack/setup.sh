#!/usr/bin/env bash
# setup.sh builds what `make test-deploy` needs besides `make setup`'s tools:
# the Temporal server (go.temporal.io/server, not the dev server) and its SQL
# schema tool, pinned, into $BENCHLINE_CACHE/bin (skipped once built), and
# checks PostgreSQL's server binaries (Debian's postgresql package; installed
# with apt-get when run as root).
set -euo pipefail

CACHE="${BENCHLINE_CACHE:-$HOME/.cache/benchline}"
BIN="$CACHE/bin"
mkdir -p "$BIN"
TEMPORAL_SERVER_VERSION=v1.29.1

log() { printf 'realstack setup: %s\n' "$*" >&2; }

# go_tool NAME MODULE@VERSION: go install into $BIN, keyed by version (as deploy/dev/setup.sh).
go_tool() {
  local name=$1 spec=$2 stamp="$BIN/.$1.version"
  if [ -x "$BIN/$name" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$spec" ]; then return; fi
  log "building $spec (first time only; a few minutes)"
  local tmp
  tmp=$(mktemp -d)
  GOBIN="$tmp" GOFLAGS=-mod=mod go install "$spec"
  mv "$tmp"/* "$BIN/$name"
  rmdir "$tmp"
  echo "$spec" >"$stamp"
}

go_tool temporal-server "go.temporal.io/server/cmd/server@$TEMPORAL_SERVER_VERSION"
go_tool temporal-sql-tool "go.temporal.io/server/cmd/tools/sql@$TEMPORAL_SERVER_VERSION"

pgbin() { command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; }
if ! pgbin; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "installing Debian's postgresql"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  else
    log "PostgreSQL is missing: sudo apt-get install -y postgresql"
    exit 1
  fi
fi
