package trbench

import (
	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/scorers"
	judge "github.com/benchline/benchline/scorers/trbench"
)

// Benchmark registers TRBench-BFCL: reward models judging pairs of tool
// calls, asked in both answer orders.
var Benchmark = benchmark.Benchmark{
	Builder:     Builder{},
	Description: "TRBench-BFCL: generative judges and scalar reward models pick the better tool call, both answer orders (W-Avg)",
	NewTask:     func(benchmark.Deps) scorers.Task { return judge.Task{} },
	// Generative judges, then scalar reward models (the same pairs, scored
	// once each; w_avg comparable with the judges').
	Demo: &benchmark.Demo{Models: []string{"baseline/first", "baseline/second", "baseline/reference",
		"baseline/reward-reference", "baseline/reward-noisy-0.3", "baseline/reward-length"}},
	// One sample is one pair (both answer orders); the pairs built from
	// one BFCL item share it.
	Cluster:   judge.ItemOf,
	ClusterBy: "BFCL item (the pairs built from one item)",
}
