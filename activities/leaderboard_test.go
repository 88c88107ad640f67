package activities

import (
	"context"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/registry"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
)

// failingPuts fails every Put of a key containing bad.
type failingPuts struct {
	*blobtest.Memory
	bad string
}

func (f failingPuts) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	if strings.Contains(key, f.bad) {
		return errors.New("injected: S3 refused " + key)
	}
	return f.Memory.Put(ctx, key, r, size)
}

// boardRun writes a finished run of bfcl with the given accuracy per
// sample: plan, one result shard, summary.
func boardRun(t *testing.T, store blob.Store, runID, model string, acc []float64) {
	t.Helper()
	ctx := context.Background()
	plan := runs.Plan{RunID: runID, Dataset: "bfcl", DatasetVersion: "v1", Model: model, Shards: 1, Samples: int64(len(acc))}
	if err := blob.PutJSON(ctx, store, runs.PlanKey(runID), plan); err != nil {
		t.Fatal(err)
	}
	rows := make([]schemas.ResultRow, len(acc))
	var sum float64
	for i, a := range acc {
		rows[i] = schemas.ResultRow{RunID: runID, SampleID: string(rune('a' + i)), SampleIndex: int64(i), Model: model, Metrics: map[string]float64{"accuracy": a}}
		sum += a
	}
	w := pq.NewWriter[schemas.ResultRow](ctx, store, runs.ShardKey(runID, 0), pq.Options{})
	if err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s := aggregate.Summary{RunID: runID, Dataset: "bfcl", DatasetVersion: "v1", Model: model, Samples: int64(len(acc)),
		Metrics: []aggregate.MetricStat{{Name: "accuracy", N: len(acc), Mean: sum / float64(len(acc)), CILow: 0.1, CIHigh: 0.9, CIMethod: "bootstrap"}}}
	if err := blob.PutJSON(ctx, store, runs.SummaryKey(runID), s); err != nil {
		t.Fatal(err)
	}
}

func boardInput() WriteBoardInput {
	b := leaderboard.Board{Name: "b", Benchmarks: []leaderboard.BoardBenchmark{{Dataset: "bfcl", Version: "latest"}},
		Models: []leaderboard.Model{{Model: "baseline/reference"}, {Model: "baseline/noisy-0.3", DisplayName: "noisy"}, {Model: "x/gone"}}}
	cell := func(model, run string) BoardCell {
		return BoardCell{Dataset: "bfcl", Version: "v1", Model: model, RunID: run, Request: runs.Request{Dataset: "bfcl@v1", Model: model}}
	}
	return WriteBoardInput{Board: b, Stamp: "20260102T030405Z", CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Cells: []CellOutcome{
		{BoardCell: cell("baseline/reference", "r1"), Reused: true},
		{BoardCell: cell("baseline/noisy-0.3", "r2")},
		{BoardCell: cell("x/gone", "r3"), Error: "gateway: x/gone: permanent-not-found"},
	}}
}

