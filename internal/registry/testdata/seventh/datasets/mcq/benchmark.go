package mcq

import (
	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/scorers"
	scorer "github.com/benchline/benchline/scorers/mcq"
)

// Benchmark registers the multiple-choice questions.
var Benchmark = benchmark.Benchmark{
	Builder:     Builder{},
	Description: "multiple-choice questions, scored by the answer's letter",
	NewTask:     func(benchmark.Deps) scorers.Task { return scorer.Task{} },
	Demo:        &benchmark.Demo{Models: []string{"baseline/reference", "baseline/noisy-0.3"}},
}
