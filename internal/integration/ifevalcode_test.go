package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/wfclient"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/benchline/benchline/datasets"
	dsifevalcode "github.com/benchline/benchline/datasets/ifevalcode"
	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/app"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers/ifevalcode"
	"github.com/benchline/benchline/workflows"
)

// ifcEval evaluates model on the ifevalcode dataset through the shared
// stack (wfclient.StartEval + wfclient.WaitEval, as `benchline eval` does) and
// returns the result and the plan.
func ifcEval(t *testing.T, model string) (workflows.EvaluateModelResult, runs.Plan) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	run, plan, err := wfclient.StartEval(ctx, stack.Client, stack.Stack.Config, stack.Store,
		workflows.EvaluateModelInput{Request: runs.Request{Dataset: dsifevalcode.Name, Model: model}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := wfclient.WaitEval(ctx, stack.Client, run, plan.RunID, time.Hour, nil)
	if err != nil {
		t.Fatalf("%s: %v", model, err)
	}
	return res, plan
}

// ifcMetrics returns a set of metrics by name.
func ifcMetrics(ms []aggregate.MetricStat) map[string]aggregate.MetricStat {
	out := map[string]aggregate.MetricStat{}
	for _, m := range ms {
		out[m.Name] = m
	}
	return out
}

// ifcScoreQueues returns the task queues the run's ScoreShard activities
// were scheduled on.
func ifcScoreQueues(t *testing.T, runID string) map[string]int {
	t.Helper()
	iter := stack.Client.GetWorkflowHistory(context.Background(), wfclient.EvalWorkflowID(runID), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	queues := map[string]int{}
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "ScoreShard" {
			queues[a.GetTaskQueue().GetName()]++
		}
	}
	return queues
}

// ifcRows reads every result row of a run.
func ifcRows(t *testing.T, plan runs.Plan) []schemas.ResultRow {
	t.Helper()
	var rows []schemas.ResultRow
	for i := range plan.Shards {
		rs, err := pq.ReadAll[schemas.ResultRow](context.Background(), stack.Store, runs.ShardKey(plan.RunID, i))
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, rs...)
	}
	return rows
}

