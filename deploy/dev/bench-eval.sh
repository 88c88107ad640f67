#!/usr/bin/env bash
# bench-eval.sh ROWS SEED: runs `benchline bench eval` (the tool build: make build-bench) against a running dev
# stack (`bin/benchline dev --dir DIR --no-worker`) with a fresh worker, and
# prints the bench's JSON line, the worker's peak RSS, and the CPU seconds
# each process of the stack spent during the bench (the worker, the dev
# process with the baseline server, MinIO, Temporal, the bench process).
# Used for the evaluation figures in docs/PERFORMANCE.md.
#
# DEV_PID names the dev process (default: the first " dev --dir " process);
# MinIO and Temporal are its children, so another stack on the machine is
# not measured by mistake. WORKER_ARGS are extra `benchline worker` flags
# (e.g. "--pprof 127.0.0.1:6061").
#
# The worker is new, so before the measured bench it runs one uncounted
# evaluation of WARMUP samples (default 2000; 0 for none): a deployed
# worker is long-lived, and the bench's gateway loop likewise leaves its
# cold first pass out (the median of three passes). The warm-up takes
# seed SEED+1000000, so it never reuses the measured run.
set -euo pipefail
rows=${1:?usage: bench-eval.sh ROWS SEED}
seed=${2:?usage: bench-eval.sh ROWS SEED}
bin=${BENCHLINE_BIN:-bin/benchline}
cpu() { awk '{printf "%.2f", ($14+$15)/100}' "/proc/$1/stat"; }

# shellcheck disable=SC2086 # WORKER_ARGS is a list of flags
"$bin" worker --queues main ${WORKER_ARGS:-} >"/tmp/bench-eval-worker-$seed.log" 2>&1 &
worker=$!
trap 'kill $worker 2>/dev/null || true' EXIT
sleep 3
if [ "${WARMUP:-2000}" -gt 0 ]; then
	"$bin" bench eval --rows "${WARMUP:-2000}" --seed $((seed + 1000000)) >/dev/null
fi
dev=${DEV_PID:-$(pgrep -f " dev --dir " | head -1)}
declare -A pids=([worker]=$worker
	[dev+baselines]=$dev
	[minio]=$(pgrep -P "$dev" -f "minio server" | head -1)
	[temporal]=$(pgrep -P "$dev" -f "temporal server start-dev" | head -1))
declare -A before
for k in "${!pids[@]}"; do before[$k]=$(cpu "${pids[$k]}"); done
TIMEFORMAT='bench-process cpu_s=%U+%S' # bash's time: the bench process's CPU
time "$bin" bench eval --rows "$rows" --seed "$seed"
for k in worker dev+baselines minio temporal; do
	echo "$k cpu_s=$(awk -v a="$(cpu "${pids[$k]}")" -v b="${before[$k]}" 'BEGIN { printf "%.2f", a - b }')"
done
grep VmHWM "/proc/$worker/status"
