#!/usr/bin/env bash
# bfcl-ratio.sh BFCL_CHECKOUT [PAIRS]: the BFCL AST checker's speed against
# the reference, as quoted in docs/PERFORMANCE.md.
#
# BFCL_CHECKOUT is a checkout of ShishirPatil/gorilla (or its
# berkeley-function-call-leaderboard directory); nothing in it is modified.
# The script
#   1. builds the scorers/bfcl test binary and exports the conformance cases
#      (TestConformance, which also checks the Go verdicts against
#      scorers/bfcl/testdata/reference_expected.jsonl),
#   2. runs the reference over the cases once (deploy/dev/bfcl-reference.py)
#      and compares its verdicts with reference_expected.jsonl byte for byte,
#   3. runs PAIRS (default 5) pairs: the Go benchmark (BenchmarkCheck,
#      GOMAXPROCS 1) and the reference at the same time, one per core, so
#      that the machine's drift hits both alike; each reports checks per
#      second of its own process CPU time,
# and prints each pair's rates and ratio, then the median ratio.
# GO_BENCHTIME (default 300x) and PY_PASSES (default 8) set the length of
# each side's timed run; the defaults give both about 5 CPU-seconds.
# Needs the BFCL v4 data (shared/data/bfcl, or BENCHLINE_SHARED_DATA), Go
# and python3 (standard library only).
set -euo pipefail
bfcl=${1:?usage: bfcl-ratio.sh BFCL_CHECKOUT [PAIRS]}
pairs=${2:-5}
gobench=${GO_BENCHTIME:-300x}
passes=${PY_PASSES:-8}
repo=$(cd "$(dirname "$0")/../.." && pwd)
bfcl=$(cd "$bfcl" && pwd)
tmp=$(mktemp -d)
gopid=
trap '[ -n "$gopid" ] && kill "$gopid" 2>/dev/null; rm -rf "$tmp"' EXIT

(cd "$repo" && go test -c -o "$tmp/bfcl.test" ./scorers/bfcl)
echo "exporting cases (TestConformance)..."
(cd "$repo/scorers/bfcl" && BFCL_EXPORT_CASES="$tmp/cases.jsonl" "$tmp/bfcl.test" -test.run '^TestConformance$' -test.v) >"$tmp/conformance.log" ||
	{ cat "$tmp/conformance.log"; exit 1; }
if grep -q -- '--- SKIP' "$tmp/conformance.log"; then
	grep -A2 -- '--- SKIP' "$tmp/conformance.log"
	exit 1
fi
echo "cases: $(wc -l <"$tmp/cases.jsonl")"

python3 "$repo/deploy/dev/bfcl-reference.py" --bfcl "$bfcl" --cases "$tmp/cases.jsonl" --verdicts "$tmp/verdicts.jsonl" >/dev/null
if cmp -s "$tmp/verdicts.jsonl" "$repo/scorers/bfcl/testdata/reference_expected.jsonl"; then
	echo "reference verdicts: identical to scorers/bfcl/testdata/reference_expected.jsonl"
else
	echo "reference verdicts DIFFER from scorers/bfcl/testdata/reference_expected.jsonl:"
	diff "$tmp/verdicts.jsonl" "$repo/scorers/bfcl/testdata/reference_expected.jsonl" | head -20
	exit 1
fi

field() { # field NAME FILE: the value before " NAME" on the BenchmarkCheck line
	awk -v n="$1" '/^BenchmarkCheck/ { for (i = 2; i <= NF; i++) if ($i == n) print $(i - 1) }' "$2"
}
ratios=()
for i in $(seq 1 "$pairs"); do
	(cd "$repo/scorers/bfcl" && "$tmp/bfcl.test" -test.run '^$' -test.bench 'BenchmarkCheck$' -test.cpu 1 \
		-test.benchtime "$gobench" -test.benchmem) >"$tmp/go.$i" 2>&1 &
	gopid=$!
	python3 "$repo/deploy/dev/bfcl-reference.py" --bfcl "$bfcl" --cases "$tmp/cases.jsonl" --passes "$passes" >"$tmp/py.$i"
	wait "$gopid" || { gopid=; cat "$tmp/go.$i"; exit 1; }
	gopid=
	go=$(field checks/cpu-s "$tmp/go.$i")
	py=$(awk '/^reference / { sub("checks_per_cpu_s=", "", $NF); print $NF }' "$tmp/py.$i")
	if [ -z "$go" ] || [ -z "$py" ]; then
		cat "$tmp/go.$i" "$tmp/py.$i"
		exit 1
	fi
	ratio=$(awk -v g="$go" -v p="$py" 'BEGIN { printf "%.1f", g / p }')
	ratios+=("$ratio")
	printf 'pair %d: go %.0f checks/cpu-s (%s allocs/op of %s checks)  reference %s checks/cpu-s  ratio %sx\n' \
		"$i" "$go" "$(field allocs/op "$tmp/go.$i")" "$(field cases "$tmp/go.$i")" "$py" "$ratio"
done
printf '%s\n' "${ratios[@]}" | sort -g | awk '{ r[NR] = $1 } END {
	m = (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
	printf "median ratio over %d pairs: %.1fx (range %s-%sx)\n", NR, m, r[1], r[NR] }'