// TestEvalIFEvalCodeBaselines evaluates baseline/reference and
// baseline/noisy-0.3 on the bundled fixtures end to end: generation on the
// main queue, both checks of both question languages in the sandbox on the
// sandbox queue.
func TestEvalIFEvalCodeBaselines(t *testing.T) {
	if _, err := buildVia(t, dsifevalcode.Name, datasets.Request{Source: dsifevalcode.Embedded}); err != nil {
		t.Fatal(err)
	}
	items, err := dsifevalcode.FixtureItems()
	if err != nil {
		t.Fatal(err)
	}
	perLang := map[string]int64{}
	for _, it := range items {
		perLang[it.ProgrammingLanguage]++
	}
	names := ifevalcode.NewTask(nil, ifevalcode.Options{}).Metrics()

	ref, plan := ifcEval(t, "baseline/reference")
	s := ref.Summary
	if !s.Baseline || s.Samples != int64(len(items)) || s.InfraFailed != 0 || s.ModelFailed != 0 {
		t.Fatalf("baseline/reference: samples %d (want %d), infra %d, model %d, errors %v, baseline %v",
			s.Samples, len(items), s.InfraFailed, s.ModelFailed, s.ErrorsByClass, s.Baseline)
	}
	overall := ifcMetrics(s.Metrics)
	for _, n := range names {
		if m := overall[n]; m.N != len(items) || m.Mean != 1 {
			t.Errorf("baseline/reference %s: %+v, want mean 1 over %d samples", n, m, len(items))
		}
	}
	if len(s.Categories) != len(dsifevalcode.Languages) {
		t.Fatalf("baseline/reference: %d categories, want one per language (%d)", len(s.Categories), len(dsifevalcode.Languages))
	}
	for _, c := range s.Categories {
		if c.Samples != perLang[c.Category] {
			t.Errorf("category %q: %d samples, want %d", c.Category, c.Samples, perLang[c.Category])
		}
		cm := ifcMetrics(c.Metrics)
		for _, n := range names {
			if cm[n].Mean != 1 {
				t.Errorf("baseline/reference %s %s = %v, want 1", c.Category, n, cm[n].Mean)
			}
		}
	}
	if q := ifcScoreQueues(t, ref.RunID); q[app.QueueSandbox] != plan.Shards || len(q) != 1 {
		t.Errorf("ScoreShard scheduled on %v, want all %d shards on %q", q, plan.Shards, app.QueueSandbox)
	}
	for _, r := range ifcRows(t, plan) {
		var d ifevalcode.Details
		if err := json.Unmarshal([]byte(r.DetailsJSON), &d); err != nil || len(d.Replies) != 2 {
			t.Fatalf("%s: details %q (%v), want both replies", r.SampleID, r.DetailsJSON, err)
		}
		for _, rep := range d.Replies {
			if rep.Verdict == nil || rep.Verdict.Status != ifevalcode.StatusOK || rep.Response == "" {
				t.Errorf("%s %s: %+v", r.SampleID, rep.QuestionLanguage, rep)
			}
		}
		if r.Calls != 2 || r.Response != d.Replies[0].Response {
			t.Errorf("%s: %d calls, response kept %v", r.SampleID, r.Calls, r.Response == d.Replies[0].Response)
		}
	}

	noisy, nplan := ifcEval(t, "baseline/noisy-0.3")
	ns := noisy.Summary
	if ns.Samples != int64(len(items)) || ns.InfraFailed != 0 {
		t.Fatalf("baseline/noisy-0.3: samples %d, infra %d, errors %v", ns.Samples, ns.InfraFailed, ns.ErrorsByClass)
	}
	nm := ifcMetrics(ns.Metrics)
	if nm["corr"].Mean >= overall["corr"].Mean {
		t.Errorf("baseline/noisy-0.3 corr %v, want lower than reference's %v", nm["corr"].Mean, overall["corr"].Mean)
	}
	for _, n := range names {
		if m := nm[n]; m.N != len(items) || m.Mean > 1 || m.Mean < 0 {
			t.Errorf("baseline/noisy-0.3 %s: %+v", n, m)
		}
	}
	// A broken reply says why in its verdict.
	failed := 0
	for _, r := range ifcRows(t, nplan) {
		var d ifevalcode.Details
		if err := json.Unmarshal([]byte(r.DetailsJSON), &d); err != nil || len(d.Replies) != 2 {
			t.Fatalf("%s: details %q (%v)", r.SampleID, r.DetailsJSON, err)
		}
		for _, rep := range d.Replies {
			if v := rep.Verdict; v != nil && !v.Correct {
				failed++
				if v.Detail == "" || v.CorrectnessStatus == ifevalcode.StatusOK {
					t.Errorf("%s %s: failed without a reason: %+v", r.SampleID, rep.QuestionLanguage, v)
				}
				t.Logf("noisy %s %s: %s: %s", r.SampleID, rep.QuestionLanguage, v.Status, v.Detail)
			}
		}
	}
	if failed == 0 {
		t.Error("baseline/noisy-0.3: no reply failed correctness")
	}
	t.Logf("%-11s %-28s %s", "language", "reference corr/instr en|zh", "noisy-0.3 corr/instr en|zh")
	ncats := map[string]map[string]aggregate.MetricStat{}
	for _, c := range ns.Categories {
		ncats[c.Category] = ifcMetrics(c.Metrics)
	}
	row := func(m map[string]aggregate.MetricStat) string {
		return fmt.Sprintf("%.3f/%.3f (%.3f|%.3f, %.3f|%.3f)", m["corr"].Mean, m["instr"].Mean,
			m["corr_en"].Mean, m["corr_zh"].Mean, m["instr_en"].Mean, m["instr_zh"].Mean)
	}
	for _, c := range s.Categories {
		t.Logf("%-11s %-28s %s", c.Category, row(ifcMetrics(c.Metrics)), row(ncats[c.Category]))
	}
	t.Logf("%-11s %-28s %s", "all", row(overall), row(nm))
}
