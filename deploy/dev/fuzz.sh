#!/usr/bin/env bash
# fuzz.sh: runs every fuzz target of the module, one after another, each for
# FUZZTIME (default 30s). `make fuzz` runs it as is; `make fuzz-short` (part
# of `make test`) with FUZZTIME=3s.
#
# The targets are found, not listed: every `func FuzzXxx(f *testing.F)` in a
# _test.go file is run, so a new target is added once, in its test file.
# The corpus each target grows is kept where `go test -fuzz` keeps it
# ($GOCACHE/fuzz/<package>/<target>), so both share it. A crasher is written
# to testdata/fuzz/<target>/ of its package, as `go test -fuzz` does: commit
# it with the fix, and the plain `go test` run replays it from then on.
#
# Environment: FUZZTIME (per target, a duration or Nx), FUZZCACHE (the
# corpus directory [$GOCACHE/fuzz]; "none": a fresh one, removed after, so
# that a short run fuzzes from the seeds instead of spending its turn
# replaying a corpus grown by long runs), FUZZMINIMIZETIME
# (time or count spent minimizing each new input [100x], so a slow target
# does not spend its turn minimizing), FUZZPARALLEL (fuzzing processes per
# target [GOMAXPROCS]), FUZZ (a regexp: only targets whose name matches).
set -uo pipefail
cd "$(dirname "$0")/../.."
go=${GO:-go}
fuzztime=${FUZZTIME:-30s}
minimize=${FUZZMINIMIZETIME:-100x}
only=${FUZZ:-.}
module=$("$go" list -m)
bins=$(mktemp -d)
trap 'rm -rf "$bins"' EXIT
cache=${FUZZCACHE:-$("$go" env GOCACHE)/fuzz}
[ "$cache" = none ] && cache=$bins/corpus

# One line per target: <package dir> <target>.
targets=$(grep -rE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' . |
	sed -E 's|^\./(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*|\1 \2|' | grep -E " .*${only}" | sort)
n=$(printf '%s\n' "$targets" | grep -c .)
echo "fuzz: $n targets, $fuzztime each"

failed=()
start=$SECONDS
built=""
while read -r dir target; do
	[ -n "$dir" ] || continue
	bin="$bins/$(echo "$dir" | tr / _).test"
	if [[ " $built " != *" $dir "* ]]; then
		if ! "$go" test -c -vet=off -ldflags=-w -fuzz=. -o "$bin" "./$dir"; then
			failed+=("$dir (build)")
			continue
		fi
		built="$built $dir"
	fi
	args=(-test.run='^$' -test.fuzz="^${target}\$" -test.fuzztime="$fuzztime"
		-test.fuzzminimizetime="$minimize" -test.fuzzcachedir="$cache/$module/$dir")
	[ -n "${FUZZPARALLEL:-}" ] && args+=(-test.parallel="$FUZZPARALLEL")
	t0=$SECONDS
	crashers=$(ls "$dir/testdata/fuzz/$target" 2>/dev/null | wc -l)
	out=$(cd "$dir" && "$bin" "${args[@]}" 2>&1)
	rc=$?
	execs=$(printf '%s\n' "$out" | grep -oE 'execs: [0-9]+' | tail -1)
	if [ $rc -eq 0 ]; then
		printf 'ok   %-24s %-20s %3ds %s\n' "$target" "$dir" $((SECONDS - t0)) "$execs"
	elif [ "$(ls "$dir/testdata/fuzz/$target" 2>/dev/null | wc -l)" -eq "$crashers" ] &&
		[ "$(printf '%s\n' "$out" | grep -A1 -E '^--- FAIL' | tail -1 | tr -d '[:space:]')" = contextdeadlineexceeded ]; then
		# go1.26's fuzz coordinator can report its own -fuzztime deadline as a
		# failure when the machine is loaded (go.dev/issue/75804, fixed in
		# go1.27): no input failed and no crasher was written.
		printf 'ok   %-24s %-20s %3ds %s (deadline race of go.dev/issue/75804 ignored)\n' "$target" "$dir" $((SECONDS - t0)) "$execs"
	else
		printf 'FAIL %-24s %s\n%s\n' "$target" "$dir" "$out"
		failed+=("$dir $target")
	fi
done <<<"$targets"
echo "fuzz: $n targets in $((SECONDS - start))s"
if [ ${#failed[@]} -gt 0 ]; then
	printf 'fuzz: failed: %s\n' "${failed[@]}"
	echo "fuzz: crashers are in <package>/testdata/fuzz/<target>/; replay one with go test -run '<target>/<file>' ./<package>"
	exit 1
fi
