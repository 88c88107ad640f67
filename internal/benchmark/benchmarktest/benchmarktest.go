// Package benchmarktest builds registries of test-only benchmarks: a task
// or a builder of a test, registered as benchline registers its own, for
// tests of the activities and commands that take a *benchmark.Registry.
package benchmarktest

import (
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
)

// tableBuilder is a builder that only names its dataset and declares its
// table: the builder of a task-only test benchmark. Its other methods are
// not to be called.
type tableBuilder struct {
	datasets.Builder
	name  string
	table schemas.Table
}

func (b tableBuilder) Name() string          { return b.name }
func (b tableBuilder) Schema() schemas.Table { return b.table }

// Task is a benchmark evaluated by task, whose dataset's versions are
// tables of table (what a test publishes in their manifests).
func Task(task scorers.Task, table schemas.Table) benchmark.Benchmark {
	return benchmark.Benchmark{
		Builder:     tableBuilder{name: task.Dataset(), table: table},
		Description: "test task " + task.Dataset(),
		NewTask:     func(benchmark.Deps) scorers.Task { return task },
	}
}

// Builder is a benchmark built by b and not evaluated.
func Builder(b datasets.Builder) benchmark.Benchmark {
	return benchmark.Benchmark{Builder: b, Description: "test builder " + b.Name()}
}

// Registry is benchmark.NewRegistry(bs...), failing t on an error.
func Registry(t testing.TB, bs ...benchmark.Benchmark) *benchmark.Registry {
	t.Helper()
	r, err := benchmark.NewRegistry(bs...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
