package leaderboard

// TEMPORARY: a minimal stand-in for the paired comparisons of branch
// `stats`, with the same API, so that the board branch builds and is
// tested before it lands. The lead replaces this file at merge. It makes no
// comparison and ranks models 1..n by mean.

import (
	"context"
	"fmt"
	"sort"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
)

// Samples are one run's scored values of one metric, by sample.
type Samples struct {
	RunID, Model string
	IDs          []string
	Values       []float64
	Clusters     []string
}

// RankRange is a model's rank range on a benchmark.
type RankRange struct{ Low, High int }

// LoadSamples reads a finished run's scored values of metric.
func LoadSamples(ctx context.Context, store blob.Store, runID, model, metric string, cluster func(schemas.ResultRow) string) (Samples, error) {
	var plan runs.Plan
	if err := blob.GetJSON(ctx, store, runs.PlanKey(runID), &plan); err != nil {
		return Samples{}, fmt.Errorf("leaderboard: run %s: %w", runID, err)
	}
	s := Samples{RunID: runID, Model: model}
	for i := range plan.Shards {
		err := pq.ReadEach(ctx, store, runs.ShardKey(runID, i), func(rows []schemas.ResultRow) error {
			for _, r := range rows {
				v, ok := r.Metrics[metric]
				if !ok || !schemas.Scored(r.ErrorClass) {
					continue
				}
				s.IDs = append(s.IDs, r.SampleID)
				s.Values = append(s.Values, v)
				if cluster != nil {
					s.Clusters = append(s.Clusters, cluster(r))
				}
			}
			return nil
		})
		if err != nil {
			return Samples{}, fmt.Errorf("leaderboard: run %s shard %d: %w", runID, i, err)
		}
	}
	return s, nil
}

// Compare ranks the runs 1..n by mean (keyed by model); it makes no
// comparison.
func Compare(dataset, metric string, rs []Samples) ([]Comparison, map[string]RankRange) {
	type m struct {
		model string
		mean  float64
	}
	ms := make([]m, len(rs))
	for i, r := range rs {
		var sum float64
		for _, v := range r.Values {
			sum += v
		}
		if len(r.Values) > 0 {
			sum /= float64(len(r.Values))
		}
		ms[i] = m{r.Model, sum}
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].mean > ms[j].mean })
	ranks := map[string]RankRange{}
	for i, x := range ms {
		ranks[x.model] = RankRange{Low: i + 1, High: i + 1}
	}
	return nil, ranks
}
