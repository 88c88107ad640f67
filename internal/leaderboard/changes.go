package leaderboard

import (
	"context"
	"encoding/json"
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
	// Changes is every entry of the lists above as one list, what
	// `leaderboard refresh --json` prints as "changes" (see List).
	Changes []Change `json:"changes"`
}

// The kinds of a Change.
const (
	KindNewModel          = "new_model"
	KindDroppedModel      = "dropped_model"
	KindSignificantChange = "significant_change"
	KindFailedCell        = "failed_cell"
	KindNewVersion        = "new_version"
)

// Change is one thing that changed: {"kind", "dataset", "model", ...},
// the kind's details beside them. A significant_change carries its Move's
// fields (metric, from, to, diff, ci_low, ci_high, n, method, p,
// p_adjusted, correction, run_from, run_to), a failed_cell its run_id and
// error, a new_version its version_from and version_to (its model is "").
type Change struct {
	Kind    string `json:"kind"`
	Dataset string `json:"dataset"`
	Model   string `json:"model"`
	// The embedded details' own dataset and model are shadowed by the
	// fields above, which hold the same values.
	*Move
	*FailedCell
	VersionFrom string `json:"version_from,omitempty"`
	VersionTo   string `json:"version_to,omitempty"`
}

// MarshalJSON writes c with its "changes" list made from the other lists
// (List), so that the two never disagree, whatever c.Changes holds (a
// changes.json written before the list existed has none).
func (c Changes) MarshalJSON() ([]byte, error) {
	type plain Changes // without this method
	p := plain(c)
	p.Changes = c.List()
	return json.Marshal(p)
}

// List is the changes as one list: the moves, new models, dropped models,
// failed cells and new dataset versions, in that order; [] when nothing
// changed.
func (c Changes) List() []Change {
	list := []Change{}
	for _, m := range c.Moves {
		list = append(list, Change{Kind: KindSignificantChange, Dataset: m.Dataset, Model: m.Model, Move: &m})
	}
	for _, r := range c.NewModels {
		list = append(list, Change{Kind: KindNewModel, Dataset: r.Dataset, Model: r.Model})
	}
	for _, r := range c.DroppedModels {
		list = append(list, Change{Kind: KindDroppedModel, Dataset: r.Dataset, Model: r.Model})
	}
	for _, f := range c.Failed {
		list = append(list, Change{Kind: KindFailedCell, Dataset: f.Dataset, Model: f.Model, FailedCell: &f})
	}
	for _, v := range c.NewVersions {
		list = append(list, Change{Kind: KindNewVersion, Dataset: v.Dataset, VersionFrom: v.From, VersionTo: v.To})
	}
	return list
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
// or "1 significant move, 1 new model since …". New and dropped models
// count models, with their cells when there are more ("9 new models in 18
// cells (first stamp)": nine models on two benchmarks).
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
	addModels := func(cells []CellRef, one, many string) {
		models := map[string]bool{}
		for _, r := range cells {
			models[r.Model] = true
		}
		add(len(models), one, many)
		if len(cells) > len(models) {
			parts[len(parts)-1] += fmt.Sprintf(" in %d cells", len(cells))
		}
	}
	addModels(c.NewModels, "new model", "new models")
	addModels(c.DroppedModels, "dropped model", "dropped models")
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
	ch.Changes = ch.List()
	return ch, nil
}
