//go:build bench

package main

import "github.com/benchline/benchline/internal/perf"

// The bench command's JSON outputs, checked by TestJSONOutputsAreSnakeCase
// in the tool build (go test -tags bench).
func init() {
	jsonOutputs["bench build"] = perf.BuildBench{}
	jsonOutputs["bench eval"] = perf.EvalBench{}
	jsonOutputs["bench --json"] = []perf.Row{}
}
