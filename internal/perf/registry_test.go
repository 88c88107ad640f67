package perf

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/golden"
)

var update = flag.Bool("update", false, "rewrite testdata/list.golden")

func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := FindRoot(context.Background(), ".")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestRegistryNamesExistingBenchmarks checks that every go test figure's -bench
// regexp selects a benchmark function that exists in its package (grepping its
// _test.go files for func BenchmarkX), that the lines it reads belong to that
// function, that scripts exist and are executable, and that names are unique.
func TestRegistryNamesExistingBenchmarks(t *testing.T) {
	root := moduleRoot(t)
	names := map[string]bool{}
	nameRE := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	for _, f := range Figures {
		if names[f.Name] {
			t.Errorf("%s: duplicate name", f.Name)
		}
		names[f.Name] = true
		if !nameRE.MatchString(f.Name) {
			t.Errorf("%s: name is not lower-case words joined by dashes", f.Name)
		}
		if f.Unit == "" {
			t.Errorf("%s: no unit", f.Name)
		}
		switch f.Kind {
		case GoBench:
			funcs := benchmarkFuncs(t, filepath.Join(root, f.Pkg))
			if len(funcs) == 0 {
				t.Errorf("%s: no func Benchmark… in %s", f.Name, f.Pkg)
				continue
			}
			top, _, _ := strings.Cut(f.Bench, "/")
			sel, err := regexp.Compile(top)
			if err != nil {
				t.Errorf("%s: -bench %q: %v", f.Name, f.Bench, err)
				continue
			}
			for _, line := range []string{f.Line, f.RefLine} {
				if line == "" {
					continue
				}
				fn, _, _ := strings.Cut(line, "/")
				if !funcs[fn] {
					t.Errorf("%s: reads %s, but %s has no func %s", f.Name, line, f.Pkg, fn)
				}
				if !sel.MatchString(fn) {
					t.Errorf("%s: -bench %q does not select %s", f.Name, f.Bench, fn)
				}
			}
			if f.Metric == "" {
				t.Errorf("%s: no metric", f.Name)
			}
		case Script:
			st, err := os.Stat(filepath.Join(root, f.Args[0]))
			if err != nil || st.Mode()&0o111 == 0 {
				t.Errorf("%s: script %s missing or not executable (%v)", f.Name, f.Args[0], err)
			}
			if f.Pattern == nil || f.Pattern.NumSubexp() != 1 {
				t.Errorf("%s: a script figure needs a pattern with one submatch", f.Name)
			}
		case Self:
			if len(f.Args) < 2 || f.Args[0] != "bench" || f.Field == "" {
				t.Errorf("%s: a self figure runs a bench subcommand and reads a JSON field", f.Name)
			}
		}
	}
}

