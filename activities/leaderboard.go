package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/internal/site"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
)

// Leaderboard are the activities of RefreshLeaderboard.
type Leaderboard struct {
	Store blob.Store
	// Benchmarks are the registered benchmarks: their tasks fix run plans
	// (versions, metrics), their descriptions go on the board.
	Benchmarks *benchmark.Registry
	// Client waits for a run another workflow started (WaitRun).
	Client client.Client
	// HTTP posts the boards' webhooks [http.DefaultClient].
	HTTP *http.Client
}

// BoardCell is one (benchmark, model) cell of a board, resolved to its run.
type BoardCell struct {
	Dataset string
	Version string
	Model   string
	RunID   string
	// Request is the run's request, pinned to Version.
	Request runs.Request
	// Finished is true when the run's summary exists: it is reused as is.
	Finished bool
}

// ResolveBoardInput asks for a board's cells.
type ResolveBoardInput struct {
	Board leaderboard.Board
}

// ResolveBoard pins each benchmark of the board to a dataset version (one
// version for all its models) and derives each (benchmark, model) run with
// activities.NewPlan, the derivation `benchline eval` uses, so a board and
// an on-demand evaluation of the same plan share one run. It writes
// nothing. A benchmark that is not registered or has no published version
// fails the refresh without a retry, naming it.
func (a *Leaderboard) ResolveBoard(ctx context.Context, in ResolveBoardInput) (_ []BoardCell, err error) {
	defer func() { err = classify(err) }()
	b := in.Board
	var cells []BoardCell
	for i, bm := range b.Benchmarks {
		if _, err := a.Benchmarks.Task(bm.Dataset); err != nil {
			if _, derr := a.Benchmarks.DynamicBuilder(bm.Dataset); derr != nil {
				return nil, invalid(fmt.Errorf("board %s: benchmarks[%d]: %w", b.Name, i, err))
			}
		}
		m, err := catalog.Resolve(ctx, a.Store, bm.Ref())
		if err != nil {
			if errors.Is(err, catalog.ErrNoDataset) {
				return nil, invalid(fmt.Errorf("board %s: benchmarks[%d]: %s: %w (build it first: benchline dataset build %s, or --task FILE for a task file)", b.Name, i, bm.Ref(), err, bm.Dataset))
			}
			return nil, err
		}
		task, err := a.Benchmarks.TaskOf(ctx, a.Store, m)
		if err != nil {
			return nil, classifyTask(fmt.Errorf("board %s: benchmarks[%d]: %w", b.Name, i, err))
		}
		for _, model := range b.Models {
			if !bm.Evaluates(model.Model) {
				continue
			}
			req := runs.Request{Dataset: m.Name + "@" + m.Version, Model: model.Model, Judges: bm.Judges, Params: b.Params,
				Seed: b.Seed, ShardSize: b.ShardSize, Limit: b.Limit, Batch: b.BatchFor(model)}
			plan := NewPlan(req, m, task, time.Time{})
			done, err := blob.Exists(ctx, a.Store, runs.SummaryKey(plan.RunID))
			if err != nil {
				return nil, err
			}
			cells = append(cells, BoardCell{Dataset: m.Name, Version: m.Version, Model: model.Model, RunID: plan.RunID, Request: req, Finished: done})
		}
	}
	return cells, nil
}

// WaitRunInput names a run another workflow is evaluating.
type WaitRunInput struct {
	RunID      string
	WorkflowID string
}

// ErrTypeRunFailed is the error type of WaitRun when the run it waited for
// failed: not retried.
const ErrTypeRunFailed = "RunFailed"

// WaitRun waits for an evaluation workflow this refresh did not start
// (a run already in progress when the refresh wanted it), heartbeating.
func (a *Leaderboard) WaitRun(ctx context.Context, in WaitRunInput) error {
	if a.Client == nil {
		return errors.New("leaderboard: no Temporal client to wait for run " + in.RunID)
	}
	defer heartbeatEvery(ctx, 10*time.Second, nil)()
	err := a.Client.GetWorkflow(ctx, in.WorkflowID, "").Get(ctx, nil)
	var failed *temporal.WorkflowExecutionError
	if errors.As(err, &failed) {
		// The run ended badly: waiting again would say the same.
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("run %s: %v", in.RunID, err), ErrTypeRunFailed, err)
	}
	if err != nil {
		return fmt.Errorf("run %s: %w", in.RunID, err)
	}
	return nil
}

