package registry_test

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/internal/registry"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
)

// TestDefault checks the list: every benchmark validates, every task has
// its builder and every builder its task or is built-only, demo models are
// baselines, and the derived lookups agree with the list.
func TestDefault(t *testing.T) {
	reg := registry.Default()
	builders, tasks := reg.Builders(), reg.Tasks(benchmark.Deps{})
	if got, want := strings.Join(builders.Names(), ","), strings.Join(reg.Names(), ","); got != want {
		t.Errorf("builders %s, benchmarks %s", got, want)
	}
	for _, name := range tasks.Names() {
		if _, err := builders.Get(name); err != nil {
			t.Errorf("task %s has no builder: %v", name, err)
		}
	}
	for _, b := range reg.All() {
		_, err := tasks.Get(b.Name())
		if (err == nil) != (b.NewTask != nil) {
			t.Errorf("%s: task registered %v, NewTask set %v", b.Name(), err == nil, b.NewTask != nil)
		}
		if b.Demo != nil {
			for _, m := range b.Demo.Models {
				if !strings.HasPrefix(m, "baseline/") {
					t.Errorf("%s: demo model %s is not a baseline", b.Name(), m)
				}
			}
		}
	}
	want := map[string]bool{"bfcl-ast": false, "ifevalcode": false, "reporteval-sections": false}
	for _, s := range reg.Scorers() {
		if _, ok := want[s.Name]; ok {
			want[s.Name] = true
		}
	}
	for name, found := range want {
		if !found {
			t.Errorf("line scorer %s (a contract in design.md) is not registered", name)
		}
	}
}

// TestEveryTableHasColumns checks every registered builder's table is one
// schemas knows the columns of, so reading its parts through
// catalog.Checked checks their columns (a part of another table fails).
func TestEveryTableHasColumns(t *testing.T) {
	for _, b := range registry.Default().All() {
		tbl := b.Builder.Schema()
		cols, ok := schemas.Columns(tbl)
		if !ok || len(cols) == 0 {
			t.Errorf("%s: schemas.Columns(%s v%d) unknown: add its row type to schemas.rowTypes", b.Name(), tbl.Name, tbl.Version)
		}
	}
}

type fakeBuilder struct {
	datasets.Builder
	name string
}

func (b fakeBuilder) Name() string { return b.name }

type fakeTask struct {
	scorers.Task
	dataset string
}

func (t fakeTask) Dataset() string { return t.dataset }

func score(context.Context, benchmark.ScoreEnv, io.Reader, io.Writer) error { return nil }

func TestNewRejects(t *testing.T) {
	ok := func(name string) benchmark.Benchmark {
		return benchmark.Benchmark{Builder: fakeBuilder{name: name}, Description: name,
			NewTask: func(benchmark.Deps) scorers.Task { return fakeTask{dataset: name} }}
	}
	withScorer := func(b benchmark.Benchmark, s benchmark.LineScorer) benchmark.Benchmark {
		b.Scorers = append(b.Scorers, s)
		return b
	}
	withCluster := func(b benchmark.Benchmark, f func(schemas.ResultRow) string, by string) benchmark.Benchmark {
		b.Cluster, b.ClusterBy = f, by
		return b
	}
	byCategory := func(r schemas.ResultRow) string { return r.Category }
	cases := []struct {
		name    string
		list    []benchmark.Benchmark
		invalid bool // ErrInvalid, else another error
	}{
		{"no builder", []benchmark.Benchmark{{Description: "x"}}, true},
		{"no description", []benchmark.Benchmark{{Builder: fakeBuilder{name: "a"}}}, true},
		{"task for another dataset", []benchmark.Benchmark{{Builder: fakeBuilder{name: "a"}, Description: "a",
			NewTask: func(benchmark.Deps) scorers.Task { return fakeTask{dataset: "b"} }}}, true},
		{"nil task", []benchmark.Benchmark{{Builder: fakeBuilder{name: "a"}, Description: "a",
			NewTask: func(benchmark.Deps) scorers.Task { return nil }}}, true},
		{"demo models without a task", []benchmark.Benchmark{{Builder: fakeBuilder{name: "a"}, Description: "a",
			Demo: &benchmark.Demo{Models: []string{"baseline/reference"}}}}, true},
		{"scorer name", []benchmark.Benchmark{withScorer(ok("a"), benchmark.LineScorer{Name: "Bad Name", Short: "s", Score: score})}, true},
		{"scorer without func", []benchmark.Benchmark{withScorer(ok("a"), benchmark.LineScorer{Name: "a", Short: "s"})}, true},
		{"cluster without its description", []benchmark.Benchmark{withCluster(ok("a"), byCategory, "")}, true},
		{"cluster description without a cluster", []benchmark.Benchmark{withCluster(ok("a"), nil, "category")}, true},
		{"duplicate benchmark", []benchmark.Benchmark{ok("a"), ok("a")}, false},
		{"duplicate scorer", []benchmark.Benchmark{
			withScorer(ok("a"), benchmark.LineScorer{Name: "s", Short: "s", Score: score}),
			withScorer(ok("b"), benchmark.LineScorer{Name: "s", Short: "s", Score: score})}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := registry.New(tc.list...)
			if err == nil {
				t.Fatal("accepted")
			}
			if errors.Is(err, benchmark.ErrInvalid) != tc.invalid {
				t.Errorf("error %v: ErrInvalid %v, want %v", err, !tc.invalid, tc.invalid)
			}
		})
	}
	reg, err := registry.New(ok("a"), withCluster(ok("b"), byCategory, "category"))
	if err != nil {
		t.Fatalf("a valid list: %v", err)
	}
	if cl := reg.Clusters(); len(cl) != 1 || cl["b"] == nil || cl["b"](schemas.ResultRow{Category: "x"}) != "x" {
		t.Errorf("Clusters() = %v", cl)
	}
}

// TestNoOtherBenchmarkList checks that no non-test package outside the
// benchmarks' own (datasets/<x>, scorers/<x>) and the list imports a
// benchmark's package: the list is the only place that names them. The
// pipeline benchmark (internal/app's bench commands) drives the synthetic
// load, which is not a benchmark of models.
func TestNoOtherBenchmarkList(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go tool on PATH: cannot list imports")
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}:{{join .Imports " "}}`, "github.com/benchline/benchline/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/benchline/benchline/"
	allowed := map[string]bool{
		"internal/app -> datasets/synthetic": true,
		"internal/app -> scorers/synthetic":  true,
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, ":")
		pkg = strings.TrimPrefix(pkg, mod)
		if strings.HasPrefix(pkg, "datasets/") || strings.HasPrefix(pkg, "scorers/") || pkg == "internal/registry" {
			continue
		}
		for _, imp := range strings.Fields(imports) {
			imp = strings.TrimPrefix(imp, mod)
			if (strings.HasPrefix(imp, "datasets/") || strings.HasPrefix(imp, "scorers/")) && !allowed[pkg+" -> "+imp] {
				t.Errorf("%s imports %s: name benchmarks only in internal/registry's list", pkg, imp)
			}
		}
	}
}
