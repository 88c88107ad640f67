package activities

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/gateway"
	"github.com/benchline/benchline/internal/runs"
)

// maxBatchReasons bounds the failure reasons a BatchReport lists.
const maxBatchReasons = 5

// BatchReport is what `benchline runs show` tells of a batch run's
// batches: how many there were and how they ended, and why requests
// failed in them, read from the run's batch records and shard states
// (runs/<run>/batches/).
type BatchReport struct {
	Batches int `json:"batches"`
	// Status counts the batches by the provider's last status
	// (completed, expired, cancelled, failed; "lost" for one the provider
	// no longer knows or whose result file it no longer has;
	// "in_progress" for one not finished yet).
	Status map[string]int `json:"status"`
	// Requests counts the lines of every batch (a request retried in a new
	// batch counts again).
	Requests int `json:"requests"`
	// Failed counts the requests whose batch tries are over without an
	// answer: infrastructure errors (a 4xx line is the model's failure,
	// scored as the call's would be); Fallback those called interactively
	// instead (fallback: interactive).
	Failed   int `json:"failed,omitempty"`
	Fallback int `json:"fallback,omitempty"`
	// Reasons groups those requests by error class and HTTP status, the
	// most frequent first (at most maxBatchReasons).
	Reasons []BatchFailureReason `json:"reasons,omitempty"`
}

// BatchFailureReason is one kind of batch failure.
type BatchFailureReason struct {
	Class    string `json:"class"`
	Status   int    `json:"status,omitempty"`
	Requests int    `json:"requests"`
	// Example is one request's message (the first by shard and key).
	Example string `json:"example"`
}

// ReadBatchReport reads the report of run's batches; nil when it has none
// (an interactive run).
func ReadBatchReport(ctx context.Context, store blob.Store, run string) (*BatchReport, error) {
	recs, states, err := listBatches(ctx, store, runs.Dir(run)+"batches/")
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", run, err)
	}
	if len(recs) == 0 {
		return nil, nil
	}
	r := &BatchReport{Batches: len(recs), Status: map[string]int{}}
	for _, rec := range recs {
		r.Requests += rec.Requests
		st := rec.Status
		if !rec.Done || st == "" {
			st = "in_progress"
		}
		r.Status[st]++
	}
	reasons := map[[2]int]*BatchFailureReason{}
	for _, key := range states {
		var state batchState
		if err := blob.GetJSON(ctx, store, key, &state); err != nil && !errors.Is(err, blob.ErrNotFound) {
			return nil, fmt.Errorf("run %s: read batch state %s: %w", run, key, err)
		}
		for _, k := range slices.Sorted(maps.Keys(state.Failed)) {
			f := state.Failed[k]
			switch {
			case f.Fallback:
				r.Fallback++
			case f.Final:
				r.Failed++
			default:
				continue // answered by a retry batch, or waiting for one
			}
			g := [2]int{f.Class, f.Status}
			if reasons[g] == nil {
				reasons[g] = &BatchFailureReason{Class: gateway.Class(f.Class).String(), Status: f.Status, Example: f.Message}
			}
			reasons[g].Requests++
		}
	}
	for _, g := range reasons {
		r.Reasons = append(r.Reasons, *g)
	}
	slices.SortFunc(r.Reasons, func(a, b BatchFailureReason) int {
		return cmp.Or(b.Requests-a.Requests, cmp.Compare(a.Class, b.Class), a.Status-b.Status)
	})
	r.Reasons = r.Reasons[:min(len(r.Reasons), maxBatchReasons)]
	return r, nil
}
