package registry

import (
	"github.com/benchline/benchline/datasets/bfcl"
	"github.com/benchline/benchline/datasets/ifevalcode"
	"github.com/benchline/benchline/datasets/medrubric"
	"github.com/benchline/benchline/datasets/reporteval"
	"github.com/benchline/benchline/datasets/synthetic"
	"github.com/benchline/benchline/datasets/toolpref"
	"github.com/benchline/benchline/datasets/trbench"
	"github.com/benchline/benchline/internal/benchmark"
)

// benchmarks is the list: one line per benchmark, in the order the demo
// runs them. Adding a benchmark adds its line here and touches nothing
// else outside datasets/<name>, scorers/<name> and schemas/<name>.go.
func benchmarks() []benchmark.Benchmark {
	return []benchmark.Benchmark{
		bfcl.Benchmark,
		ifevalcode.Benchmark,
		toolpref.Benchmark,
		trbench.Benchmark,
		medrubric.Benchmark,
		reporteval.Benchmark,
		synthetic.Benchmark,
	}
}
