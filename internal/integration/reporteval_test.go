package integration

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/reporteval"
	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
	scorer "github.com/benchline/benchline/scorers/reporteval"
	"github.com/benchline/benchline/workflows"
)

// TestReportEvalOnStack evaluates the ReportEval fixtures on the real
// stack with the demo's judges: the baseline models write the reports,
// the workers fetch the cited sources from the stack's source server
// (sources.benchline.test, cached in MinIO), and the run's summary shows
// every figure with its panel's agreement, both factuality modes side by
// side, and the noisy model below the reference.
func TestReportEvalOnStack(t *testing.T) {
	res, err := buildVia(t, reporteval.Name, datasets.Request{Source: reporteval.Embedded,
		Params: map[string]string{reporteval.ParamReports: reporteval.ReportsReference}})
	if err != nil {
		t.Fatal(err)
	}
	dataset := reporteval.Name + "@" + res.Version
	eval := func(model string) (aggregate.Summary, runs.Plan) {
		t.Helper()
		out, err := evalVia(t, "", workflows.EvaluateModelInput{Request: runs.Request{Dataset: dataset, Model: model, Judges: reporteval.DemoJudges}})
		if err != nil {
			t.Fatal(err)
		}
		s := out.Summary
		if s.Scored != res.Rows || s.InfraFailed != 0 {
			t.Fatalf("%s: scored %d of %d, infrastructure failures %d", model, s.Scored, res.Rows, s.InfraFailed)
		}
		var plan runs.Plan
		if err := blob.GetJSON(context.Background(), stack.Store, runs.PlanKey(s.RunID), &plan); err != nil {
			t.Fatal(err)
		}
		return s, plan
	}
	ref, plan := eval("baseline/reference")
	// Every source was fetched through the stack: none unverifiable.
	if u := metric(ref, scorer.MetricFactualityUnverifiable); u.N != int(res.Rows) || u.Mean != 0 {
		t.Errorf("factuality_unverifiable %+v", u)
	}
	for _, name := range []string{scorer.MetricQuality, scorer.MetricRedundancy, scorer.MetricFactuality, scorer.MetricFactuality + scorer.AsymSuffix} {
		if m := metric(ref, name); m.N != int(res.Rows) {
			t.Errorf("%s reported for %d of %d samples", name, m.N, res.Rows)
		}
	}
	if c := metric(ref, scorer.MetricFactualityContradicted); !(c.Mean > 0) {
		t.Errorf("the fixtures' contradictions not found: %+v", c)
	}
	// The biased judge shows in every panel's agreement.
	for _, set := range []string{scorer.SetQuality, scorer.SetRedundancy, scorer.SetFactuality} {
		a := agreementOf(t, ref, set)
		if a.Scale != judge.ScaleInterval || a.Alpha == nil || !(*a.Alpha < 0.5) || len(a.Judges) != 3 {
			t.Errorf("%s agreement %+v", set, a)
		} else {
			t.Logf("%s: alpha %.3f over %d items", set, *a.Alpha, a.Items)
		}
	}

	// The audit record of one row: prompt versions, replies, parsed
	// verdicts, the pairs drawn, the sources fetched.
	rows, err := pq.ReadAll[schemas.ResultRow](context.Background(), stack.Store, runs.ShardKey(plan.RunID, 0))
	if err != nil {
		t.Fatal(err)
	}
	var d scorer.Details
	if err := json.Unmarshal([]byte(rows[0].DetailsJSON), &d); err != nil {
		t.Fatal(err)
	}
	if v := d.Quality.Judges[0].Verdict; v.PromptVersion != scorer.QualityPromptVersion || v.Reply == "" || len(v.Parsed) == 0 {
		t.Errorf("quality verdict %+v", v)
	}
	if len(d.Redundancy.Pairs) == 0 || len(d.Redundancy.Sections) == 0 || d.Redundancy.Seed == 0 {
		t.Errorf("redundancy record %+v", d.Redundancy)
	}
	if len(d.Sources) == 0 || !strings.HasPrefix(d.Sources[0].URL, "http://"+reporteval.SourcesHost+"/") || d.FactualityAsym == nil {
		t.Errorf("sources %+v", d.Sources)
	}
	if infos, err := stack.Store.List(context.Background(), "cache/sources/"); err != nil || len(infos) < 40 {
		t.Errorf("%d sources cached (%v), want the fixtures' 40", len(infos), err)
	}

	noisy, _ := eval("baseline/noisy-0.3")
	if q, r := metric(noisy, scorer.MetricQuality), metric(ref, scorer.MetricQuality); !(q.Mean < r.Mean) {
		t.Errorf("quality: noisy %.3f, reference %.3f", q.Mean, r.Mean)
	}
	t.Logf("quality: reference %.3f, noisy-0.3 %.3f; factuality: reference %.3f (asymmetric %.3f)",
		metric(ref, scorer.MetricQuality).Mean, metric(noisy, scorer.MetricQuality).Mean,
		metric(ref, scorer.MetricFactuality).Mean, metric(ref, scorer.MetricFactuality+scorer.AsymSuffix).Mean)
}
