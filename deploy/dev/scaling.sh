#!/usr/bin/env bash
# scaling.sh [ROWS] [ROUNDS] [WORKERS...]: the same evaluation with 1, 2 and 4
# worker processes, for the measured curve in docs/SCALING.md.
#
# It starts its own dev stack (`benchline dev --no-worker`, every port 0, so it
# does not collide with another stack on the machine, with --env-file), builds
# one synthetic dataset of ROWS rows (default 60000), then for each round and
# each worker count (default 1 2 4; the order is reversed every other round so
# that the machine's drift does not favour one count) starts that many
# `benchline worker --queues main` processes and runs `benchline eval` of
# baseline/reference (zero latency) with --no-cache and a fresh --seed, so each
# run has a new run id and makes every model call. It prints, per run, the
# samples/s (after one unreported warm-up run), its ratio to the 1-worker
# figure of the same round, and the CPU
# seconds each process spent during the run (from /proc/PID/stat): the
# workers (summed), the dev process (which serves the baseline model), MinIO
# and Temporal, and "cores": their CPU seconds over the run's wall seconds,
# the share of the machine the stack got. At the end it prints the last run's
# workflow history by event type and the objects the run left in the bucket.
# CACHE=1 drops --no-cache (a fresh seed is a fresh run id, and the cache
# segments are per run, so there are no hits either way; with the cache on the
# run also writes its segments, as a real run does). The stack is stopped at
# the end; its state stays in the printed directory.
set -euo pipefail
rows=${1:-60000}
rounds=${2:-2}
shift $(($# > 2 ? 2 : $#))
counts=("$@")
((${#counts[@]})) || counts=(1 2 4)
bin=${BENCHLINE_BIN:-bin/benchline}
dir=$(mktemp -d /tmp/bl-scaling.XXXXXX)

cpu() { awk '{printf "%.2f", ($14+$15)/100}' "/proc/$1/stat"; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a - b }'; }

workers=()
stop_workers() {
	for w in "${workers[@]}"; do kill "$w" 2>/dev/null || true; done
	for w in "${workers[@]}"; do wait "$w" 2>/dev/null || true; done
	workers=()
}

"$bin" dev --dir "$dir/state" --no-worker --temporal-port 0 --ui-port 0 --s3-port 0 --baseline-port 0 \
	--env-file "$dir/env" >"$dir/dev.log" 2>&1 &
dev=$!
trap 'stop_workers; kill $dev 2>/dev/null || true; wait $dev 2>/dev/null || true' EXIT
for _ in $(seq 120); do [[ -s $dir/env ]] && break; sleep 1; done
[[ -s $dir/env ]] || { echo "scaling.sh: dev stack did not start, see $dir/dev.log" >&2; exit 1; }
set -a
# shellcheck disable=SC1091
. "$dir/env"
set +a
minio=$(pgrep -P "$dev" -f "minio server" | head -1)
temporal=$(pgrep -P "$dev" -f "server start-dev" | head -1)
[[ -n $minio && -n $temporal ]] || { echo "scaling.sh: no MinIO or Temporal under pid $dev" >&2; exit 1; }

echo "# host: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'); $(uptime)"
"$bin" worker --queues main >"$dir/worker-build.log" 2>&1 & # the build runs on a worker too
workers+=($!)
"$bin" dataset build synthetic --param rows="$rows" --param seed=4242 --json >"$dir/build.json"
stop_workers
version=$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' "$dir/build.json" | head -1)
[[ -n $version ]] || { echo "scaling.sh: no version in $dir/build.json" >&2; exit 1; }
echo "# dataset synthetic@$version, $rows samples; stack state in $dir"
nocache=--no-cache
[[ ${CACHE:-0} == 1 ]] && nocache=
# A warm-up run, not reported: the first evaluation on a fresh stack is slower
# (cold caches in Temporal, MinIO and the baseline server), which would
# flatter every count measured after the first.
"$bin" worker --queues main >"$dir/worker-warmup.log" 2>&1 &
workers+=($!)
"$bin" eval --dataset "synthetic@$version" --model baseline/reference --no-cache --seed 1 --json \
	>"$dir/eval-warmup.json" 2>"$dir/eval-warmup.log"
stop_workers
printf '%-5s %-7s %9s %8s %7s %9s %9s %9s %9s %6s %s\n' round workers samples/s ratio wall_s worker_s dev_s minio_s tempo_s cores load
seed=$((RANDOM * 32768 + RANDOM))
for round in $(seq "$rounds"); do
	order=("${counts[@]}")
	if ((round % 2 == 0)); then
		order=()
		for ((i = ${#counts[@]} - 1; i >= 0; i--)); do order+=("${counts[$i]}"); done
	fi
	declare -A rate=()
	for n in "${order[@]}"; do
		for i in $(seq "$n"); do
			"$bin" worker --queues main >"$dir/worker-$round-$n-$i.log" 2>&1 &
			workers+=($!)
		done
		sleep 3 # the workers connect and poll
		w0=0
		for w in "${workers[@]}"; do w0=$(awk -v a="$w0" -v b="$(cpu "$w")" 'BEGIN { print a + b }'); done
		d0=$(cpu "$dev") m0=$(cpu "$minio") t0=$(cpu "$temporal")
		seed=$((seed + 1))
		start=$(date +%s.%N)
		"$bin" eval --dataset "synthetic@$version" --model baseline/reference ${nocache:+"$nocache"} --seed "$seed" \
			--json >"$dir/eval-$round-$n.json" 2>"$dir/eval-$round-$n.log"
		end=$(date +%s.%N)
		w1=0
		for w in "${workers[@]}"; do w1=$(awk -v a="$w1" -v b="$(cpu "$w")" 'BEGIN { print a + b }'); done
		rate[$n]=$(awk -v r="$rows" -v a="$start" -v b="$end" 'BEGIN { printf "%.0f", r / (b - a) }')
		ratio=-
		[[ -n ${rate[1]:-} ]] && ratio=$(awk -v a="${rate[$n]}" -v b="${rate[1]}" 'BEGIN { printf "%.2f", a / b }')
		ws=$(sub "$w1" "$w0") ds=$(sub "$(cpu "$dev")" "$d0") ms=$(sub "$(cpu "$minio")" "$m0") ts=$(sub "$(cpu "$temporal")" "$t0")
		wall=$(sub "$end" "$start")
		cores=$(awk -v a="$ws" -v b="$ds" -v c="$ms" -v d="$ts" -v w="$wall" 'BEGIN { printf "%.2f", (a + b + c + d) / w }')
		printf '%-5s %-7s %9s %8s %7s %9s %9s %9s %9s %6s %s\n' "$round" "$n" "${rate[$n]}" "$ratio" "$wall" "$ws" "$ds" "$ms" "$ts" \
			"$cores" "$(cut -d' ' -f1 /proc/loadavg)"
		stop_workers
	done
	# In a reversed round the 1-worker run comes last: print the ratios again.
	if ((round % 2 == 0)) && [[ -n ${rate[1]:-} ]]; then
		for n in "${counts[@]}"; do
			echo "# round $round: $n workers $(awk -v a="${rate[$n]}" -v b="${rate[1]}" 'BEGIN { printf "%.2f", a / b }') of 1 worker"
		done
	fi
	unset rate
done

# The last run's workflow history: events by type (for the arithmetic in
# docs/SCALING.md). A run under ShardsPerRun shards is one workflow run.
run=$(sed -n 's/^run \([^:]*\):.*/\1/p' "$dir/eval-$round-$n.log" | head -1)
tcli=${BENCHLINE_TEMPORAL:-${BENCHLINE_CACHE:-$HOME/.cache/benchline}/bin/temporal}
"$tcli" workflow show --address "$TEMPORAL_ADDRESS" -w "eval-$run" --output json >"$dir/history.json"
shards=$(( (rows + 499) / 500 ))
echo "# history of eval-$run ($shards shards): $(stat -c %s "$dir/history.json") bytes of JSON; events by type:"
grep -o '"eventType": *"[A-Z_]*"' "$dir/history.json" | sed 's/.*"\([A-Z_]*\)"$/\1/' | sort | uniq -c | sort -rn
echo "# objects of run $run in the bucket (MinIO's xl.meta per object), shard numbers folded:"
find "$dir/state/s3" -path "*/$run/*" -name xl.meta | sed "s|^$dir/state/s3/[^/]*/||; s|/xl.meta\$||; s/shard-[0-9]*/shard-N/g; s/part-[0-9a-z]*/part-P/g" |
	sort | uniq -c
