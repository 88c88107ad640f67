// Package registry is the list of benchmarks: one line each, in the order
// the demo runs them. A new benchmark declares its benchmark.Benchmark in
// datasets/<name>/benchmark.go and adds its line here; nothing else
// outside datasets/<name> and scorers/<name> changes (the registry test
// proves it with a benchmark that exists only in the test). The demo,
// `dataset build`, `score`, the workers and the end-to-end tests all
// iterate Default(); the Registry type is benchmark.Registry.
package registry

import (
	"github.com/benchline/benchline/datasets/bfcl"
	"github.com/benchline/benchline/datasets/ifevalcode"
	"github.com/benchline/benchline/datasets/medrubric"
	"github.com/benchline/benchline/datasets/omnicloze"
	"github.com/benchline/benchline/datasets/reporteval"
	"github.com/benchline/benchline/datasets/rmtbench"
	"github.com/benchline/benchline/datasets/synthetic"
	"github.com/benchline/benchline/datasets/taskfile"
	"github.com/benchline/benchline/datasets/toolpref"
	"github.com/benchline/benchline/datasets/trbench"
	"github.com/benchline/benchline/internal/benchmark"
)

// Default is the registry of every benchmark in the list, and of task
// files (datasets/taskfile), which are benchmarks defined by data.
func Default() *benchmark.Registry {
	return benchmark.MustRegistry(
		bfcl.Benchmark,
		ifevalcode.Benchmark,
		toolpref.Benchmark,
		trbench.Benchmark,
		medrubric.Benchmark,
		omnicloze.Benchmark,
		reporteval.Benchmark,
		rmtbench.Benchmark,
		synthetic.Benchmark,
	).WithDynamic(&taskfile.Dynamic{})
}
