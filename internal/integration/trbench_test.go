package integration

import (
	"context"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/trbench"
	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/workflows"
)

func categoryMetric(s aggregate.Summary, cat, name string) (aggregate.MetricStat, bool) {
	for _, c := range s.Categories {
		if c.Category == cat {
			for _, m := range c.Metrics {
				if m.Name == name {
					return m, true
				}
			}
		}
	}
	return aggregate.MetricStat{}, false
}

// TestEvalTRBenchJudges builds trbench from its fixtures and evaluates the
// baseline judges on it through the real stack: baseline/first and
// baseline/second can never be right in both orders (W-Avg 0), a judge
// answering the right verdict of each order scores 1; then the baseline
// scalar reward models.
func TestEvalTRBenchJudges(t *testing.T) {
	res, err := buildVia(t, trbench.Name, datasets.Request{Source: trbench.Embedded})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m, err := catalog.ReadManifest(ctx, stack.Store, res.Dataset, res.Version)
	if err != nil {
		t.Fatal(err)
	}
	dataset := "trbench@" + res.Version
	for _, tc := range []struct {
		model    string
		acc1     float64
		acc2     float64
		wantWAvg float64
	}{
		{"baseline/first", 1, 0, 0},
		{"baseline/second", 0, 1, 0},
	} {
		out, err := evalVia(t, "", workflows.EvaluateModelInput{Request: runs.Request{Dataset: dataset, Model: tc.model}})
		if err != nil {
			t.Fatal(err)
		}
		s := out.Summary
		if s.Scored != m.Rows || s.Metrics[0].Name != "w_avg" {
			t.Fatalf("%s: scored %d of %d, metrics %+v", tc.model, s.Scored, m.Rows, s.Metrics)
		}
		if w, a1, a2, avg := metric(s, "w_avg"), metric(s, "acc_order1"), metric(s, "acc_order2"), metric(s, "avg"); w.Mean != tc.wantWAvg ||
			a1.Mean != tc.acc1 || a2.Mean != tc.acc2 || avg.Mean != 0.5 {
			t.Errorf("%s: w_avg %v acc_order1 %v acc_order2 %v avg %v", tc.model, w.Mean, a1.Mean, a2.Mean, avg.Mean)
		}
		if c := metric(s, "consistency"); c.Mean != 0 || int64(c.N) != m.Rows {
			t.Errorf("%s: consistency %v over %d pairs, want 0 over %d: a position-biased judge is never consistent", tc.model, c.Mean, c.N, m.Rows)
		}
		if s.Calls != 2*m.Rows {
			t.Errorf("%s: %d calls for %d pairs, want two per pair", tc.model, s.Calls, m.Rows)
		}
		for _, src := range []string{"simple_python", "multiple", "parallel", "live_simple"} {
			if w, ok := categoryMetric(s, src, "w_avg"); !ok || w.Mean != 0 {
				t.Errorf("%s: task source %s: w_avg %+v (found %v)", tc.model, src, w, ok)
			}
		}
	}

	// The reference judge: the engine writes both orders' verdicts
	// (MultiReferenceProvider), so it is right in both.
	out, err := evalVia(t, "", workflows.EvaluateModelInput{Request: runs.Request{Dataset: dataset, Model: "baseline/reference"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"w_avg", "acc_order1", "acc_order2", "avg"} {
		if got := metric(out.Summary, name); got.Mean != 1 || int64(got.N) != m.Rows {
			t.Errorf("baseline/reference: %s = %+v, want 1 over %d pairs", name, got, m.Rows)
		}
	}

	// Scalar reward models through the gateway's Reward and the baseline
	// server's /pooling: each pair is scored once (two reward calls), every
	// metric is the chosen > rejected verdict. reward-reference compares
	// with the reward references the engine wrote; reward-length is worse.
	for _, tc := range []struct {
		model string
		exact bool
	}{{"baseline/reward-reference", true}, {"baseline/reward-length", false}} {
		out, err := evalVia(t, "", workflows.EvaluateModelInput{Request: runs.Request{Dataset: dataset, Model: tc.model}})
		if err != nil {
			t.Fatal(err)
		}
		s := out.Summary
		w := metric(s, "w_avg")
		if s.Scored != m.Rows || s.InfraFailed != 0 || s.Calls != 2*m.Rows || int64(w.N) != m.Rows {
			t.Fatalf("%s: scored %d of %d, infrastructure failures %d, calls %d, w_avg %+v", tc.model, s.Scored, m.Rows, s.InfraFailed, s.Calls, w)
		}
		for _, name := range []string{"acc_order1", "acc_order2", "avg"} {
			if got := metric(s, name); got.Mean != w.Mean {
				t.Errorf("%s: %s = %v, want w_avg's %v (order does not exist for a scalar model)", tc.model, name, got.Mean, w.Mean)
			}
		}
		if tc.exact != (w.Mean == 1) || w.Mean == 0 {
			t.Errorf("%s: w_avg %v", tc.model, w.Mean)
		}
		if tc.exact {
			for _, src := range []string{"simple_python", "multiple", "parallel", "live_simple"} {
				if w, ok := categoryMetric(s, src, "w_avg"); !ok || w.Mean != 1 {
					t.Errorf("%s: task source %s: w_avg %+v (found %v)", tc.model, src, w, ok)
				}
			}
		}
	}
}
