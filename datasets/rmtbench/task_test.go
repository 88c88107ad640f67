package rmtbench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchline/benchline/activities/activitiestest"
	"github.com/benchline/benchline/datasets/rmtbench"
	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
	scorer "github.com/benchline/benchline/scorers/rmtbench"
)

// fixtureRun evaluates the fixture dialogues with the task through a real
// gateway and baseline server (answering from the task's references), as
// a run does.
type fixtureRun struct {
	samples []scorers.Sample
	env     scorers.Env
}

func newFixtureRun(t testing.TB) *fixtureRun {
	t.Helper()
	rows, err := rmtbench.FixtureDialogues()
	if err != nil {
		t.Fatal(err)
	}
	refs := baseline.NewMemoryReferences()
	r := &fixtureRun{}
	for i := range rows {
		s := scorers.Sample{ID: rows[i].ID, Category: rows[i].Scenario, Row: &rows[i]}
		r.samples = append(r.samples, s)
		for _, ref := range (scorer.Task{}).References(s) {
			refs.Add(ref.Messages, baseline.Reference{Content: ref.Content})
		}
	}
	r.env = scorers.Env{Models: activitiestest.NewLive(t, rmtbench.Builder{}, nil, baseline.Options{References: refs}).Gateway}
	return r
}

// result is a run's means, per metric, over the samples that report it.
type result struct {
	mean      map[string]float64
	n         map[string]int
	agreement []judge.Agreement
	details   map[string]scorer.Details
	rounds    int
}

// run evaluates the samples keep selects (all for nil) with model and
// judges.
func (r *fixtureRun) run(t testing.TB, model string, judges map[string]string, keep func(*schemas.RMTBenchDialogue) bool) result {
	t.Helper()
	env := r.env
	env.Model, env.Judges = model, judges
	res := result{mean: map[string]float64{}, n: map[string]int{}, details: map[string]scorer.Details{}}
	var ratings []judge.Ratings
	for _, s := range r.samples {
		if keep != nil && !keep(s.Row.(*schemas.RMTBenchDialogue)) {
			continue
		}
		out, err := scorer.Task{}.Evaluate(context.Background(), env, s)
		if err != nil {
			t.Fatalf("%s: %v", s.ID, err)
		}
		for k, v := range out.Metrics {
			res.mean[k] += v
			res.n[k]++
		}
		d := out.Details.(scorer.Details)
		ratings = append(ratings, d.Ratings...)
		res.details[s.ID] = d
		res.rounds += len(d.Rounds)
	}
	for k := range res.mean {
		res.mean[k] /= float64(res.n[k])
	}
	res.agreement = judge.RunAgreement(ratings)
	return res
}

func mode(m string) func(*schemas.RMTBenchDialogue) bool {
	return func(r *schemas.RMTBenchDialogue) bool { return r.Mode == m }
}

