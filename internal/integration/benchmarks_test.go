package integration

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/wfclient"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/config"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/registry"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/workflows"
)

// TestEveryBenchmark builds every registered benchmark that the demo runs
// from its embedded fixtures, on the real stack, and evaluates each of its
// demo models: one result row per sample and a summary per model.
func TestEveryBenchmark(t *testing.T) {
	reg := registry.Default()
	for _, b := range reg.All() {
		if b.Demo == nil {
			continue
		}
		t.Run(b.Name(), func(t *testing.T) {
			checkBenchmark(t, stack.Stack.Config, reg, b)
		})
	}
}

// checkBenchmark builds b's demo dataset on the workers of cfg's task
// queue, evaluates its demo models there and checks the results.
func checkBenchmark(t *testing.T, cfg config.Config, reg *benchmark.Registry, b benchmark.Benchmark) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	res, err := wfclient.BuildDataset(ctx, stack.Client, cfg, workflows.BuildDatasetInput{Dataset: b.Name(),
		Request: datasets.Request{Source: "embedded://" + b.Name(), Params: b.Demo.Params}})
	if err != nil {
		t.Fatal(err)
	}
	m := verifiedManifest(t, res.Dataset, res.Version)
	if res.Rows == 0 || m.Rows != res.Rows {
		t.Fatalf("%s@%s: built %d rows, manifest says %d", res.Dataset, res.Version, res.Rows, m.Rows)
	}
	tasks := reg
	var compared []leaderboard.Samples
	for _, model := range b.Demo.Models {
		req := runs.Request{Dataset: res.Dataset + "@" + res.Version, Model: model, Judges: b.Demo.Judges, ShardSize: 100}
		plan, err := wfclient.ResolveRun(ctx, stack.Store, tasks, req)
		if err != nil {
			t.Fatal(err)
		}
		run, err := wfclient.StartPlanned(ctx, stack.Client, cfg, plan, workflows.EvaluateModelInput{Request: req})
		if err != nil {
			t.Fatal(err)
		}
		ev, err := wfclient.WaitEval(ctx, stack.Client, run, plan.RunID, time.Hour, nil)
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		checkOneRowPerSample(t, plan)
		s := ev.Summary
		if s.RunID != plan.RunID || s.Model != model || s.Samples != plan.Samples || s.InfraFailed != 0 || len(s.Metrics) == 0 {
			t.Errorf("%s: summary run %s model %s samples %d (want %d) infra failures %d metrics %d",
				model, s.RunID, s.Model, s.Samples, plan.Samples, s.InfraFailed, len(s.Metrics))
		}
		if ok, err := blob.Exists(ctx, stack.Store, runs.SummaryKey(plan.RunID)); err != nil || !ok {
			t.Errorf("%s: summary.json missing (%v)", model, err)
		}
		// A benchmark that declares clusters gets clustered intervals from
		// the workers (the registry's cluster functions, wired in app).
		if h := s.Metrics[0]; b.Cluster != nil && (h.Clusters < 2 || int64(h.Clusters) > s.Scored || !strings.HasPrefix(h.CIMethod, "cluster-")) {
			t.Errorf("%s: %s declares clusters (%s) but the headline is %+v", model, b.Name(), b.ClusterBy, h)
		} else if b.Cluster == nil && h.Clusters != 0 {
			t.Errorf("%s: %s has no clusters but the headline is %+v", model, b.Name(), h)
		}
		// The board's statistics read the run's results from the store.
		smp, err := leaderboard.LoadSamples(ctx, stack.Store, plan.RunID, model, s.Metrics[0].Name, b.Cluster)
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		if len(smp.IDs) != s.Metrics[0].N || (smp.Clusters != nil) != (b.Cluster != nil) {
			t.Errorf("%s: LoadSamples: %d samples (summary: %d), clusters %v", model, len(smp.IDs), s.Metrics[0].N, smp.Clusters != nil)
		}
		compared = append(compared, smp)
		t.Logf("%s on %s@%s: %s %.4f over %d samples (%s, %d clusters)", model, res.Dataset, res.Version, s.Metrics[0].Name, s.Metrics[0].Mean, s.Samples, s.Metrics[0].CIMethod, s.Metrics[0].Clusters)
	}
	checkComparisons(t, b, compared)
}

// checkComparisons compares the demo models' runs as a leaderboard does
// and checks every pair is compared on all its samples, clustered where
// the benchmark declares clusters, with a rank range per model.
func checkComparisons(t *testing.T, b benchmark.Benchmark, runs []leaderboard.Samples) {
	t.Helper()
	if len(runs) < 2 {
		return
	}
	cs, ranks := leaderboard.Compare(b.Name(), "headline", runs)
	if len(cs) != len(runs)*(len(runs)-1)/2 || len(ranks) != len(runs) {
		t.Fatalf("%d comparisons and %d rank ranges for %d runs", len(cs), len(ranks), len(runs))
	}
	var shared []int64 // samples each pair shares, in Compare's order
	for i := range runs {
		for j := i + 1; j < len(runs); j++ {
			n := int64(0)
			for _, id := range runs[i].IDs {
				if slices.Contains(runs[j].IDs, id) {
					n++
				}
			}
			shared = append(shared, n)
		}
	}
	for k, c := range cs {
		if c.N != shared[k] || c.N == 0 || (c.Clusters > 0) != (b.Cluster != nil) || c.PAdjusted < c.P || c.CILow > c.Diff || c.CIHigh < c.Diff {
			t.Errorf("comparison %+v", c)
		}
		t.Logf("%s − %s: %+.4f [%.4f, %.4f], %s p %.4g (Holm %.4g), %d clusters", c.ModelA, c.ModelB, c.Diff, c.CILow, c.CIHigh, c.Method, c.P, c.PAdjusted, c.Clusters)
	}
	for m, r := range ranks {
		if r.Low < 1 || r.High > len(runs) || r.Low > r.High {
			t.Errorf("%s: rank range %v", m, r)
		}
	}
	t.Logf("rank ranges: %v", ranks)
}

// checkOneRowPerSample reads every result shard of a run and checks each
// sample index is present exactly once, with the plan's run id.
func checkOneRowPerSample(t *testing.T, plan runs.Plan) {
	t.Helper()
	seen := make([]int, plan.Samples)
	for i := range plan.Shards {
		rows, err := pq.ReadAll[schemas.ResultRow](context.Background(), stack.Store, runs.ShardKey(plan.RunID, i))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.RunID != plan.RunID || r.SampleIndex < 0 || r.SampleIndex >= plan.Samples {
				t.Fatalf("shard %d: row for run %s sample %d", i, r.RunID, r.SampleIndex)
			}
			seen[r.SampleIndex]++
		}
	}
	for i, c := range seen {
		if c != 1 {
			t.Fatalf("run %s: sample %d has %d result rows", plan.RunID, i, c)
		}
	}
}
