package aggregate

import (
	"context"
	"errors"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
)

// Summary is a run's aggregate, written as summary.json.
type Summary struct {
	RunID            string           `json:"run_id"`
	Dataset          string           `json:"dataset"`
	DatasetVersion   string           `json:"dataset_version"`
	Model            string           `json:"model"`
	Baseline         bool             `json:"baseline"` // the model is a deterministic baseline, not an LLM
	Samples          int64            `json:"samples"`
	Scored           int64            `json:"scored"`
	InfraFailed      int64            `json:"infra_failed"`
	ModelFailed      int64            `json:"model_failed"`
	ErrorsByClass    map[string]int64 `json:"errors_by_class"`
	Metrics          []MetricStat     `json:"metrics"`
	Categories       []CategoryStats  `json:"categories"`
	Calls            int64            `json:"calls"`
	CacheHits        int64            `json:"cache_hits"`
	PromptTokens     int64            `json:"prompt_tokens"`
	CompletionTokens int64            `json:"completion_tokens"`
	CostUSD          float64          `json:"cost_usd"`
	// Batch says the run was in batch mode: CostUSD is at the providers'
	// batch prices (the calls its batches answered count as calls).
	Batch bool `json:"batch,omitempty"`
	// UsageUnknown counts samples that called a model whose provider
	// reported no token usage (calls, but 0 tokens: a real call has at
	// least one prompt token). Their tokens and cost are unknown, not 0.
	UsageUnknown int64     `json:"usage_unknown,omitempty"`
	LatencyMS    Latency   `json:"latency_ms"`
	CreatedAt    time.Time `json:"created_at"`
	// Agreement is, for runs with judges whose task stores panel ratings,
	// how far each panel agreed over the run (see Agreement).
	Agreement []judge.Agreement `json:"agreement,omitempty"`
}

// CategoryStats are the metrics of one category.
type CategoryStats struct {
	Category string       `json:"category"`
	Samples  int64        `json:"samples"`
	Metrics  []MetricStat `json:"metrics"`
}

// Latency percentiles of per-sample latency.
type Latency struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
}

// ErrBadShard is returned (wrapped) when a result shard does not have the
// result table's schema.
var ErrBadShard = errors.New("aggregate: result shard does not match the schema")

var resultColumns = []string{"category", "metrics", "error_class", "calls", "cache_hits", "prompt_tokens", "completion_tokens", "cost_usd", "latency_ms"}

// clusterColumns are read besides when the benchmark has clusters: what
// Options.Cluster sees of a row.
var clusterColumns = []string{"sample_id", "details_json"}

// clusterKeys returns metric's cluster keys: non-nil (possibly empty) when
// the run has clusters, so that even a metric no sample scored is computed
// as clustered.
func clusterKeys(keys map[string][]string, metric string) []string {
	if keys == nil {
		return nil
	}
	if k := keys[metric]; k != nil {
		return k
	}
	return []string{}
}