// CellOutcome is what a refresh got for one cell.
type CellOutcome struct {
	BoardCell
	// Reused is true when the refresh started no evaluation for the cell.
	Reused bool
	// Error is why the cell's run failed; empty when it has a summary.
	Error string
}

// WriteBoardInput asks for a board stamp to be written.
type WriteBoardInput struct {
	Board     leaderboard.Board
	Stamp     string
	CreatedAt time.Time
	Cells     []CellOutcome
}

// WriteBoardResult says where the stamp went.
type WriteBoardResult struct {
	Cells   int
	Failed  []leaderboard.FailedCell
	SiteKey string
	// Changes is changes.json in one line ("no change since …"),
	// ChangeList its list of changes ([] when nothing changed).
	Changes    string
	ChangeList []leaderboard.Change
	// Webhook says whether the board's webhook took the changes; empty
	// when none was due.
	Webhook string
}

// WriteBoard assembles the stamp's Scores from the runs' summaries (each
// cell the task's first metric), compares the models of each benchmark
// (leaderboard.Compare on their samples) for their rank ranges, writes
// scores.json, scores.parquet and the site, and only then moves the
// board's latest pointer to the stamp. Every key is fixed by the board and
// the stamp, so a retry rewrites the same objects.
func (a *Leaderboard) WriteBoard(ctx context.Context, in WriteBoardInput) (_ WriteBoardResult, err error) {
	defer func() { err = classify(err) }()
	defer heartbeatEvery(ctx, 5*time.Second, nil)()
	s, err := a.assemble(ctx, in)
	if err != nil {
		return WriteBoardResult{}, err
	}
	if err := blob.PutJSON(ctx, a.Store, leaderboard.ScoresKey(s.Board, s.Stamp), s); err != nil {
		return WriteBoardResult{}, err
	}
	if err := writeScoresParquet(ctx, a.Store, s); err != nil {
		return WriteBoardResult{}, err
	}
	ch, err := a.changes(ctx, s)
	if err != nil {
		return WriteBoardResult{}, err
	}
	if err := blob.PutJSON(ctx, a.Store, leaderboard.ChangesKey(s.Board, s.Stamp), ch); err != nil {
		return WriteBoardResult{}, err
	}
	if err := blob.PutBytes(ctx, a.Store, leaderboard.StampMarkerKey(s.Board, s.Stamp), nil); err != nil {
		return WriteBoardResult{}, err
	}
	if err := site.Write(ctx, a.Store, s); err != nil {
		return WriteBoardResult{}, err
	}
	if err := blob.PutBytes(ctx, a.Store, leaderboard.LatestKey(s.Board), []byte(s.Stamp)); err != nil {
		return WriteBoardResult{}, err
	}
	if err := blob.PutBytes(ctx, a.Store, leaderboard.BoardMarkerKey(s.Board), []byte(s.Stamp)); err != nil {
		return WriteBoardResult{}, err
	}
	res := WriteBoardResult{Cells: len(s.Cells), Failed: s.Failed, SiteKey: leaderboard.SiteKey(s.Board, s.Stamp),
		Changes: ch.Summary(), ChangeList: ch.List()}
	res.Webhook = a.notify(ctx, in.Board.Webhook, ch)
	return res, nil
}

// changes compares the stamp with the board's previous one.
func (a *Leaderboard) changes(ctx context.Context, s leaderboard.Scores) (leaderboard.Changes, error) {
	prev, found, err := leaderboard.PreviousStamp(ctx, a.Store, s.Board, s.Stamp)
	if err != nil {
		return leaderboard.Changes{}, err
	}
	return leaderboard.Diff(ctx, a.Store, prev, found, s, func(runID, model, dataset, metric string) (leaderboard.Samples, error) {
		var cluster func(schemas.ResultRow) string
		if reg, err := a.Benchmarks.Get(dataset); err == nil {
			cluster = reg.Cluster
		}
		return a.samples(ctx, runID, model, metric, cluster)
	})
}

