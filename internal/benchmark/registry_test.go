package benchmark_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
)

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
			_, err := benchmark.NewRegistry(tc.list...)
			if err == nil {
				t.Fatal("accepted")
			}
			if errors.Is(err, benchmark.ErrInvalid) != tc.invalid {
				t.Errorf("error %v: ErrInvalid %v, want %v", err, !tc.invalid, tc.invalid)
			}
		})
	}
	reg, err := benchmark.NewRegistry(ok("a"), withCluster(ok("b"), byCategory, "category"))
	if err != nil {
		t.Fatalf("a valid list: %v", err)
	}
	if cl := reg.Clusters(); len(cl) != 1 || cl["b"] == nil || cl["b"](schemas.ResultRow{Category: "x"}) != "x" {
		t.Errorf("Clusters() = %v", cl)
	}
}

// TestLookups: a registry finds each benchmark's builder and task by
// name, builds the tasks of WithDeps once with its deps, and names what it
// has when a name is unknown.
func TestLookups(t *testing.T) {
	var built []benchmark.Deps
	withTask := benchmark.Benchmark{Builder: fakeBuilder{name: "a"}, Description: "a",
		NewTask: func(d benchmark.Deps) scorers.Task { built = append(built, d); return fakeTask{dataset: "a"} }}
	buildOnly := benchmark.Benchmark{Builder: fakeBuilder{name: "b"}, Description: "b"}
	reg, err := benchmark.NewRegistry(withTask, buildOnly)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := reg.Builder("b"); err != nil || b.Name() != "b" {
		t.Errorf("Builder(b) = %v, %v", b, err)
	}
	if _, err := reg.Builder("c"); err == nil || !strings.Contains(err.Error(), "[a b]") {
		t.Errorf("Builder(c): %v, want an error naming a and b", err)
	}
	if _, err := reg.Task("b"); err == nil || !strings.Contains(err.Error(), "[a]") {
		t.Errorf("Task(b) of a build-only benchmark: %v, want an error naming a", err)
	}
	built = nil
	bound := reg.WithDeps(benchmark.Deps{Store: blobtest.NewMemory()})
	for range 2 {
		if task, err := bound.Task("a"); err != nil || task.Dataset() != "a" {
			t.Errorf("Task(a) = %v, %v", task, err)
		}
	}
	if len(built) != 1 || built[0].Store == nil {
		t.Errorf("WithDeps built the task with %+v, want once with the store", built)
	}
}