// TestTaskOnFixtures runs the task end to end on the 32 fixture dialogues
// with the baseline models, simulated users and judges (offline: a real
// gateway and baseline server, no Temporal), and checks what the
// baselines are for.
func TestTaskOnFixtures(t *testing.T) {
	r := newFixtureRun(t)
	rule := map[string]string{scorer.RoleJudge: "baseline/judge"}
	persona := r.run(t, "baseline/persona", rule, nil)
	for _, name := range []string{"score", "character_consistency", "emotional_expression", "intent_fulfilment", "preference_memory",
		"safety_boundaries", "score_en", "score_zh"} {
		if persona.mean[name] != 1 {
			t.Errorf("persona %s = %v, want 1", name, persona.mean[name])
		}
	}
	if persona.n["score"] != 32 || persona.n["score_zh"] != 16 || persona.n[scorer.MetricUserEnded] != 16 || persona.mean[scorer.MetricUserEnded] != 0 {
		t.Errorf("persona: n %v, user_ended %v", persona.n, persona.mean[scorer.MetricUserEnded])
	}
	t.Logf("persona, the rule: score %.3f over %d dialogues, %d rounds", persona.mean["score"], persona.n["score"], persona.rounds)

	t.Run("the registration clusters dialogues by character", func(t *testing.T) {
		chars := map[string]bool{}
		for _, s := range r.samples {
			d := persona.details[s.ID]
			b, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			row := schemas.ResultRow{SampleID: s.ID, Category: s.Category, DetailsJSON: string(b)}
			want := s.Row.(*schemas.RMTBenchDialogue).CharacterID
			if got := rmtbench.Benchmark.Cluster(row); got != want || want == "" {
				t.Errorf("%s: cluster %q, want the character %q", s.ID, got, want)
			}
			chars[want] = true
		}
		if len(chars) != 8 || rmtbench.Benchmark.ClusterBy == "" {
			t.Errorf("%d characters (want the fixtures' 8); ClusterBy %q", len(chars), rmtbench.Benchmark.ClusterBy)
		}
	})

	t.Run("the out-of-character assistant scores lower", func(t *testing.T) {
		ooc := r.run(t, "baseline/assistant", rule, nil)
		if ooc.mean["character_consistency"] != 0 || ooc.mean["preference_memory"] != 0 || !(ooc.mean["score"] < persona.mean["score"]-0.4) {
			t.Errorf("assistant: %v", ooc.mean)
		}
		t.Logf("assistant, the rule: score %.3f (en %.3f, zh %.3f), consistency %.3f, emotion %.3f, intent %.3f, memory %.3f, safety %.3f",
			ooc.mean["score"], ooc.mean["score_en"], ooc.mean["score_zh"], ooc.mean["character_consistency"], ooc.mean["emotional_expression"],
			ooc.mean["intent_fulfilment"], ooc.mean["preference_memory"], ooc.mean["safety_boundaries"])
	})

	t.Run("the reference answers fixed dialogues only", func(t *testing.T) {
		fixed := r.run(t, "baseline/reference", rule, mode(schemas.RMTModeFixed))
		sim := r.run(t, "baseline/reference", rule, mode(schemas.RMTModeSimulated))
		if fixed.mean["score"] != 1 || !(sim.mean["score"] < 0.6) {
			t.Errorf("reference: fixed %.3f, simulated %.3f", fixed.mean["score"], sim.mean["score"])
		}
	})

	t.Run("a simulated user that ends after three turns", func(t *testing.T) {
		res := r.run(t, "baseline/persona", map[string]string{scorer.RoleJudge: "baseline/judge", scorer.RoleUser: "baseline/user-3"}, mode(schemas.RMTModeSimulated))
		for id, d := range res.details {
			if len(d.Rounds) != 3 || d.Ended != scorer.EndedUser || d.End == nil || d.End.Reply != "[END]" {
				t.Errorf("%s: %d rounds, ended %q", id, len(d.Rounds), d.Ended)
			}
		}
		if res.mean[scorer.MetricUserEnded] != 1 || res.mean["score"] != 1 {
			t.Errorf("user_ended %v, score %v", res.mean[scorer.MetricUserEnded], res.mean["score"])
		}
	})

	t.Run("a lenient judge is caught by the agreement and outvoted by the median", func(t *testing.T) {
		agree := r.run(t, "baseline/assistant", map[string]string{scorer.RoleJudge: "baseline/judge,baseline/judge-noisy-0"}, nil)
		lenient := r.run(t, "baseline/assistant", map[string]string{scorer.RoleJudge: "baseline/judge,baseline/judge-yes"}, nil)
		panel := r.run(t, "baseline/assistant", map[string]string{scorer.RoleJudge: "baseline/judge,baseline/judge-noisy-0,baseline/judge-yes"}, nil)
		ooc := r.run(t, "baseline/assistant", rule, nil)
		if len(agree.agreement) != 1 || agree.agreement[0].Alpha == nil || *agree.agreement[0].Alpha != 1 {
			t.Fatalf("two judges that agree: %+v", agree.agreement)
		}
		if len(lenient.agreement) != 1 || lenient.agreement[0].Alpha == nil || !(*lenient.agreement[0].Alpha < 0.5) {
			t.Fatalf("with the lenient judge: %+v", lenient.agreement)
		}
		// Two judges: the median is the mean, so the lenient one lifts the
		// score; three: the median is the rule's score.
		if !(lenient.mean["score"] > ooc.mean["score"]+0.1) || math.Abs(panel.mean["score"]-ooc.mean["score"]) > 1e-9 {
			t.Errorf("assistant: rule %.3f, rule + lenient %.3f, panel of three %.3f", ooc.mean["score"], lenient.mean["score"], panel.mean["score"])
		}
		t.Logf("alpha: judge + judge-noisy-0 %.3f, judge + judge-yes %.3f (unanimous %d of %d); assistant scored %.3f by the rule, %.3f with the lenient judge, %.3f by a panel of three",
			*agree.agreement[0].Alpha, *lenient.agreement[0].Alpha, lenient.agreement[0].Unanimous, lenient.agreement[0].Paired,
			ooc.mean["score"], lenient.mean["score"], panel.mean["score"])
	})

	t.Run("malformed replies are judge errors, never zeros", func(t *testing.T) {
		res := r.run(t, "baseline/persona", map[string]string{scorer.RoleJudge: "baseline/judge-malformed-0.5"}, nil)
		if res.mean[scorer.MetricJudgeErrorRate] < 0.3 || res.mean[scorer.MetricJudgeErrorRate] > 0.7 || res.mean["score"] != 1 {
			t.Errorf("judge_error_rate %.3f, score %.3f", res.mean[scorer.MetricJudgeErrorRate], res.mean["score"])
		}
	})
}

