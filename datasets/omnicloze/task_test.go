package omnicloze_test

import (
	"context"
	"testing"

	"github.com/benchline/benchline/activities/activitiestest"
	"github.com/benchline/benchline/datasets/omnicloze"
	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
	scorer "github.com/benchline/benchline/scorers/omnicloze"
)

// fixtureItems are the items the demo builds: the hand-written ones, then
// the cloze maker's for every caption (what the writer baseline/judge
// writes).
func fixtureItems(t *testing.T) []schemas.OmniClozeItem {
	t.Helper()
	captions, items := fixtures(t)
	for _, c := range captions {
		r, ok := omnicloze.MakeCloze(c, othersIn(captions, c), 5, 3, 0)
		if !ok {
			t.Fatalf("%s: no cloze", c.ID)
		}
		it, check := omnicloze.ReplyItem(c, r, omnicloze.DemoWriter)
		if !check.Kept() {
			t.Fatalf("%s: %+v", c.ID, check)
		}
		items = append(items, it)
	}
	return items
}

// fixtureRun evaluates the fixture items with the task through a real
// gateway and baseline server answering from the task's references, as a
// run does.
type fixtureRun struct {
	samples []scorers.Sample
	env     scorers.Env
}

func newFixtureRun(t *testing.T) *fixtureRun {
	t.Helper()
	items := fixtureItems(t)
	refs := baseline.NewMemoryReferences()
	r := &fixtureRun{}
	for i := range items {
		s := scorers.Sample{ID: items[i].ID, Category: scorer.Category(&items[i]), Row: &items[i]}
		r.samples = append(r.samples, s)
		ref, ok := scorer.Task{}.Reference(s)
		if !ok {
			t.Fatalf("%s: no reference", s.ID)
		}
		refs.Add(ref.Messages, baseline.Reference{Content: ref.Content})
	}
	_, url := activitiestest.ServeBaseline(t, baseline.Options{References: refs})
	r.env = scorers.Env{Models: activitiestest.NewGateway(t, url)}
	return r
}

// run evaluates every item and returns the roll-up, the run's agreement
// and the outcomes.
func (r *fixtureRun) run(t *testing.T, model string, judges map[string]string) (scorer.Report, []judge.Agreement, []scorers.Outcome) {
	t.Helper()
	env := r.env
	env.Model, env.Judges = model, judges
	var units []scorer.Unit
	var ratings []judge.Ratings
	var outs []scorers.Outcome
	for _, s := range r.samples {
		out, err := scorer.Task{}.Evaluate(context.Background(), env, s)
		if err != nil {
			t.Fatalf("%s: %v", s.ID, err)
		}
		d := out.Details.(scorer.Details)
		it := s.Row.(*schemas.OmniClozeItem)
		units = append(units, scorer.Unit{Domain: it.Domain, Subcategory: it.Subcategory, Tally: d.Tally})
		ratings = append(ratings, d.Ratings...)
		outs = append(outs, out)
	}
	return scorer.Rollup(units), judge.RunAgreement(ratings), outs
}

// TestTaskOnFixtures runs the task end to end on the fixture items with
// the baseline models and judges (offline: a real gateway and baseline
// server, no Temporal).
func TestTaskOnFixtures(t *testing.T) {
	r := newFixtureRun(t)
	ref, _, outs := r.run(t, "baseline/reference", nil)
	// 27 items of 5 blanks and 6 hand-written ones with 14 blanks.
	if o := ref.Overall; o.Items != 33 || o.Tally.Judged() != 149 || o.Micro.Accuracy != 1 || o.Tally.JudgeErrors != 0 {
		t.Errorf("reference captions, lexical judge: %+v", o)
	}
	for _, o := range outs {
		if o.Metrics[scorer.MetricAccuracy] != 1 {
			t.Errorf("reference caption scored %v", o.Metrics)
		}
	}
	if len(ref.Domains) != 3 || len(ref.Subcategories) != 9 {
		t.Errorf("%d domains, %d sub-categories", len(ref.Domains), len(ref.Subcategories))
	}

	t.Run("the noisy captioner omits", func(t *testing.T) {
		noisy, _, _ := r.run(t, "baseline/noisy-0.3", nil)
		o := noisy.Overall
		if !(o.Micro.Accuracy < 0.9) || !(o.Micro.Omission > 0.1) || !(o.Micro.Accuracy+o.Micro.Omission+o.Micro.Hallucination > 0.999) {
			t.Errorf("noisy-0.3: %+v", o.Micro)
		}
		t.Logf("noisy-0.3: micro %+v over %d blanks", o.Micro, o.Tally.Judged())
	})

	t.Run("a panel with malformed judges", func(t *testing.T) {
		rep, agree, outs := r.run(t, "baseline/reference", omnicloze.DemoJudges)
		errRate := 0.0
		for _, o := range outs {
			errRate += o.Metrics[scorer.MetricJudgeErrorRate]
		}
		errRate /= float64(len(outs))
		if rep.Overall.Micro.Accuracy != 1 || !(errRate > 0.05 && errRate < 0.25) {
			t.Errorf("reference with the demo panel: %+v, judge error rate %.3f", rep.Overall, errRate)
		}
		if len(agree) != 1 || agree[0].Alpha == nil || *agree[0].Alpha != 1 {
			t.Errorf("agreement %+v", agree)
		}
		t.Logf("demo panel: judge error rate %.3f, alpha %.3f over %d blanks", errRate, *agree[0].Alpha, agree[0].Items)
	})
}
