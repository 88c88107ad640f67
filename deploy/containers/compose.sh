#!/usr/bin/env bash
# compose.sh brings deploy/compose/compose.yaml up with podman-compose, runs
# the demo's evaluation through it and takes it down (docs/DEPLOY.md,
# "Containers, here"). No image registry is reachable here, so it first
# builds local stand-ins under the exact names compose.yaml names
# (deploy/containers/standins: PostgreSQL, the Temporal server with its
# schema set-up, MinIO and mc, the Temporal UI server, each built from the
# same release by Debian or `go install`); the benchline images are
# setup.sh's. What had to differ from a registry-backed `docker compose up`
# is one override file, deploy/compose/compose.local.yaml.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CONTAINERS_CONF="$PWD/deploy/containers/containers.conf"
CACHE="${BENCHLINE_CACHE:-$HOME/.cache/benchline}"
BIN="$CACHE/bin"
WORK="$CACHE/containers"
STANDINS=deploy/containers/standins
PROJECT="benchline-ct$$"
NICE=(nice -n 10)
TEMPORAL_SERVER_VERSION=v1.29.1
MC_VERSION=v0.0.0-20250313080218-cf909e1063a9 # the mc that MinIO's pinned go.mod requires
UI_VERSION=v2.39.0                             # compose.yaml's temporalio/ui:2.39.0
log() { printf 'compose: %s (%s)\n' "$*" "$(date -u +%T)" >&2; }

