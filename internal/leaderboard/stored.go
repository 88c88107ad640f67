package leaderboard

import (
	"context"
	"errors"
	"fmt"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/internal/stats"
)

// RunRef names one run of a benchmark for CompareStored.
type RunRef struct{ RunID, Model string }

// ComparisonKey is where CompareStored keeps the comparison of run a
// against run b on metric with the given resamples, before the
// benchmark's correction: runs/<a>/compare/<b>/<metric>-b<resamples>.json.
// Runs are immutable once summarised, so a stored comparison holds for
// every later stamp that compares the same two runs.
func ComparisonKey(a, b, metric string, resamples int) string {
	return fmt.Sprintf("%scompare/%s/%s-b%d.json", runs.Dir(a), b, metric, resamples)
}

// CompareStored is Compare for runs in the store: each pair's comparison is
// read from ComparisonKey when an earlier refresh stored it, and otherwise
// computed from the samples load returns (called at most once per run, only
// for runs with a comparison to compute) and stored. The correction and
// rank ranges are then computed over the whole benchmark, as Compare does,
// so the result equals Compare's on the same samples.
func CompareStored(ctx context.Context, store blob.Store, dataset, metric string, refs []RunRef, load func(k int) (Samples, error)) ([]Comparison, map[string]RankRange, error) {
	pairs := Pairs(len(refs))
	boot := stats.Bootstrap{Resamples: Resamples(len(pairs)), Seed: Seed}
	out := make([]Comparison, len(pairs))
	loaded := map[int]Samples{}
	index := map[int]*lookup{}
	get := func(k int) (Samples, error) {
		if s, ok := loaded[k]; ok {
			return s, nil
		}
		s, err := load(k)
		if err != nil {
			return s, err
		}
		loaded[k] = s
		return s, nil
	}
	for k, p := range pairs {
		a, b := refs[p.I], refs[p.J]
		key := ComparisonKey(a.RunID, b.RunID, metric, boot.Resamples)
		var c Comparison
		err := blob.GetJSON(ctx, store, key, &c)
		if err == nil && c.RunA == a.RunID && c.RunB == b.RunID && c.Metric == metric && c.Dataset == dataset {
			c.ModelA, c.ModelB = a.Model, b.Model
			out[k] = c
			continue
		}
		if err != nil && ctx.Err() != nil {
			return nil, nil, err
		}
		// Not stored yet, or unreadable: compute it (again) and store it.
		sa, err := get(p.I)
		if err != nil {
			return nil, nil, err
		}
		sb, err := get(p.J)
		if err != nil {
			return nil, nil, err
		}
		if index[p.J] == nil {
			index[p.J] = &lookup{s: &sb}
		}
		index[p.J].build(byIndex(sa, sb))
		c = compare(dataset, metric, sa, sb, index[p.J], boot)
		c.ModelA, c.ModelB = a.Model, b.Model
		if err := blob.PutJSON(ctx, store, key, c); err != nil && !errors.Is(err, context.Canceled) {
			return nil, nil, fmt.Errorf("leaderboard: store comparison %s: %w", key, err)
		}
		out[k] = c
	}
	models := make([]string, len(refs))
	for k, r := range refs {
		models[k] = r.Model
	}
	return out, Correct(models, pairs, out), nil
}