// samples reads a run's values of metric for a paired comparison: from the
// run's explorer index when it has one for metric and the benchmark has no
// clusters (a million-sample run: sample index and score, 16 bytes a
// sample), otherwise from its results (leaderboard.LoadSamples).
func (a *Leaderboard) samples(ctx context.Context, runID, model, metric string, cluster func(schemas.ResultRow) string) (leaderboard.Samples, error) {
	if cluster == nil {
		s, ok, err := site.IndexedSamples(ctx, a.Store, runID, model, metric)
		if err != nil || ok {
			return s, err
		}
	}
	return leaderboard.LoadSamples(ctx, a.Store, runID, model, metric, cluster)
}

// notify POSTs the changes to the board's webhook when it names one and
// something changed. A webhook that does not accept them is reported, not
// an error: the stamp is written and latest has moved. The report and the
// log show the URL as leaderboard.RedactURL does (its scheme, host and
// path).
func (a *Leaderboard) notify(ctx context.Context, w leaderboard.Webhook, ch leaderboard.Changes) string {
	if !w.Due() || ch.NoChange {
		return ""
	}
	client := a.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	n, err := leaderboard.Notify(ctx, client, w, ch)
	if err != nil {
		slog.Warn("leaderboard: webhook not delivered", "board", ch.Board, "stamp", ch.Stamp, "attempts", n, "err", err)
		return fmt.Sprintf("not delivered after %d attempts: %v", n, err)
	}
	return fmt.Sprintf("delivered (attempt %d)", n)
}

// ScoresParquetKey is the key of a stamp's scores.parquet.
func ScoresParquetKey(board, stamp string) string {
	return leaderboard.Prefix(board, stamp) + "/scores.parquet"
}

func (a *Leaderboard) assemble(ctx context.Context, in WriteBoardInput) (leaderboard.Scores, error) {
	b := in.Board
	s := leaderboard.Scores{Board: b.Name, Stamp: in.Stamp, Title: b.Title, CreatedAt: in.CreatedAt.UTC(),
		Cells: []leaderboard.Cell{}, Runs: []leaderboard.Run{}, Comparisons: []leaderboard.Comparison{}}
	for _, m := range b.Models {
		m.Baseline = strings.HasPrefix(m.Model, "baseline/")
		s.Models = append(s.Models, m)
	}
	byDataset := map[string][]CellOutcome{}
	var order []string
	for _, c := range in.Cells {
		if _, ok := byDataset[c.Dataset]; !ok {
			order = append(order, c.Dataset)
		}
		byDataset[c.Dataset] = append(byDataset[c.Dataset], c)
	}
	for _, dataset := range order {
		task, err := a.Benchmarks.TaskOfVersion(ctx, a.Store, dataset, byDataset[dataset][0].Version)
		if err != nil {
			return s, classifyTask(err)
		}
		if err := a.assembleBenchmark(ctx, &s, b, task, byDataset[dataset]); err != nil {
			return s, err
		}
	}
	return s, nil
}

