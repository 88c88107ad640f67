package medrubric_test

import (
	"context"
	"math"
	"testing"

	"github.com/benchline/benchline/activities/activitiestest"
	"github.com/benchline/benchline/datasets/medrubric"
	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
	scorer "github.com/benchline/benchline/scorers/medrubric"
)

// fixtureRun evaluates every fixture item with the task through a real
// gateway and baseline server (answering from the task's references), as
// a run does, and returns the outcomes.
type fixtureRun struct {
	samples []scorers.Sample
	env     scorers.Env
}

func newFixtureRun(t *testing.T) *fixtureRun {
	t.Helper()
	items, err := medrubric.FixtureItems()
	if err != nil {
		t.Fatal(err)
	}
	refs := baseline.NewMemoryReferences()
	r := &fixtureRun{}
	for i := range items {
		s := scorers.Sample{ID: items[i].ID, Category: items[i].Domain, Row: &items[i]}
		r.samples = append(r.samples, s)
		for _, ref := range (scorer.Task{}).References(s) {
			refs.Add(ref.Messages, baseline.Reference{Content: ref.Content})
		}
	}
	_, url := activitiestest.ServeBaseline(t, baseline.Options{References: refs})
	r.env = scorers.Env{Models: activitiestest.NewGateway(t, url)}
	return r
}

// run evaluates every item with model and judges and returns the mean of
// each metric over the samples that report it, and the run's agreement.
func (r *fixtureRun) run(t *testing.T, model string, judges map[string]string) (map[string]float64, map[string]int, []judge.Agreement, []scorers.Outcome) {
	t.Helper()
	env := r.env
	env.Model, env.Judges = model, judges
	sums, n := map[string]float64{}, map[string]int{}
	var ratings []judge.Ratings
	var outs []scorers.Outcome
	for _, s := range r.samples {
		out, err := scorer.Task{}.Evaluate(context.Background(), env, s)
		if err != nil {
			t.Fatalf("%s: %v", s.ID, err)
		}
		for k, v := range out.Metrics {
			sums[k] += v
			n[k]++
		}
		ratings = append(ratings, out.Details.(scorer.Details).Ratings...)
		outs = append(outs, out)
	}
	for k := range sums {
		sums[k] /= float64(n[k])
	}
	return sums, n, judge.RunAgreement(ratings), outs
}

