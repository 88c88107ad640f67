package leaderboard

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/stats"
)

// ChangesKey is the key of a stamp's changes.json.
func ChangesKey(board, stamp string) string { return Prefix(board, stamp) + "/changes.json" }

// Changes is a stamp's changes.json: what changed since the board's
// previous stamp (docs/site.md has the contract).
type Changes struct {
	Board string `json:"board"`
	Stamp string `json:"stamp"`
	// Previous is the stamp compared with; empty for a board's first stamp
	// (then every model is new).
	Previous string `json:"previous"`
	// NoChange is true when every list below is empty.
	NoChange bool `json:"no_change"`
	// Moves are the cells whose headline moved significantly: the paired
	// test of the previous run against the new one (same dataset version,
	// paired by sample) with Holm's correction over the stamp's moves,
	// adjusted p below Alpha.
	Moves []Move `json:"moves"`
	// NewModels and DroppedModels are cells (dataset, model) present in
	// one stamp only.
	NewModels     []CellRef `json:"new_models"`
	DroppedModels []CellRef `json:"dropped_models"`
	// Failed are this stamp's failed cells.
	Failed []FailedCell `json:"failed"`
	// NewVersions are benchmarks whose dataset version changed.
	NewVersions []VersionChange `json:"new_versions"`
	// Alpha is the level of the moves' test.
	Alpha float64 `json:"alpha"`
}

// Move is a cell whose headline moved significantly between two stamps.
type Move struct {
	Dataset string  `json:"dataset"`
	Model   string  `json:"model"`
	Metric  string  `json:"metric"`
	RunFrom string  `json:"run_from"`
	RunTo   string  `json:"run_to"`
	From    float64 `json:"from"` // the previous cell's mean
	To      float64 `json:"to"`
	// Diff is new − previous over the samples both runs scored, with its
	// 95% CI, the test's method and p-values.
	N          int64   `json:"n"`
	Diff       float64 `json:"diff"`
	CILow      float64 `json:"ci_low"`
	CIHigh     float64 `json:"ci_high"`
	Method     string  `json:"method"`
	P          float64 `json:"p"`
	PAdjusted  float64 `json:"p_adjusted"`
	Correction string  `json:"correction"`
}

// CellRef names a cell.
type CellRef struct {
	Dataset string `json:"dataset"`
	Model   string `json:"model"`
}

// VersionChange is a benchmark's new dataset version.
type VersionChange struct {
	Dataset string `json:"dataset"`
	From    string `json:"from"`
	To      string `json:"to"`
}

// Summary is the changes in one line, e.g. "no change since 20261123T150405Z"
// or "1 significant move, 1 new model since …".
func (c Changes) Summary() string {
	since := " since " + c.Previous
	if c.Previous == "" {
		since = " (first stamp)"
	}
	if c.NoChange {
		return "no change" + since
	}
	var parts []string
	add := func(n int, one, many string) {
		switch {
		case n == 1:
			parts = append(parts, "1 "+one)
		case n > 1:
			parts = append(parts, fmt.Sprintf("%d %s", n, many))
		}
	}
	add(len(c.Moves), "significant move", "significant moves")
	add(len(c.NewModels), "new model", "new models")
	add(len(c.DroppedModels), "dropped model", "dropped models")
	add(len(c.Failed), "failed cell", "failed cells")
	add(len(c.NewVersions), "new dataset version", "new dataset versions")
	return strings.Join(parts, ", ") + since
}

// PreviousStamp is the newest stamp of board before stamp with a readable
// scores.json; found is false when there is none.
func PreviousStamp(ctx context.Context, store blob.Store, board, stamp string) (Scores, bool, error) {
	stamps, err := Stamps(ctx, store, board)
	if err != nil {
		return Scores{}, false, err
	}
	for i := len(stamps) - 1; i >= 0; i-- {
		if stamps[i] >= stamp {
			continue
		}
		var s Scores
		err := blob.GetJSON(ctx, store, ScoresKey(board, stamps[i]), &s)
		if errors.Is(err, blob.ErrNotFound) {
			continue
		}
		if err != nil { // a corrupt old stamp is skipped, as the history plots skip it
			continue
		}
		s.Stamp = stamps[i]
		return s, true, nil
	}
	return Scores{}, false, nil
}

