// Package sitetest builds a small board stamp for the site's tests: real
// result Parquet shards and plans in a blob.Store, summaries aggregated from
// them by package aggregate, and the Scores a refresh would hand to
// site.Write, plus two earlier stamps for the history plots; and a headless
// chromium (Browser) that the site's browser tests and the integration
// test of the demo board drive.
package sitetest

import (
	"context"
	"fmt"
	"time"

	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
)

// Board and Stamp name the fixture's stamp; EarlierStamps are the stamps
// before it, with their own scores.json.
const (
	Board = "demo"
	Stamp = "20261123T150405Z"
)

// EarlierStamps are written by Fixture before Stamp.
var EarlierStamps = []string{"20261120T090000Z", "20261121T090000Z"}

// XSS is the response of one sample (bfcl, model-a, sample index 7): a
// page must show it as text.
const XSS = `<script>window.__xss=1</script><img src=x onerror="window.__xss=2">`

// Models of the fixture: one LLM-like entry with metadata and two baselines.
var Models = []leaderboard.Model{
	{Model: "acme/model-a", DisplayName: "Model A", Organisation: "Acme", Licence: "proprietary"},
	{Model: "baseline/reference", Baseline: true},
	{Model: "baseline/noisy-0.3", Baseline: true},
}

// bench is a benchmark of the fixture.
type bench struct {
	dataset, version, task string
	metrics                []string
	cats                   []string
	samples                int
	judged                 bool
}

var benches = []bench{
	{dataset: "bfcl", version: "0123456789ab", task: "bfcl-ast/3", metrics: []string{"accuracy"}, cats: []string{"multiple", "simple"}, samples: 120},
	{dataset: "medrubric", version: "ba9876543210", task: "medrubric/2", metrics: []string{"score", "pass"}, cats: []string{"diagnosis", "treatment"}, samples: 20, judged: true},
}

// correct is the deterministic verdict of a model on a sample: the
// reference gets 9 in 10 right, model-a 7 in 10, noisy 5 in 10.
func correct(model string, i int) bool {
	switch model {
	case "baseline/reference":
		return i%10 != 3
	case "acme/model-a":
		return i%10 < 7
	default:
		return i%2 == 0
	}
}

// Fixture writes the runs (plan.json, results/shard-*.parquet,
// summary.json) and the earlier stamps' scores.json to store, and returns
// the Scores of Stamp. bfcl has 120 samples per run.
func Fixture(ctx context.Context, store blob.Store) (leaderboard.Scores, error) {
	return Sized(ctx, store, 120)
}

// Sized is Fixture with bfclSamples samples in each bfcl run (benchmarks of
// the site's size and speed use large runs).
func Sized(ctx context.Context, store blob.Store, bfclSamples int) (leaderboard.Scores, error) {
	benches := append([]bench(nil), benches...)
	benches[0].samples = bfclSamples
	created := time.Date(2026, 11, 23, 15, 4, 5, 0, time.UTC)
	s := leaderboard.Scores{Board: Board, Stamp: Stamp, Title: "Demo board", CreatedAt: created, Models: Models}
	for _, b := range benches {
		s.Benchmarks = append(s.Benchmarks, leaderboard.Benchmark{Dataset: b.dataset, Version: b.version, Headline: b.metrics[0],
			Metrics: b.metrics, TaskVersion: b.task, Description: "The " + b.dataset + " fixture of the site tests."})
		if b.dataset == "bfcl" { // medrubric's rows are left out: its run pages say so
			if err := writeDataset(ctx, store, b); err != nil {
				return s, err
			}
		}
		for _, m := range Models {
			run, err := writeRun(ctx, store, b, m.Model, created)
			if err != nil {
				return s, err
			}
			h := run.Summary.Metrics[0]
			s.Runs = append(s.Runs, run)
			s.Cells = append(s.Cells, leaderboard.Cell{Dataset: b.dataset, Version: b.version, Model: m.Model, Metric: h.Name,
				Mean: h.Mean, CILow: h.CILow, CIHigh: h.CIHigh, N: int64(h.N), RunID: run.RunID, StdErr: h.StdErr, CIMethod: h.CIMethod})
		}
	}
	rankCells(s.Cells)
	for _, b := range benches {
		var rs []leaderboard.Run
		for _, r := range s.Runs {
			if r.Dataset == b.dataset {
				rs = append(rs, r)
			}
		}
		for i := 0; i < len(rs); i++ {
			for j := i + 1; j < len(rs); j++ {
				a, c := rs[i], rs[j]
				d := a.Summary.Metrics[0].Mean - c.Summary.Metrics[0].Mean
				p := 0.5 / float64(1+i+j)
				s.Comparisons = append(s.Comparisons, leaderboard.Comparison{Dataset: b.dataset, Metric: b.metrics[0], ModelA: a.Model, ModelB: c.Model,
					RunA: a.RunID, RunB: c.RunID, N: a.Summary.Scored, Diff: d, CILow: d - 0.08, CIHigh: d + 0.08, Method: "paired-bootstrap",
					P: p, PAdjusted: min(1, 3*p), Correction: "holm", Significant: 3*p < 0.05})
			}
		}
	}
	s.Failed = []leaderboard.FailedCell{{Dataset: "medrubric", Model: "acme/model-b", Error: "gateway: acme/model-b: unknown model"}}
	for k, stamp := range EarlierStamps {
		old := leaderboard.Scores{Board: Board, Stamp: stamp, CreatedAt: created.AddDate(0, 0, k-3)}
		for _, c := range s.Cells {
			c.Mean -= 0.05 * float64(len(EarlierStamps)-k)
			old.Cells = append(old.Cells, c)
		}
		if err := blob.PutJSON(ctx, store, leaderboard.ScoresKey(Board, stamp), old); err != nil {
			return s, err
		}
	}
	return s, nil
}

