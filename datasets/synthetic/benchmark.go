package synthetic

import (
	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/scorers"
	scorer "github.com/benchline/benchline/scorers/synthetic"
)

// Benchmark registers the synthetic load: rows of any size for measuring
// the pipeline (`benchline bench`), not a benchmark of models; it is not in
// the demo.
var Benchmark = benchmark.Benchmark{
	Builder:     Builder{},
	Description: "synthetic rows of any size for measuring the pipeline (benchline bench), not a benchmark of models",
	NewTask:     func(benchmark.Deps) scorers.Task { return scorer.Task{} },
}