// TestTaskOnFixtures runs the task end to end on the 32 fixtures with the
// baseline models and judges (offline: a real gateway and baseline server,
// no Temporal), and checks what the baselines are for.
func TestTaskOnFixtures(t *testing.T) {
	r := newFixtureRun(t)
	ref, _, _, outs := r.run(t, "baseline/reference", map[string]string{"judge": "baseline/judge"})
	for _, o := range outs {
		m := o.Metrics
		if m["accuracy"] != 1 || m["coverage"] != 1 || m["risk_interception"] != 1 || m["judge_error_rate"] != 0 {
			t.Errorf("reference answer judged by the keyword rule: %v", m)
		}
	}
	t.Logf("reference, keyword judge: %v", ref)

	t.Run("the noisy model scores below the reference", func(t *testing.T) {
		noisy, _, _, _ := r.run(t, "baseline/noisy-0.3", map[string]string{"judge": "baseline/judge"})
		if !(noisy["score"] < ref["score"]-0.1) || !(noisy["coverage"] < 0.9) {
			t.Errorf("noisy score %.3f coverage %.3f, reference score %.3f", noisy["score"], noisy["coverage"], ref["score"])
		}
	})

	t.Run("a biased judge is caught by the agreement", func(t *testing.T) {
		_, _, agree, _ := r.run(t, "baseline/reference", map[string]string{"judge": "baseline/judge,baseline/judge-noisy-0"})
		yes, _, biased, _ := r.run(t, "baseline/reference", map[string]string{"judge": "baseline/judge,baseline/judge-yes"})
		if len(agree) != 1 || agree[0].Alpha == nil || *agree[0].Alpha != 1 {
			t.Fatalf("two judges that agree: %+v", agree)
		}
		if len(biased) != 1 || biased[0].Alpha == nil || !(*biased[0].Alpha < 0.5) {
			t.Fatalf("with the biased judge: %+v", biased)
		}
		// The panel's tie rule: a split on a pitfall resolves to "met", so
		// every answer trips the breaker; a split on a positive rubric to
		// "not met", so coverage is the keyword judge's.
		if yes["tripped"] != 1 || yes["score"] != 0 || yes["coverage"] != 1 || yes["panel_unanimous"] >= 0.9 {
			t.Errorf("reference with judge + judge-yes: %v", yes)
		}
		t.Logf("alpha: judge + judge-noisy-0 %.3f, judge + judge-yes %.3f (unanimous %d of %d)", *agree[0].Alpha, *biased[0].Alpha, biased[0].Unanimous, biased[0].Paired)
	})

	t.Run("malformed replies are judge errors, never zeros", func(t *testing.T) {
		m, n, _, outs := r.run(t, "baseline/reference", map[string]string{"judge": "baseline/judge-malformed-0.5"})
		unscored := 0
		for _, o := range outs {
			if _, ok := o.Metrics["score"]; !ok {
				unscored++
			}
		}
		if unscored == 0 || n["score"]+unscored != len(outs) || m["judge_error_rate"] < 0.3 || m["judge_error_rate"] > 0.7 {
			t.Errorf("%d unscored of %d, judge_error_rate %.3f", unscored, len(outs), m["judge_error_rate"])
		}
		// Scored samples score what the keyword judge gives them: the
		// judge errors are left out, not counted as unmet.
		if m["coverage"] != 1 || m["accuracy"] != 1 {
			t.Errorf("reference with a malformed judge: %v", m)
		}
	})

	t.Run("both modes side by side", func(t *testing.T) {
		m, _, agree, _ := r.run(t, "baseline/noisy-0.3", map[string]string{
			"judge": "baseline/judge", "proposer": "baseline/judge", "checker": "baseline/judge"})
		for _, k := range []string{"score", "coverage", "accuracy", "risk_interception"} {
			if math.Abs(m[k]-m[k+"_asym"]) > 1e-9 {
				t.Errorf("%s %.4f, %s_asym %.4f: the keyword oracle over the answer's sentences should agree", k, m[k], k, m[k+"_asym"])
			}
		}
		if len(agree) != 2 || agree[1].Set != scorer.SetAsym {
			t.Errorf("agreement %+v", agree)
		}
	})
}

// BenchmarkScore scores every turn of the fixtures from fixed verdicts
// (the keyword rule on each reference answer), as the task does after its
// judge calls: the cost of rubric scoring itself, per turn.
func BenchmarkScore(b *testing.B) {
	items, err := medrubric.FixtureItems()
	if err != nil {
		b.Fatal(err)
	}
	var turns [][]scorer.Judged
	for _, it := range items {
		ts, err := medrubric.Turns(it)
		if err != nil {
			b.Fatal(err)
		}
		for _, t := range ts {
			turns = append(turns, judgedByKeywords(t))
		}
	}
	cfg := scorer.DefaultConfig()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, j := range turns {
			if _, err := scorer.Score(j, cfg); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(turns)), "ns/turn")
}

func judgedByKeywords(t schemas.MedRubricTurn) []scorer.Judged {
	out := make([]scorer.Judged, len(t.Rubrics))
	for i, r := range t.Rubrics {
		st := scorer.NotMet
		if judge.KeywordsMet(t.Reference, r.Keywords) {
			st = scorer.Met
		}
		out[i] = scorer.Judged{ID: r.ID, Category: scorer.Category(r.Category), Weight: r.Weight, Status: st}
	}
	return out
}
