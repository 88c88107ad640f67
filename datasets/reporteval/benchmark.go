package reporteval

import (
	"context"
	"io"

	"github.com/benchline/benchline/internal/benchmark"
	scorer "github.com/benchline/benchline/scorers/reporteval"
)

// Benchmark registers DeepResearch-ReportEval: its topics and reports are
// built and the section split behind redundancy scoring is a line scorer;
// the judged evaluation (quality, redundancy, factuality) has no task yet,
// so the demo builds the dataset and evaluates no model.
var Benchmark = benchmark.Benchmark{
	Builder:     Builder{},
	Description: "DeepResearch-ReportEval: research reports on 100 topics, judged for quality, redundancy and factuality (dataset and section split; judging not yet)",
	Demo:        &benchmark.Demo{},
	Scorers: []benchmark.LineScorer{{
		Name:  "reporteval-sections",
		Short: "Split ReportEval reports into the sections redundancy pairs are drawn from, as the original does",
		Long: `Reads JSON lines {"id", "report"} and writes one JSON line {"id", "skipped",
"sections"} per input line, in input order. skipped is true when the original
DeepResearch-ReportEval code skips the report as too short (at most 3
paragraphs); sections are the section texts (heading line, newline, body) left
after the original's split at "## " headings and its filters (drop the first
and last section, those containing "https" or shorter than 200 characters, then
the first and last again): the candidates redundancy pairs are sampled from.
id is echoed verbatim; other fields (such as a report file's "topic") are
ignored. See docs/benchmarks/reporteval.md.

A malformed line still gets its output line, with sections [] and an "error"
naming the line; the command then exits non-zero, listing those lines.`,
		Score: func(ctx context.Context, _ benchmark.ScoreEnv, in io.Reader, out io.Writer) error {
			return scorer.ScoreSectionsLines(ctx, in, out)
		},
	}},
}