// rankCells gives each cell its rank by mean within its benchmark (the
// fixture's stand-in for the paired ranking).
func rankCells(cells []leaderboard.Cell) {
	for i := range cells {
		rank := 1
		for j := range cells {
			if cells[j].Dataset == cells[i].Dataset && cells[j].Mean > cells[i].Mean {
				rank++
			}
		}
		cells[i].RankLow, cells[i].RankHigh = rank, rank
	}
}

// DatasetRow is a row of the fixture's bfcl dataset file.
type DatasetRow struct {
	ID        string   `parquet:"id"`
	Question  string   `parquet:"question"`
	Functions []string `parquet:"functions,list"`
}

func datasetKey(b bench) string {
	return fmt.Sprintf("datasets/%s/v%s/data/part-00000.parquet", b.dataset, b.version)
}

func writeDataset(ctx context.Context, store blob.Store, b bench) error {
	rows := make([]DatasetRow, b.samples)
	for i := range rows {
		rows[i] = DatasetRow{ID: fmt.Sprintf("%s-%03d", b.dataset, i), Question: fmt.Sprintf("What is the weather in city %d?", i),
			Functions: []string{"get_weather", fmt.Sprintf("get_time_%d", i%3)}}
	}
	w := pq.NewWriter[DatasetRow](ctx, store, datasetKey(b), pq.Options{RowGroupRows: 50})
	if err := w.Write(rows); err != nil {
		w.Abort()
		return err
	}
	_, err := w.Close()
	return err
}

func writeRun(ctx context.Context, store blob.Store, b bench, model string, created time.Time) (leaderboard.Run, error) {
	files := []runs.File{{Key: datasetKey(b), Rows: int64(b.samples)}}
	plan := runs.Plan{Dataset: b.dataset, DatasetVersion: b.version, Files: files, Model: model, TaskVersion: b.task,
		Metrics: b.metrics, ShardSize: 100, CreatedAt: created}
	plan.Layout()
	plan.RunID = plan.ID()
	if err := blob.PutJSON(ctx, store, runs.PlanKey(plan.RunID), plan); err != nil {
		return leaderboard.Run{}, err
	}
	for sh := 0; sh < plan.Shards; sh++ {
		rg, err := plan.Shard(sh)
		if err != nil {
			return leaderboard.Run{}, err
		}
		var rows []schemas.ResultRow
		for k := rg.First; k < rg.First+rg.Rows; k++ {
			i := int(k)
			ok := correct(model, i)
			v := 0.0
			if ok {
				v = 1
			}
			row := schemas.ResultRow{RunID: plan.RunID, SampleID: fmt.Sprintf("%s-%03d", b.dataset, i), SampleIndex: k, Shard: int32(sh),
				Category: b.cats[i%len(b.cats)], Model: model, PromptHash: fmt.Sprintf("h%03d", i),
				Response: fmt.Sprintf("answer %d from %s", i, model), Metrics: map[string]float64{b.metrics[0]: v},
				Calls: 1, Attempts: 1, PromptTokens: 100 + int64(i), CompletionTokens: 20, LatencyMS: float64(50 + i%7*10)}
			if len(b.metrics) > 1 {
				row.Metrics[b.metrics[1]] = v
			}
			if model == "acme/model-a" {
				row.CostUSD = 0.0005
			}
			if b.judged {
				row.DetailsJSON = fmt.Sprintf(`{"judge_replies":["criterion met: %t"],"rubric":"r%d"}`, ok, i)
			}
			if b.dataset == "bfcl" && model == "acme/model-a" && i == 7 {
				row.Response = XSS
			}
			if b.dataset == "bfcl" && !ok && i%10 == 9 {
				row.ErrorClass, row.ErrorMessage = "unparseable", "no function call in the reply"
			}
			if b.dataset == "bfcl" && model == "baseline/noisy-0.3" && i == 11 {
				row.ErrorClass, row.ErrorMessage, row.Metrics = schemas.ErrorClassInfrastructure, "gateway: retries exhausted", nil
			}
			rows = append(rows, row)
		}
		w := pq.NewWriter[schemas.ResultRow](ctx, store, runs.ShardKey(plan.RunID, sh), pq.Options{})
		if err := w.Write(rows); err != nil {
			w.Abort()
			return leaderboard.Run{}, err
		}
		if _, err := w.Close(); err != nil {
			return leaderboard.Run{}, err
		}
	}
	sum, err := aggregate.Compute(ctx, store, plan, aggregate.Options{})
	if err != nil {
		return leaderboard.Run{}, err
	}
	sum.Baseline = len(model) > 9 && model[:9] == "baseline/"
	sum.CreatedAt = created
	sum.Batch = model == "acme/model-a" // evaluated in batch mode: the site labels its cost
	if b.judged {
		alpha := 0.8125
		sum.Agreement = []judge.Agreement{{Set: "judge", Judges: []string{"baseline/judge", "baseline/judge-noisy-0.1"}, Scale: "nominal",
			Samples: b.samples, Items: b.samples, Paired: b.samples, Unanimous: b.samples - 3, Alpha: &alpha}}
	}
	if err := blob.PutJSON(ctx, store, runs.SummaryKey(plan.RunID), sum); err != nil {
		return leaderboard.Run{}, err
	}
	return leaderboard.Run{RunID: plan.RunID, Dataset: b.dataset, Version: b.version, Model: model, TaskVersion: b.task, Summary: sum}, nil
}