// BenchmarkDialogues plays dialogues with baseline/persona, the baseline
// simulated user and the rule judge through a real gateway and an
// in-process baseline server (no Temporal, no object store): the cost of a
// turn in one process, task, gateway and server together. "fixtures" are
// the 32 fixture dialogues (130 turns, 4 a dialogue on average);
// "simulated-N" are 16 simulated dialogues of N turns, where every call
// carries the whole history. Reports turns/s and CPU µs per turn (the
// process's user and system time).
func BenchmarkDialogues(b *testing.B) {
	for _, bc := range []struct {
		name  string
		turns int // 0: the fixtures
	}{{"fixtures", 0}, {"simulated-5", 5}, {"simulated-20", 20}} {
		b.Run(bc.name, func(b *testing.B) {
			r := newFixtureRun(b)
			if bc.turns > 0 {
				r.samples = longDialogues(b, 16, bc.turns)
			}
			judges := map[string]string{scorer.RoleJudge: "baseline/judge"}
			var turns int
			var cpu time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				before := cpuTime()
				res := r.run(b, "baseline/persona", judges, nil)
				cpu += cpuTime() - before
				turns += res.rounds
			}
			b.ReportMetric(float64(turns)/b.Elapsed().Seconds(), "turns/s")
			b.ReportMetric(float64(cpu.Microseconds())/float64(turns), "cpu-µs/turn")
		})
	}
}

// longDialogues are n simulated dialogues of the fixture characters with
// turns turns each, alternating English and Chinese.
func longDialogues(t testing.TB, n, turns int) []scorers.Sample {
	t.Helper()
	rc, err := rmtbench.Fixtures().Open(context.Background(), rmtbench.CharactersFile)
	if err != nil {
		t.Fatal(err)
	}
	chars, err := rmtbench.ReadCharacters(rc, rmtbench.CharactersFile)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"keeper", "botanist", "teahouse", "detective", "captain", "fox", "oak", "ember"}
	var lines strings.Builder
	for i := range n {
		fmt.Fprintf(&lines, `{"id": "long-%d", "character": %q, "language": %q, "scenario": "user_preference", "motivation": "A long talk.", `+
			`"topics": ["the weather", "the sea"], "preferences": [{"statement": "I hate the cold.", "keywords": ["cold"]}], "max_turns": %d}`+"\n",
			i, ids[(i/2)%len(ids)], []string{"en", "zh"}[i%2], turns)
	}
	rows, err := rmtbench.ReadDialogues(strings.NewReader(lines.String()), rmtbench.DialoguesFile, chars)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]scorers.Sample, len(rows))
	for i := range rows {
		out[i] = scorers.Sample{ID: rows[i].ID, Category: rows[i].Scenario, Row: &rows[i]}
	}
	return out
}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