// Diff computes what changed from prev (found: whether there is one) to
// cur. load returns a run's samples of a metric, for the paired tests of
// cells whose run changed on the same dataset version (their comparisons
// are stored beside the runs like the board's, so a later refresh reads
// them).
func Diff(ctx context.Context, store blob.Store, prev Scores, found bool, cur Scores, load func(runID, model, dataset, metric string) (Samples, error)) (Changes, error) {
	ch := Changes{Board: cur.Board, Stamp: cur.Stamp, Alpha: Alpha, Moves: []Move{}, NewModels: []CellRef{}, DroppedModels: []CellRef{},
		Failed: append([]FailedCell{}, cur.Failed...), NewVersions: []VersionChange{}}
	if found {
		ch.Previous = prev.Stamp
	}
	before := map[CellRef]Cell{}
	for _, c := range prev.Cells {
		before[CellRef{c.Dataset, c.Model}] = c
	}
	now := map[CellRef]bool{}
	var ps []float64
	for _, c := range cur.Cells {
		ref := CellRef{c.Dataset, c.Model}
		now[ref] = true
		old, ok := before[ref]
		switch {
		case !ok:
			ch.NewModels = append(ch.NewModels, ref)
			continue
		case old.RunID == c.RunID || old.RunID == "" || old.Version != c.Version || old.Metric != c.Metric:
			continue // the same run, or nothing to pair with
		}
		refs := []RunRef{{RunID: old.RunID, Model: c.Model}, {RunID: c.RunID, Model: c.Model}}
		cmp, _, err := CompareStored(ctx, store, c.Dataset, c.Metric, refs, func(k int) (Samples, error) {
			return load(refs[k].RunID, c.Model, c.Dataset, c.Metric)
		})
		if err != nil {
			return ch, fmt.Errorf("leaderboard: changes of %s on %s: %w", c.Model, c.Dataset, err)
		}
		d := cmp[0] // previous − new
		if d.N == 0 {
			continue
		}
		ch.Moves = append(ch.Moves, Move{Dataset: c.Dataset, Model: c.Model, Metric: c.Metric, RunFrom: old.RunID, RunTo: c.RunID,
			From: old.Mean, To: c.Mean, N: d.N, Diff: -d.Diff, CILow: -d.CIHigh, CIHigh: -d.CILow, Method: d.Method, P: d.P, Correction: "holm"})
		ps = append(ps, d.P)
	}
	var moves []Move
	for k, adj := range stats.Holm(ps) {
		m := ch.Moves[k]
		m.PAdjusted = adj
		if adj < Alpha && m.Diff != 0 {
			moves = append(moves, m)
		}
	}
	ch.Moves = append([]Move{}, moves...)
	for _, c := range prev.Cells {
		if ref := (CellRef{c.Dataset, c.Model}); !now[ref] && !slices.ContainsFunc(cur.Failed, func(f FailedCell) bool { return f.Dataset == c.Dataset && f.Model == c.Model }) {
			ch.DroppedModels = append(ch.DroppedModels, ref)
		}
	}
	if found {
		was := map[string]string{}
		for _, b := range prev.Benchmarks {
			was[b.Dataset] = b.Version
		}
		for _, b := range cur.Benchmarks {
			if v, ok := was[b.Dataset]; ok && v != b.Version {
				ch.NewVersions = append(ch.NewVersions, VersionChange{Dataset: b.Dataset, From: v, To: b.Version})
			}
		}
	}
	ch.NoChange = len(ch.Moves)+len(ch.NewModels)+len(ch.DroppedModels)+len(ch.Failed)+len(ch.NewVersions) == 0
	return ch, nil
}
