#!/usr/bin/env bash
# run.sh is `make test-deploy`: it builds the Temporal server and its schema
# tool once (setup.sh), then runs the tag-gated deployment test
# (deploy/realstack, docs/DEPLOY.md "The real engine, here"). Extra
# arguments go to `go test` (e.g. -v is already on; -run to select).
# BENCHLINE_DEPLOY picks the form: short (the default, as `make test` runs
# it) or long (`make test-deploy`).
set -euo pipefail
cd "$(dirname "$0")/../.."
bash deploy/realstack/setup.sh
exec go test -tags deploytest -count=1 -timeout 30m -v "$@" ./deploy/realstack/
