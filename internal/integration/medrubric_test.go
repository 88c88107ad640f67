package integration

import (
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/medrubric"
	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/internal/runs"
	scorer "github.com/benchline/benchline/scorers/medrubric"
	"github.com/benchline/benchline/workflows"
)

// agreementOf returns a summary's agreement of one set.
func agreementOf(t *testing.T, s aggregate.Summary, set string) judge.Agreement {
	t.Helper()
	for _, a := range s.Agreement {
		if a.Set == set {
			return a
		}
	}
	t.Fatalf("run %s: no agreement for %s in %+v", s.RunID, set, s.Agreement)
	return judge.Agreement{}
}

// TestMedRubricBiasedJudgeCaught evaluates the medrubric fixtures on the
// real stack with baseline judge panels: a panel with the judge biased to
// "met" agrees far less (Krippendorff's alpha in the run's summary) than
// a panel of two judges that agree, and the noisy model scores below the
// reference.
func TestMedRubricBiasedJudgeCaught(t *testing.T) {
	res, err := buildVia(t, medrubric.Name, datasets.Request{Source: medrubric.Embedded})
	if err != nil {
		t.Fatal(err)
	}
	dataset := medrubric.Name + "@" + res.Version
	eval := func(model, judges string) aggregate.Summary {
		t.Helper()
		out, err := evalVia(t, "", workflows.EvaluateModelInput{Request: runs.Request{Dataset: dataset, Model: model,
			Judges: map[string]string{scorer.RoleJudge: judges}}})
		if err != nil {
			t.Fatal(err)
		}
		if s := out.Summary; s.Scored != res.Rows || s.InfraFailed != 0 {
			t.Fatalf("%s judged by %s: scored %d of %d, infrastructure failures %d", model, judges, s.Scored, res.Rows, s.InfraFailed)
		}
		return out.Summary
	}
	agree := eval("baseline/reference", "baseline/judge-noisy-0,baseline/judge")
	biased := eval("baseline/reference", "baseline/judge-yes,baseline/judge")
	a, b := agreementOf(t, agree, scorer.SetScore), agreementOf(t, biased, scorer.SetScore)
	if a.Alpha == nil || b.Alpha == nil || !(*a.Alpha > 0.9) || !(*b.Alpha < *a.Alpha-0.5) {
		t.Fatalf("alpha: agreeing panel %+v, with the biased judge %+v", a, b)
	}
	if a.Samples != int(res.Rows) || a.Items != 279 || b.Unanimous >= a.Unanimous {
		t.Errorf("agreeing panel %+v, biased %+v", a, b)
	}
	t.Logf("alpha over %d rubrics: judge + judge-noisy-0 %.3f, judge + judge-yes %.3f", a.Items, *a.Alpha, *b.Alpha)
	if u := metric(biased, scorer.MetricPanelUnanimous); u.Mean >= metric(agree, scorer.MetricPanelUnanimous).Mean {
		t.Errorf("panel_unanimous with the biased judge %.3f", u.Mean)
	}

	ref := metric(agree, scorer.MetricScore)
	noisy := metric(eval("baseline/noisy-0.3", "baseline/judge-noisy-0,baseline/judge"), scorer.MetricScore)
	if ref.Mean != 1 || !(noisy.Mean < ref.Mean-0.1) || ref.N != int(res.Rows) {
		t.Errorf("score: reference %.3f over %d, noisy-0.3 %.3f", ref.Mean, ref.N, noisy.Mean)
	}
	t.Logf("score: reference %.3f, noisy-0.3 %.3f", ref.Mean, noisy.Mean)
}

// TestMedRubricGeneratedOnStack builds medrubric with baseline writers on
// the real stack (the Generator path) and evaluates the reference on it.
func TestMedRubricGeneratedOnStack(t *testing.T) {
	res, err := buildVia(t, medrubric.Name, datasets.Request{Source: medrubric.Embedded,
		Params: map[string]string{"writers": "baseline/judge,baseline/judge-noisy-0.2,baseline/judge-yes", "k": "2"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows < 25 || res.Generated.Units == 0 || res.Generated.Calls != 117 {
		t.Fatalf("generated build %+v", res)
	}
	out, err := evalVia(t, "", workflows.EvaluateModelInput{Request: runs.Request{Dataset: medrubric.Name + "@" + res.Version,
		Model: "baseline/reference", Judges: map[string]string{scorer.RoleJudge: "baseline/judge"}}})
	if err != nil {
		t.Fatal(err)
	}
	if s := out.Summary; s.Scored != res.Rows || metric(s, scorer.MetricAccuracy).Mean < 0.9 {
		t.Errorf("reference on the generated rubrics: %+v", s.Metrics)
	}
}