// Compute reads every result shard of a plan (arrow-go, projected columns)
// and aggregates. A missing shard is an error naming it. With o.Cluster
// the statistics of every metric, overall and per category, are clustered
// (ClusterStat).
func Compute(ctx context.Context, store blob.Store, plan runs.Plan, o Options) (Summary, error) {
	s := Summary{RunID: plan.RunID, Dataset: plan.Dataset, DatasetVersion: plan.DatasetVersion, Model: plan.Model,
		ErrorsByClass: map[string]int64{}}
	overall := map[string][]float64{}
	byCat := map[string]map[string][]float64{}
	// With clusters, each value's cluster key, parallel to the values.
	var overallKeys map[string][]string
	var byCatKeys map[string]map[string][]string
	if o.Cluster != nil {
		overallKeys, byCatKeys = map[string][]string{}, map[string]map[string][]string{}
	}
	catN := map[string]int64{}
	var latencies []float64
	// Shards are read a few at a time (each is a GET and a decode) and
	// merged in shard order, so every value lands where a sequential read
	// puts it and the statistics do not depend on which read ended first.
	err := eachShardInOrder(ctx, store, plan, o, func(r *shardRows) {
		s.Samples += r.samples
		s.Calls += r.calls
		s.CacheHits += r.cacheHits
		s.PromptTokens += r.promptTokens
		s.CompletionTokens += r.completionTokens
		for _, c := range r.costs {
			s.CostUSD += c
		}
		s.UsageUnknown += r.usageUnknown
		s.InfraFailed += r.infraFailed
		s.ModelFailed += r.modelFailed
		s.Scored += r.scored
		for ec, n := range r.errorsByClass {
			s.ErrorsByClass[ec] += n
		}
		for c, n := range r.catN {
			catN[c] += n
		}
		latencies = append(latencies, r.latencies...)
		for name, vs := range r.overall {
			overall[name] = append(overall[name], vs...)
			if overallKeys != nil {
				overallKeys[name] = append(overallKeys[name], r.overallKeys[name]...)
			}
		}
		for c, m := range r.byCat {
			if byCat[c] == nil {
				byCat[c] = map[string][]float64{}
			}
			if byCatKeys != nil && byCatKeys[c] == nil {
				byCatKeys[c] = map[string][]string{}
			}
			for name, vs := range m {
				byCat[c][name] = append(byCat[c][name], vs...)
				if byCatKeys != nil {
					byCatKeys[c][name] = append(byCatKeys[c][name], r.byCatKeys[c][name]...)
				}
			}
		}
	})
	if err != nil {
		return s, err
	}
	names := orderMetrics(plan.Metrics, overall)
	cats := make([]string, 0, len(byCat))
	for c := range byCat {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	// Every statistic is a pure function of its samples, and a bootstrap
	// of 10,000 samples takes about 0.1 s: compute them on every core.
	var stats []func() MetricStat
	for _, n := range names {
		stats = append(stats, func() MetricStat { return ClusterStat(n, overall[n], clusterKeys(overallKeys, n), o) })
	}
	for _, c := range cats {
		for _, n := range names {
			stats = append(stats, func() MetricStat { return ClusterStat(n, byCat[c][n], clusterKeys(byCatKeys[c], n), o) })
		}
	}
	all := parallelStats(stats)
	part := func(i int) []MetricStat { // nil when there are no metrics, as before
		if len(names) == 0 {
			return nil
		}
		return all[i*len(names) : (i+1)*len(names) : (i+1)*len(names)]
	}
	s.Metrics = part(0)
	for i, c := range cats {
		s.Categories = append(s.Categories, CategoryStats{Category: c, Samples: catN[c], Metrics: part(i + 1)})
	}
	if len(latencies) > 0 {
		s.LatencyMS.P50, s.LatencyMS.P90, s.LatencyMS.P99 = Percentiles(latencies)
	}
	if len(plan.Judges) > 0 {
		a, err := Agreement(ctx, store, plan)
		if err != nil {
			return s, err
		}
		s.Agreement = a
	}
	return s, nil
}

// orderMetrics lists the plan's metrics first (headline first), then any
// others seen, sorted.
func orderMetrics(planned []string, seen map[string][]float64) []string {
	out := append([]string(nil), planned...)
	have := map[string]bool{}
	for _, n := range planned {
		have[n] = true
	}
	var extra []string
	for n := range seen {
		if !have[n] {
			extra = append(extra, n)
		}
	}
	sort.Strings(extra)
	return append(out, extra...)
}

// Rows flattens a summary into summary.parquet rows.
func (s Summary) Rows() []schemas.SummaryRow {
	var out []schemas.SummaryRow
	add := func(scope string, ms []MetricStat) {
		for _, m := range ms {
			out = append(out, schemas.SummaryRow{RunID: s.RunID, Dataset: s.Dataset, Model: s.Model, Scope: scope, Metric: m.Name,
				N: int64(m.N), Mean: m.Mean, StdErr: m.StdErr, CILow: m.CILow, CIHigh: m.CIHigh, CIMethod: m.CIMethod})
		}
	}
	add("overall", s.Metrics)
	for _, c := range s.Categories {
		add("category:"+c.Category, c.Metrics)
	}
	return out
}

// parallelStats runs fns on up to GOMAXPROCS goroutines and returns their
// results in order.
func parallelStats(fns []func() MetricStat) []MetricStat {
	out := make([]MetricStat, len(fns))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(fns)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(fns) {
					return
				}
				out[i] = fns[i]()
			}
		})
	}
	wg.Wait()
	return out
}