// assembleBenchmark adds one benchmark's cells, runs and comparisons to s.
func (a *Leaderboard) assembleBenchmark(ctx context.Context, s *leaderboard.Scores, b leaderboard.Board, task scorers.Task, outcomes []CellOutcome) error {
	first := outcomes[0]
	metrics := task.Metrics()
	bm := leaderboard.Benchmark{Dataset: first.Dataset, Version: first.Version, Headline: metrics[0], Metrics: metrics, TaskVersion: task.Version()}
	var cluster func(schemas.ResultRow) string
	if reg, err := a.Benchmarks.Get(first.Dataset); err == nil {
		bm.Description, bm.ClusterBy, cluster = reg.Description, reg.ClusterBy, reg.Cluster
	} else if tf, ok := task.(clusteredTask); ok {
		bm.Description, bm.ClusterBy = tf.Description(), tf.ClusterBy()
		if bm.ClusterBy != "" {
			cluster = tf.Cluster
		}
	}
	s.Benchmarks = append(s.Benchmarks, bm)
	var refs []leaderboard.RunRef
	firstCell := len(s.Cells)
	for _, o := range outcomes {
		if o.Error != "" {
			s.Failed = append(s.Failed, leaderboard.FailedCell{Dataset: o.Dataset, Model: o.Model, RunID: o.RunID, Error: o.Error})
			continue
		}
		var sum aggregate.Summary
		if err := blob.GetJSON(ctx, a.Store, runs.SummaryKey(o.RunID), &sum); err != nil {
			return fmt.Errorf("board %s: %s on %s: run %s: %w", b.Name, o.Model, o.Dataset, o.RunID, err)
		}
		s.Runs = append(s.Runs, leaderboard.Run{RunID: o.RunID, Dataset: o.Dataset, Version: o.Version, Model: o.Model,
			Judges: o.Request.Judges, TaskVersion: bm.TaskVersion, Reused: o.Reused, Summary: sum})
		s.Cells = append(s.Cells, headlineCell(o, bm.Headline, sum))
		refs = append(refs, leaderboard.RunRef{RunID: o.RunID, Model: o.Model})
	}
	// A run too large for the static site gets its explorer index first
	// (once per run): its comparisons pair on the index's scores.
	for _, r := range s.Runs[len(s.Runs)-len(refs):] {
		if err := site.ExplorerIndex(ctx, a.Store, r, bm.Headline); err != nil {
			return err
		}
	}
	// Each pair's comparison is computed once and stored beside its runs;
	// a later stamp of the same runs reads it instead of the samples.
	load := func(k int) (leaderboard.Samples, error) {
		return a.samples(ctx, refs[k].RunID, refs[k].Model, bm.Headline, cluster)
	}
	cmp, ranks, err := leaderboard.CompareStored(ctx, a.Store, bm.Dataset, bm.Headline, refs, load)
	if err != nil {
		return err
	}
	s.Comparisons = append(s.Comparisons, cmp...)
	for i := firstCell; i < len(s.Cells); i++ {
		cell := &s.Cells[i]
		rr, ok := ranks[cell.Model]
		if !ok {
			rr = ranks[cell.RunID]
		}
		cell.RankLow, cell.RankHigh = rr.Low, rr.High
	}
	return nil
}

// headlineCell is a run's cell: its summary's headline metric.
func headlineCell(o CellOutcome, headline string, sum aggregate.Summary) leaderboard.Cell {
	cell := leaderboard.Cell{Dataset: o.Dataset, Version: o.Version, Model: o.Model, Metric: headline, RunID: o.RunID}
	for _, m := range sum.Metrics {
		if m.Name == headline {
			cell.Mean, cell.CILow, cell.CIHigh, cell.N, cell.StdErr, cell.CIMethod = m.Mean, m.CILow, m.CIHigh, int64(m.N), m.StdErr, m.CIMethod
			cell.Clusters = int64(m.Clusters)
		}
	}
	return cell
}

func writeScoresParquet(ctx context.Context, store blob.Store, s leaderboard.Scores) error {
	baseline := map[string]bool{}
	for _, m := range s.Models {
		baseline[m.Model] = m.Baseline
	}
	rows := make([]schemas.ScoreRow, len(s.Cells))
	for i, c := range s.Cells {
		rows[i] = schemas.ScoreRow{Board: s.Board, Stamp: s.Stamp, Dataset: c.Dataset, Version: c.Version, Model: c.Model,
			Baseline: baseline[c.Model], Metric: c.Metric, Mean: c.Mean, StdErr: c.StdErr, CILow: c.CILow, CIHigh: c.CIHigh,
			CIMethod: c.CIMethod, N: c.N, RankLow: int32(c.RankLow), RankHigh: int32(c.RankHigh), RunID: c.RunID}
	}
	w := pq.NewWriter[schemas.ScoreRow](ctx, store, ScoresParquetKey(s.Board, s.Stamp), pq.Options{})
	if err := w.Write(rows); err != nil {
		w.Abort()
		return err
	}
	_, err := w.Close()
	return err
}