// TestWriteBoard assembles a stamp from two finished runs and a failed
// cell: cells with the headline metric and ranks, runs marked reused or
// not, the failed cell, scores.parquet, the site, and latest.
func TestWriteBoard(t *testing.T) {
	ctx := context.Background()
	store := blobtest.NewMemory()
	// 12 paired samples, 8 discordant and all for r1: exact McNemar
	// p = 2·0.5^8 = 0.0078 < 0.05, so r1 ranks 1–1 and r2 2–2.
	boardRun(t, store, "r1", "baseline/reference", []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1})
	boardRun(t, store, "r2", "baseline/noisy-0.3", []float64{1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1})
	a := &Leaderboard{Store: store, Benchmarks: registry.Default()}
	res, err := a.WriteBoard(ctx, boardInput())
	if err != nil {
		t.Fatal(err)
	}
	if res.Cells != 2 || len(res.Failed) != 1 || res.Failed[0].Model != "x/gone" || res.SiteKey != leaderboard.SiteKey("b", "20260102T030405Z") {
		t.Fatalf("result %+v", res)
	}
	var s leaderboard.Scores
	if err := blob.GetJSON(ctx, store, leaderboard.ScoresKey("b", "20260102T030405Z"), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Cells) != 2 || s.Cells[0].Mean != 1 || s.Cells[1].Mean != 4.0/12 || s.Cells[0].Metric != "accuracy" || s.Cells[1].N != 12 {
		t.Fatalf("cells %+v", s.Cells)
	}
	if s.Cells[0].RankLow != 1 || s.Cells[0].RankHigh != 1 || s.Cells[1].RankLow != 2 || s.Cells[1].RankHigh != 2 {
		t.Errorf("ranks: %+v", s.Cells)
	}
	if len(s.Comparisons) != 1 || s.Comparisons[0].Method != "mcnemar" || s.Comparisons[0].N != 12 || !s.Comparisons[0].Significant ||
		math.Abs(s.Comparisons[0].P-0.0078125) > 1e-12 {
		t.Errorf("comparisons: %+v", s.Comparisons)
	}
	if !s.Runs[0].Reused || s.Runs[1].Reused || s.Runs[1].Summary.Samples != 12 {
		t.Errorf("runs: %+v", s.Runs)
	}
	if len(s.Benchmarks) != 1 || s.Benchmarks[0].Headline != "accuracy" || s.Benchmarks[0].TaskVersion == "" || s.Benchmarks[0].Description == "" {
		t.Errorf("benchmarks: %+v", s.Benchmarks)
	}
	if !s.Models[0].Baseline || s.Models[2].Baseline || s.Models[1].DisplayName != "noisy" {
		t.Errorf("models: %+v", s.Models)
	}
	rows, err := pq.ReadAll[schemas.ScoreRow](ctx, store, ScoresParquetKey("b", "20260102T030405Z"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[1].Mean != 4.0/12 || !rows[1].Baseline || rows[1].RankLow != 2 || rows[1].RunID != "r2" {
		t.Errorf("scores.parquet: %+v", rows)
	}
	latest, err := blob.GetBytes(ctx, store, leaderboard.LatestKey("b"))
	if err != nil || string(latest) != "20260102T030405Z" {
		t.Errorf("latest = %q, %v", latest, err)
	}
}

// TestWriteBoardLatestLast: when any earlier write of the stamp fails,
// latest is not moved.
func TestWriteBoardLatestLast(t *testing.T) {
	for _, bad := range []string{"scores.json", "scores.parquet", "/site/"} {
		t.Run(bad, func(t *testing.T) {
			ctx := context.Background()
			mem := blobtest.NewMemory()
			boardRun(t, mem, "r1", "baseline/reference", []float64{1})
			boardRun(t, mem, "r2", "baseline/noisy-0.3", []float64{0})
			if err := blob.PutBytes(ctx, mem, leaderboard.LatestKey("b"), []byte("20250101T000000Z")); err != nil {
				t.Fatal(err)
			}
			a := &Leaderboard{Store: failingPuts{mem, bad}, Benchmarks: registry.Default()}
			if _, err := a.WriteBoard(ctx, boardInput()); err == nil {
				t.Fatal("no error")
			}
			if latest, _ := blob.GetBytes(ctx, mem, leaderboard.LatestKey("b")); string(latest) != "20250101T000000Z" {
				t.Fatalf("latest moved to %s", latest)
			}
		})
	}
}

// TestResolveBoardWithoutAVersion: a benchmark with no published version
// fails the refresh at once (not retried), naming the board and what to
// build.
func TestResolveBoardWithoutAVersion(t *testing.T) {
	a := &Leaderboard{Store: blobtest.NewMemory(), Benchmarks: registry.Default()}
	b := leaderboard.Board{Name: "b", Benchmarks: []leaderboard.BoardBenchmark{{Dataset: "bfcl", Version: "latest"}}, Models: []leaderboard.Model{{Model: "baseline/reference"}}}
	_, err := a.ResolveBoard(context.Background(), ResolveBoardInput{Board: b})
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) || ae.Type() != ErrTypeInvalidInput || !ae.NonRetryable() {
		t.Fatalf("err = %v; want a non-retryable %s", err, ErrTypeInvalidInput)
	}
	if msg := err.Error(); !strings.Contains(msg, "board b: benchmarks[0]: bfcl@latest") || !strings.Contains(msg, "benchline dataset build bfcl") {
		t.Errorf("message %q", msg)
	}
}