image() { sed -n "/^  $1:/,/^  [a-z]/s/^    image: //p" deploy/compose/compose.yaml | head -1; }
qualify() { case "$1" in */*/*) echo "$1" ;; */*) echo "docker.io/$1" ;; *) echo "docker.io/library/$1" ;; esac; }
go_tool() { # as deploy/dev/setup.sh
  local name=$1 spec=$2 stamp="$BIN/.$1.version" tmp
  if [ -x "$BIN/$name" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$spec" ]; then return; fi
  log "building $spec (first time only)"
  tmp=$(mktemp -d)
  GOBIN="$tmp" GOFLAGS=-mod=mod "${NICE[@]}" go install "$spec"
  mv "$tmp"/* "$BIN/$name" && rmdir "$tmp"
  echo "$spec" >"$stamp"
}
build() { # build TAG CONTEXT CONTAINERFILE
  log "building stand-in $1"
  "${NICE[@]}" podman build --pull=never --network host -t "$1" -f "$3" "$2" >"$WORK/standin.log" 2>&1 || { tail -20 "$WORK/standin.log"; exit 1; }
}

# 1. Stand-ins, under compose.yaml's names (each skipped once built).
pg=$(qualify "$(image postgresql)") temporal=$(qualify "$(image temporal)") ui=$(qualify "$(image temporal-ui)")
minio=$(qualify "$(image minio)") mc=$(qualify "$(image minio-setup)")
podman image exists "$pg" || build "$pg" "$STANDINS" "$STANDINS/postgres.Containerfile"
if ! podman image exists "$temporal"; then
  ctx="$WORK/temporal-standin"
  mod="$(go env GOMODCACHE)/go.temporal.io/server@$TEMPORAL_SERVER_VERSION"
  rm -rf "$ctx" && mkdir -p "$ctx/bin" "$ctx/config"
  cp "$BIN/temporal-server" "$BIN/temporal-sql-tool" "$BIN/temporal" "$ctx/bin/"
  cp -r "$mod/schema" "$ctx/schema" && cp -r "$mod/config/dynamicconfig" "$ctx/config/"
  cp "$mod/config/development-postgres12.yaml" "$ctx/config/"
  cp "$STANDINS/temporal-entrypoint.sh" "$ctx/"
  chmod -R u+w "$ctx"
  build "$temporal" "$ctx" "$STANDINS/temporal.Containerfile"
  rm -rf "$ctx"
fi
if ! podman image exists "$minio" || ! podman image exists "$mc"; then
  go_tool mc "github.com/minio/mc@$MC_VERSION"
  ctx="$WORK/minio-standin"
  rm -rf "$ctx" && mkdir -p "$ctx/bin"
  cp "$BIN/minio" "$BIN/mc" "$ctx/bin/"
  build localhost/benchline-standin/minio:dev "$ctx" "$STANDINS/minio.Containerfile"
  podman tag localhost/benchline-standin/minio:dev "$minio"
  build "$mc" "$STANDINS" "$STANDINS/mc.Containerfile"
  rm -rf "$ctx"
fi
if ! podman image exists "$ui"; then
  go_tool temporal-ui-server "github.com/temporalio/ui-server/v2/cmd/server@$UI_VERSION"
  ctx="$WORK/ui-standin"
  rm -rf "$ctx" && mkdir -p "$ctx"
  cp "$BIN/temporal-ui-server" "$ctx/"
  cp "$(go env GOMODCACHE)/github.com/temporalio/ui-server/v2@$UI_VERSION/config/docker.yaml" "$ctx/"
  chmod -R u+w "$ctx"
  cp "$STANDINS/ui.Containerfile" "$ctx/Containerfile"
  build "$ui" "$ctx" "$ctx/Containerfile"
  rm -rf "$ctx"
fi

# 2. Up, with example.env's variables and fresh passwords.
for p in 7233 8233 9000 9001; do
  if ss -ltn "sport = :$p" | grep -q LISTEN; then
    log "127.0.0.1:$p is taken (compose.yaml publishes it): stop what listens there"; exit 1
  fi
done
envf=$(mktemp)
compose=(true)
cleanup() {
  log "down"
  "${compose[@]}" down -v >/dev/null 2>&1 || true
  podman ps -aq --filter "name=^${PROJECT}_" | xargs -r podman rm -f -t 0 >/dev/null 2>&1 || true
  podman volume ls -q --filter "name=^${PROJECT}_" | xargs -r podman volume rm -f >/dev/null 2>&1 || true
  podman network ls -q --filter "name=^${PROJECT}_" | xargs -r podman network rm -f >/dev/null 2>&1 || true
  rm -f "$envf"
}
trap cleanup EXIT
sed -e "s/^POSTGRES_PASSWORD=.*/POSTGRES_PASSWORD=pg-$RANDOM$RANDOM/" -e "s/^MINIO_ROOT_PASSWORD=.*/MINIO_ROOT_PASSWORD=minio-$RANDOM$RANDOM/" \
  deploy/compose/example.env >"$envf"
# podman-compose 1.0.3 has no --env-file: the variables come from the environment.
set -a && . "$envf" && set +a
compose=(podman-compose -p "$PROJECT" -f deploy/compose/compose.yaml -f deploy/compose/compose.local.yaml)
start=$(date +%s)
log "up (project $PROJECT)"
"${compose[@]}" up -d >"$WORK/compose-up.log" 2>&1 || { tail -30 "$WORK/compose-up.log"; exit 1; }

# 3. Wait for Temporal (published on 127.0.0.1:7233) and both workers.
waitfor() { # waitfor WHAT SECONDS CMD...
  local what=$1 n=$2
  shift 2
  for ((i = 0; i < n; i++)); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
  log "$what: not ready in ${n}s"; "${compose[@]}" ps; "${compose[@]}" logs --tail 20 2>&1 | tail -80; return 1
}
waitfor "Temporal" 300 sh -c "'$BIN/temporal' operator cluster health --address 127.0.0.1:7233 | grep -q SERVING"
for w in worker-main worker-sandbox; do
  waitfor "$w" 180 sh -c "podman logs ${PROJECT}_${w}_1 2>&1 | grep -q 'benchline worker on'"
done
log "up and serving in $(($(date +%s) - start))s"
# (awk reads to the end: `head` would SIGPIPE podman under pipefail)
podman logs "${PROJECT}_worker-main_1" 2>&1 | awk 'NR == 1 { print "  worker-main first log line: " $0 }'

# 4. The demo's evaluations, with the CLI in the runtime image on the
#    compose network and the workers' environment.
net=$(podman network ls --format '{{.Name}}' | grep -m1 "^${PROJECT}_")
cli() {
  podman run --rm --network "$net" -e TEMPORAL_ADDRESS=temporal:7233 -e TEMPORAL_NAMESPACE=default -e BENCHLINE_TASK_QUEUE=benchline \
    -e BENCHLINE_S3_ENDPOINT=http://minio:9000 -e BENCHLINE_S3_BUCKET="${BENCHLINE_S3_BUCKET:-benchline}" -e BENCHLINE_S3_PATH_STYLE=true \
    -e AWS_ACCESS_KEY_ID="${MINIO_ROOT_USER:-benchline}" -e AWS_SECRET_ACCESS_KEY="$MINIO_ROOT_PASSWORD" -e AWS_REGION=us-east-1 \
    localhost/benchline:dev "$@"
}
for ds in bfcl ifevalcode; do
  cli dataset build "$ds" >/dev/null
  for model in baseline/reference baseline/noisy-0.3; do
    out=$(cli eval --dataset "$ds" --model "$model" --shard-size 100 --json)
    line=$(printf '%s' "$out" | python3 -c '
import json, sys
text = sys.stdin.read()
s = json.loads(text[text.index("{"):])  # after the progress line
s = s.get("summary", s)
m = s["metrics"][0]
print("%d samples, %s %.3f, infra failures %d" % (s["samples"], m["name"], m["mean"], s.get("infra_failed", 0)))')
    log "eval $ds x $model through compose: $line"
    case "$model:$line" in baseline/reference:*" 1.000, infra failures 0") ;; baseline/reference:*) log "baseline/reference must score 1.000"; exit 1 ;; esac
  done
done
log "passed: up, the demo's evaluations of bfcl and ifevalcode (sandbox worker), down; $(($(date +%s) - start))s"
