#!/usr/bin/env bash
# setup.sh installs or builds what benchline's tests and demo need, pinned, into
# a cache outside the repository (BENCHLINE_CACHE, default ~/.cache/benchline),
# so a second run takes a second. Run by `make setup` (and so by `make test` and
# `make demo`). Each step is skipped when its pinned output already exists.
#
# `setup.sh demo` (what `make demo` runs) installs only what the demo needs:
# not chromium, staticcheck or helm, which only the tests use, so that a fresh
# machine's first `make demo` does not wait for them.
set -euo pipefail

FOR="${1:-test}"
case "$FOR" in test|demo) ;; *) printf 'setup: unknown target %q (test or demo)\n' "$FOR" >&2; exit 2 ;; esac

CACHE="${BENCHLINE_CACHE:-$HOME/.cache/benchline}"
BIN="$CACHE/bin"
NODE_DIR="$CACHE/node"
mkdir -p "$BIN" "$NODE_DIR"

# Pinned versions. The Go module proxy here serves only some versions: these
# are the ones verified to build (see docs/ARCHITECTURE.md, "Set-up").
TEMPORAL_CLI_VERSION=v1.5.1
MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c
STATICCHECK_VERSION=v0.8.2
HELM_VERSION=v3.22.0
PROMPTFOO_VERSION=0.123.1
NPM_PACKAGES=(typescript@5.8.3 @types/node@22.20.5 @duckdb/node-api@1.5.6-r.1)
APT_PACKAGES=(bubblewrap mono-mcs php-cli chromium postgresql python3-jinja2 python3-yaml)
if [ "$FOR" = demo ]; then APT_PACKAGES=(bubblewrap mono-mcs php-cli); fi

log() { printf 'setup: %s\n' "$*" >&2; }

# 1. Debian packages: the sandbox (bubblewrap), the C# and PHP toolchains,
#    chromium for the leaderboard site's browser tests (internal/site, driven by chromedp),
#    PostgreSQL for the deployment test's Temporal server (deploy/realstack), and Python 3
#    with Jinja2 and PyYAML for scorers/lmeval's reference test (lm-eval's templates and scores).
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "installing Debian packages: ${missing[*]}"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    log "missing Debian packages: ${missing[*]}"
    log "install them with: sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}"
    exit 1
  fi
fi

# go_tool NAME MODULE@VERSION: go install into $BIN, keyed by version.
go_tool() {
  local name=$1 spec=$2 stamp="$BIN/.$1.version"
  if [ -x "$BIN/$name" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$spec" ]; then return; fi
  log "building $spec (first time only; a few minutes)"
  GOBIN="$BIN" GOFLAGS=-mod=mod go install "$spec"
  echo "$spec" >"$stamp"
}

# 2. Temporal CLI (dev server with SQLite). @latest does not install here.
go_tool temporal "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION"
# 3. MinIO: the embedded S3-protocol server (no tagged versions: pinned pseudo-version).
go_tool minio "github.com/minio/minio@$MINIO_VERSION"
if [ "$FOR" = test ]; then
  # 4. staticcheck for `make lint`.
  go_tool staticcheck "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION"
  # 4b. helm for `make validate-deploy` (helm lint and template; no cluster).
  #     The first build is long (about 10 minutes of CPU).
  go_tool helm "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
  # 4c. The Temporal server (go.temporal.io/server, not the dev server) and its
  #     SQL schema tool, for the deployment test that `make test` runs in its
  #     short form (deploy/realstack). They share most packages with the CLI above.
  bash "$(dirname "$0")/../realstack/setup.sh"
fi

# 5. Node tools: TypeScript 5.x (IFEvalCode's tsc flags are rejected by 6+),
#    @types/node, and DuckDB for the independent Parquet read-back test.
want="${NPM_PACKAGES[*]}"
if [ "$(cat "$NODE_DIR/.version" 2>/dev/null)" != "$want" ]; then
  command -v npm >/dev/null || { log "npm is missing: install Node.js 20+ (apt-get install -y nodejs npm)"; exit 1; }
  log "installing npm packages: $want"
  (cd "$NODE_DIR" && { [ -f package.json ] || echo '{"private":true}' >package.json; } &&
    npm install --no-audit --no-fund --loglevel=error "${NPM_PACKAGES[@]}" >/dev/null)
  echo "$want" >"$NODE_DIR/.version"
fi

# 6. promptfoo, pinned, for TestSameAsPromptfoo (scorers/promptfoo): benchline grades a promptfoo
#    config as promptfoo does. Its own folder (it brings hundreds of packages); --ignore-scripts
#    skips native builds (better-sqlite3 and others) that `promptfoo eval --no-cache -o FILE`
#    does not need. The test runs dist/src/main.js: the entry point refuses Node 20.
PROMPTFOO_DIR="$CACHE/promptfoo"
if [ "$FOR" = test ] && [ "$(cat "$PROMPTFOO_DIR/.version" 2>/dev/null)" != "$PROMPTFOO_VERSION" ]; then
  command -v npm >/dev/null || { log "npm is missing: install Node.js 20+ (apt-get install -y nodejs npm)"; exit 1; }
  log "installing promptfoo $PROMPTFOO_VERSION"
  mkdir -p "$PROMPTFOO_DIR"
  (cd "$PROMPTFOO_DIR" && { [ -f package.json ] || echo '{"private":true}' >package.json; } &&
    npm install --no-audit --no-fund --loglevel=error --ignore-scripts "promptfoo@$PROMPTFOO_VERSION" >/dev/null)
  echo "$PROMPTFOO_VERSION" >"$PROMPTFOO_DIR/.version"
fi

log "ready: tools in $BIN, node packages in $NODE_DIR"
