package reporteval

import (
	"context"
	"io"
	"net/http"

	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/scorers"
	scorer "github.com/benchline/benchline/scorers/reporteval"
)

// DemoJudges are the judges of the demo and the end-to-end test: a panel
// of three baseline judges (the task's oracles, one that breaks a tenth of
// its replies, and one biased to the top of every scale, which the
// agreement figures expose), and the asymmetric mode with a baseline
// proposer and checker, so that both factuality modes show side by side.
var DemoJudges = map[string]string{
	judge.RoleJudge:    "baseline/judge,baseline/judge-malformed-0.1,baseline/judge-yes",
	judge.RoleProposer: "baseline/judge",
	judge.RoleChecker:  "baseline/judge",
}

// NewTask is the task a worker runs, with the worker's web fetcher (none
// in Deps{}: Evaluate then fails every sample as an infrastructure error).
func NewTask(d benchmark.Deps) scorers.Task {
	t := scorer.Task{}
	if d.Web != nil {
		t.Fetcher = d.Web
	}
	return t
}

// Benchmark registers DeepResearch-ReportEval: topics and reports are
// built, the section split behind redundancy is a line scorer, and the
// task judges each report's quality, redundancy and factuality. The demo
// builds the fixtures with their reports as references, so the baseline
// models write the reports judged, and serves the fixtures' cited sources
// (sources.benchline.test) locally.
var Benchmark = benchmark.Benchmark{
	Builder:     Builder{},
	Description: "DeepResearch-ReportEval: research reports on 100 topics, judged for quality, redundancy and factuality (cited sources fetched; a checker that cannot see the report)",
	NewTask:     NewTask,
	Demo: &benchmark.Demo{
		Params: map[string]string{ParamReports: ReportsReference},
		Models: []string{"baseline/reference", "baseline/noisy-0.3"},
		Judges: DemoJudges,
		Note: "reports: written by the model under test (baseline/reference answers with each fixture's report); " +
			"judges: a panel of baseline/judge (the task's rules), baseline/judge-malformed-0.1 and baseline/judge-yes " +
			"(biased to the top of every scale); asymmetric factuality: baseline/judge splits reports into claims, " +
			"baseline/judge checks each against its source alone (all deterministic baselines, not LLMs); cited " +
			"sources: " + SourcesHost + ", served locally",
		Hosts: map[string]http.Handler{SourcesHost: SourcesHandler()},
	},
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
id is echoed verbatim; a line without one (the original's qwen-reports.jsonl
has none) gets the id the builder gives its topic's row: the hex MD5 of its
"topic". Other fields are ignored. See docs/benchmarks/reporteval.md.

A malformed line still gets its output line, with sections [] and an "error"
naming the line; the command then exits non-zero, listing those lines.`,
		Score: func(ctx context.Context, _ benchmark.ScoreEnv, in io.Reader, out io.Writer) error {
			return scorer.ScoreSectionsLines(ctx, in, out)
		},
	}},
}
