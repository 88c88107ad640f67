#!/usr/bin/env bash
# run.sh is `make test-containers` (docs/DEPLOY.md, "Containers, here"):
#   1. setup.sh: podman and friends with apt-get, the base images made
#      locally, both images built (runtime and sandbox);
#   2. sandbox-suite.sh: internal/sandbox's escape and resource suite inside
#      the sandbox image with the options of sandbox-opts.txt, then without
#      each of them (each such run must fail, saying why);
#   3. the deployment test (deploy/realstack) with every benchline process a
#      container (BENCHLINE_WORKERS=containers): workers on the host network
#      against a Temporal server on PostgreSQL and MinIO, a worker container
#      of each queue SIGKILLed mid-run, then every demo benchmark evaluated
#      through the containers;
#   4. compose.sh: deploy/compose/compose.yaml up with podman-compose and the
#      one override file, the demo's evaluation through it, down.
# Each step prints its wall time; the containers it starts are removed.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CONTAINERS_CONF="$PWD/deploy/containers/containers.conf"
step() {
  local name=$1 start
  shift
  start=$(date +%s)
  printf '\n=== test-containers: %s (%s UTC)\n' "$name" "$(date -u +%T)"
  "$@"
  printf '=== test-containers: %s took %ss\n' "$name" "$(($(date +%s) - start))"
}
began=$(date +%s)
step "set-up and image builds" bash deploy/containers/setup.sh
bash deploy/realstack/setup.sh
step "sandbox suite in the sandbox image" bash deploy/containers/sandbox-suite.sh
step "deployment test, workers as containers" env BENCHLINE_WORKERS=containers BENCHLINE_DEPLOY="${BENCHLINE_DEPLOY:-short}" \
  go test -tags deploytest -count=1 -timeout 40m -v -run 'TestRealStack' ./deploy/realstack/
if [ -f deploy/containers/compose.sh ]; then
  step "compose up, eval, down" bash deploy/containers/compose.sh
fi
printf '\n=== test-containers: passed in %ss\n' "$(($(date +%s) - began))"
