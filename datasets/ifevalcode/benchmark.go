package ifevalcode

import (
	"context"
	"io"

	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/scorers"
	scorer "github.com/benchline/benchline/scorers/ifevalcode"
)

// Benchmark registers IFEvalCode: code in 8 languages, correctness and
// instruction checks run in the sandbox, questions in English and Chinese.
var Benchmark = benchmark.Benchmark{
	Builder:     Builder{},
	Description: "IFEvalCode: code in 8 languages, correctness and instruction checks run in the sandbox, English and Chinese",
	NewTask: func(d benchmark.Deps) scorers.Task {
		return scorer.NewTask(d.Sandbox, scorer.Options{})
	},
	Demo: &benchmark.Demo{Models: []string{"baseline/reference", "baseline/noisy-0.3"}},
	Scorers: []benchmark.LineScorer{{
		Name:      "ifevalcode",
		Short:     "Score IFEvalCode responses: correctness and instruction checks in the sandbox",
		Sandboxed: true,
		Long: `Reads JSON lines {"id", "programming_language", "check_correctness", "check_instruction",
"response"} (response is the model's whole reply) and writes one JSON line
{"id", "correct", "instruction", "status", "detail"} per input, in input order.

The correctness program is assembled from the reply's first fenced code block as
IFEvalCode's harness does for each language (python, java, cpp, csharp, typescript,
javascript, php, shell) and run in the sandbox; check_instruction(response) runs in
the sandbox with Python on the whole reply. <think>...</think> reasoning is stripped
first. status is ok, failed, timeout, compile-error or sandbox-error.

Exits non-zero when an input line is malformed or a line could not be scored
because of a sandbox failure (after retries); every input still gets its line.`,
		Score: func(ctx context.Context, env benchmark.ScoreEnv, in io.Reader, out io.Writer) error {
			s := scorer.New(env.Sandbox, scorer.Options{Concurrency: env.Concurrency, Attempts: env.Attempts})
			return s.ScoreLines(ctx, in, out)
		},
	}},
}