// benchmarkFuncs greps dir's _test.go files for func BenchmarkX(.
func benchmarkFuncs(t *testing.T, dir string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^func (Benchmark\w*)\(b \*testing\.B\)`)
	out := map[string]bool{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllSubmatch(data, -1) {
			out[string(m[1])] = true
		}
	}
	return out
}

// TestEverySectionHasAFigure checks that every section of docs/PERFORMANCE.md
// (## and ### headings) has a registry entry or an exclusion with a reason,
// and that the registry and the exclusions name only existing sections.
func TestEverySectionHasAFigure(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(moduleRoot(t), "docs", "PERFORMANCE.md"))
	if err != nil {
		t.Fatal(err)
	}
	headings := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		for _, p := range []string{"## ", "### "} {
			if strings.HasPrefix(line, p) {
				headings[strings.TrimSpace(strings.TrimPrefix(line, p))] = true
			}
		}
	}
	if len(headings) < 10 {
		t.Fatalf("found %d headings in docs/PERFORMANCE.md; the parse is wrong", len(headings))
	}
	covered := map[string]bool{}
	for _, f := range Figures {
		if !headings[f.Section] {
			t.Errorf("%s: section %q is not a heading of docs/PERFORMANCE.md", f.Name, f.Section)
		}
		covered[f.Section] = true
	}
	for h, why := range Excluded {
		if !headings[h] {
			t.Errorf("exclusion %q is not a heading of docs/PERFORMANCE.md", h)
		}
		if strings.TrimSpace(why) == "" {
			t.Errorf("exclusion %q gives no reason", h)
		}
		covered[h] = true
	}
	for h := range headings {
		if h == oneTableSection {
			continue
		}
		if !covered[h] {
			t.Errorf("docs/PERFORMANCE.md section %q has no figure in perf.Figures and no entry in perf.Excluded", h)
		}
	}
}

// oneTableSection is the section that quotes this command's own table.
const oneTableSection = "One table: benchline bench"

func TestListGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteList(&buf, Figures, false); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "list.golden")
	golden.Check(t, path, buf.String(), *update, "rerun with -update if the registry changed on purpose")
}

func TestFindRoot(t *testing.T) {
	root := moduleRoot(t)
	if _, err := os.Stat(filepath.Join(root, "docs", "PERFORMANCE.md")); err != nil {
		t.Errorf("root %s: %v", root, err)
	}
	dir := t.TempDir()
	t.Setenv("GO111MODULE", "")
	_, err := FindRoot(context.Background(), dir)
	if err == nil || !strings.Contains(err.Error(), "not inside a benchline source checkout") {
		t.Errorf("FindRoot(%s) = %v, want the not-in-a-checkout error", dir, err)
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "go.mod"), []byte("module example.com/other\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err = FindRoot(context.Background(), other); err == nil || !strings.Contains(err.Error(), "not benchline's go.mod") {
		t.Errorf("FindRoot(another module) = %v, want the not-benchline error", err)
	}
}

// fakeExec answers commands from a table and counts the calls.
type fakeExec struct {
	outputs map[string]string
	fail    map[string]bool
	calls   map[string]int
}

func (f *fakeExec) run(_ context.Context, _ string, argv []string) ([]byte, error) {
	key := strings.Join(argv, " ")
	f.calls[key]++
	if f.fail[key] {
		return []byte(f.outputs[key]), errors.New("exit status 1")
	}
	return []byte(f.outputs[key]), nil
}

func TestRunnerReadsGoalsAndNeeds(t *testing.T) {
	absent := Need{What: "the moon", Present: func() bool { return false }}
	figs := []Figure{
		{Name: "ratio", Pkg: "./p/", Bench: "X", Line: "BenchmarkX/a", RefLine: "BenchmarkX/b", Metric: "runs/s", Unit: "× b", Goal: Goal{AtLeast: true, Value: 0.8}},
		{Name: "same-command", Pkg: "./p/", Bench: "X", Line: "BenchmarkX/b", Metric: "ns/op", Scale: 1e-6, Unit: "ms"},
		{Name: "reference", Pkg: "./q/", Bench: "Y", Line: "BenchmarkY", Metric: "checks/cpu-s", Reference: 50000, Unit: "× ref", Goal: Goal{AtLeast: true, Value: 50}},
		{Name: "self", Kind: Self, Args: []string{"bench", "eval"}, Field: "ratio", Unit: "×", Goal: Goal{AtLeast: true, Value: 0.5}},
		{Name: "script", Kind: Script, Args: []string{"s.sh"}, Pattern: bfclMedianRatio, Unit: "×"},
		{Name: "needs-moon", Pkg: "./p/", Bench: "X", Line: "BenchmarkX/a", Metric: "runs/s", Unit: "runs/s", Needs: []Need{absent}},
		{Name: "broken", Pkg: "./r/", Bench: "Z", Line: "BenchmarkZ", Metric: "ns/op", Unit: "ns"},
		{Name: "missing-line", Pkg: "./q/", Bench: "Y", Line: "BenchmarkNope", Metric: "ns/op", Unit: "ns"},
	}
	fx := &fakeExec{calls: map[string]int{}, fail: map[string]bool{"go test -run ^$ -bench Z ./r/": true}, outputs: map[string]string{
		"go test -run ^$ -bench X ./p/": "BenchmarkX/a-2 10 100 ns/op 72 runs/s\nBenchmarkX/b-2 10 2000000 ns/op 90 runs/s\nPASS\n",
		"go test -run ^$ -bench Y ./q/": "BenchmarkY 10 1 ns/op 2000000 checks/cpu-s\n",
		"/bin/benchline bench eval":     "some log\n{\"ratio\": 0.45, \"run_id\": \"x\"}\n",
		"/root/s.sh":                    "pair 1: ...\nmedian ratio over 5 pairs: 37.9x (range 34-46x)\n",
		"go test -run ^$ -bench Z ./r/": "--- FAIL: BenchmarkZ\n",
	}}
	r := &Runner{Root: "/root", Self: "/bin/benchline", Exec: fx.run}
	rows := r.Run(context.Background(), figs, false)
	got := map[string]Row{}
	for _, row := range rows {
		got[row.Name] = row
	}
	check := func(name, status string, measured float64, ratio float64, met bool) {
		t.Helper()
		row := got[name]
		if row.Status != status {
			t.Fatalf("%s: status %q (%s), want %q", name, row.Status, row.Detail, status)
		}
		if status != "ok" {
			return
		}
		if d := *row.Measured - measured; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s: measured %v, want %v", name, *row.Measured, measured)
		}
		if ratio == 0 {
			if row.RatioToGoal != nil {
				t.Errorf("%s: ratio to goal %v without a goal", name, *row.RatioToGoal)
			}
			return
		}
		if d := *row.RatioToGoal - ratio; d > 1e-9 || d < -1e-9 || *row.Met != met {
			t.Errorf("%s: ratio to goal %v met %v, want %v %v", name, *row.RatioToGoal, *row.Met, ratio, met)
		}
	}
	check("ratio", "ok", 0.8, 1, true)
	check("same-command", "ok", 2, 0, false)
	check("reference", "ok", 40, 0.8, false)
	check("self", "ok", 0.45, 0.9, false)
	check("script", "ok", 37.9, 0, false)
	check("needs-moon", "not run", 0, 0, false)
	check("broken", "failed", 0, 0, false)
	check("missing-line", "failed", 0, 0, false)
	if d := got["needs-moon"].Detail; d != "needs the moon" {
		t.Errorf("needs-moon detail %q", d)
	}
	if d := got["broken"].Detail; !strings.Contains(d, "exit status 1") || !strings.Contains(d, "--- FAIL: BenchmarkZ") {
		t.Errorf("broken detail %q: want the error and the output's tail", d)
	}
	if n := fx.calls["go test -run ^$ -bench X ./p/"]; n != 1 {
		t.Errorf("the shared command ran %d times, want once", n)
	}
	if n := fx.calls["go test -run ^$ -bench Y ./q/"]; n != 1 {
		t.Errorf("the shared command ran %d times, want once", n)
	}

	// Selected with --only, a figure runs even when its needs look missing.
	rows = (&Runner{Root: "/root", Self: "/bin/benchline", Exec: fx.run}).Run(context.Background(), figs[5:6], true)
	if rows[0].Status != "ok" {
		t.Errorf("selected needs-moon: %+v", rows[0])
	}
	// And when it then fails, the error says what it needed.
	moonBroken := figs[6]
	moonBroken.Needs = []Need{absent}
	rows = (&Runner{Root: "/root", Self: "/bin/benchline", Exec: fx.run}).Run(context.Background(), []Figure{moonBroken}, true)
	if rows[0].Status != "failed" || !strings.HasPrefix(rows[0].Detail, "selected with --only although it needs the moon: ") {
		t.Errorf("selected, missing and failed: %+v", rows[0])
	}

	var buf bytes.Buffer
	if err := WriteTable(&buf, []Row{got["ratio"], got["needs-moon"], got["broken"]}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| ratio | 0.8 | × b | ≥ 0.8 | 1.00 | yes | `go test -run '^$' -bench X ./p/` |",
		"| needs-moon | not run: needs the moon | runs/s | – | – | – |",
		"| broken | failed (see above) |",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, buf.String())
		}
	}
}
