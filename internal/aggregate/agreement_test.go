package aggregate

import (
	"context"
	"math"
	"testing"

	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
)

// TestComputeAgreement writes two result shards whose details hold panel
// ratings and checks the summary pools them over the run: the same units
// as judge's hand-computed example (alpha 4/9), split across shards, with
// an infrastructure failure and a row without ratings left out.
func TestComputeAgreement(t *testing.T) {
	ctx := context.Background()
	store := blobtest.NewMemory()
	plan := runs.Plan{RunID: "rtest", Dataset: "d", Shards: 2, Metrics: []string{"score"},
		Judges: map[string]string{"judge": "a,b"}}
	shards := [][]schemas.ResultRow{
		{
			{SampleIndex: 0, Metrics: map[string]float64{"score": 1},
				DetailsJSON: `{"panel_ratings":[{"set":"score","judges":["a","b"],"items":[["met","met"],["not_met","not_met"]]}]}`},
			{SampleIndex: 1, ErrorClass: schemas.ErrorClassInfrastructure,
				DetailsJSON: `{"panel_ratings":[{"set":"score","judges":["a","b"],"items":[["met","not_met"],["met","not_met"]]}]}`},
		},
		{
			{SampleIndex: 2, Metrics: map[string]float64{"score": 0},
				DetailsJSON: `{"panel_ratings":[{"set":"score","judges":["a","b"],"items":[["met","not_met"],["not_met",""]]}]}`},
			{SampleIndex: 3, Metrics: map[string]float64{"score": 1}},
		},
	}
	for i, rows := range shards {
		w := pq.NewWriter[schemas.ResultRow](ctx, store, runs.ShardKey(plan.RunID, i), pq.Options{})
		if err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Compute(ctx, store, plan, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Agreement) != 1 {
		t.Fatalf("agreement = %+v, want one pool", s.Agreement)
	}
	a := s.Agreement[0]
	if a.Set != "score" || a.Samples != 2 || a.Items != 4 || a.Unanimous != 2 || a.Alpha == nil || math.Abs(*a.Alpha-4.0/9) > 1e-12 {
		t.Errorf("agreement = %+v (alpha %v), want 2 samples, 4 items, 2 unanimous, alpha 4/9", a, a.Alpha)
	}

	// A run without judges reads no details.
	plan.Judges = nil
	if s, err = Compute(ctx, store, plan, Options{}); err != nil || s.Agreement != nil {
		t.Errorf("without judges: agreement %+v, %v", s.Agreement, err)
	}
}
