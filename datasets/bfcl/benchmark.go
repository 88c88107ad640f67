package bfcl

import (
	"context"
	"io"

	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/scorers"
	scorer "github.com/benchline/benchline/scorers/bfcl"
)

// Benchmark registers BFCL: function calling checked by the AST checker.
var Benchmark = benchmark.Benchmark{
	Builder:     Builder{},
	Description: "BFCL function calling (v4 single-turn categories), scored by BFCL's AST checker",
	NewTask:     func(benchmark.Deps) scorers.Task { return scorer.Task{} },
	Demo:        &benchmark.Demo{Models: []string{"baseline/reference", "baseline/noisy-0.3"}},
	Scorers: []benchmark.LineScorer{{
		Name:  "bfcl-ast",
		Short: "Score BFCL function-calling outputs with the AST checker (JSON lines on stdin, one verdict line per input on stdout)",
		Long: `Reads JSON lines {"id", "category", "language", "functions", "model_output",
"possible_answer"}, where model_output is BFCL's decoded model output
(a list of {func_name: {arg: value}}) and possible_answer is the item's
ground_truth, and writes one JSON line {"id", "valid", "error_type"} per input
line. error_type is the BFCL reference checker's error type ("" when
valid). A malformed input line is scored valid=false with an "input_error:..."
type, and the command exits non-zero after scoring all lines.`,
		Score: func(_ context.Context, _ benchmark.ScoreEnv, in io.Reader, out io.Writer) error {
			return scorer.ScoreLines(in, out)
		},
	}},
}
