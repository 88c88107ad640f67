package medrubric

import (
	"errors"
	"math"
	"strings"
	"testing"
)

const tol = 1e-12

// j builds a judged rubric with its category's default weight.
func j(id string, c Category, s Status) Judged {
	return Judged{ID: id, Category: c, Weight: DefaultWeight(c), Status: s}
}

// want is an expected metric: a value, or undefined (none).
type want struct {
	v   float64
	def bool
}

func v(x float64) want { return want{x, true} }

var none = want{}

func checkMetric(t *testing.T, name string, got *float64, w want) {
	t.Helper()
	switch {
	case !w.def && got != nil:
		t.Errorf("%s = %v, want undefined", name, *got)
	case w.def && got == nil:
		t.Errorf("%s undefined, want %v", name, w.v)
	case w.def && math.Abs(*got-w.v) > tol:
		t.Errorf("%s = %.15f, want %.15f", name, *got, w.v)
	}
}

type wantMetrics struct {
	score, positive, accuracy, coverage, risk, highlight, tripped want
	judgeErrors, pitfallsMet                                      int
}

func checkMetrics(t *testing.T, m Metrics, w wantMetrics) {
	t.Helper()
	checkMetric(t, "score", m.Score, w.score)
	checkMetric(t, "positive", m.Positive, w.positive)
	checkMetric(t, "accuracy", m.Accuracy, w.accuracy)
	checkMetric(t, "coverage", m.Coverage, w.coverage)
	checkMetric(t, "risk_interception", m.RiskInterception, w.risk)
	checkMetric(t, "highlight", m.Highlight, w.highlight)
	checkMetric(t, "tripped", m.Tripped, w.tripped)
	if m.JudgeErrors != w.judgeErrors || m.PitfallsMet != w.pitfallsMet {
		t.Errorf("judge errors %d, pitfalls met %d; want %d, %d", m.JudgeErrors, m.PitfallsMet, w.judgeErrors, w.pitfallsMet)
	}
}

// base is an answer with default weights (essential 3, important 2,
// highlight 1, pitfall 3): e1 met, e2 not, i1 met, h1 met, p1 as given.
func base(p1 Status) []Judged {
	return []Judged{
		j("e1", Essential, Met), j("e2", Essential, NotMet), j("i1", Important, Met),
		j("h1", Highlight, Met), j("p1", Pitfall, p1),
	}
}

func TestScore(t *testing.T) {
	// For base: positive = (3 + 2 + 1)/(3 + 3 + 2 + 1) = 6/9 = 2/3;
	// accuracy = 3/6 = 1/2; coverage = (3 + 2)/(3 + 3 + 2) = 5/8;
	// highlight = 1/1.
	clean := wantMetrics{score: v(2.0 / 3), positive: v(2.0 / 3), accuracy: v(0.5), coverage: v(0.625),
		risk: v(1), highlight: v(1), tripped: v(0)}
	tripped := func(score float64) wantMetrics {
		w := clean
		w.score, w.risk, w.tripped, w.pitfallsMet = v(score), v(0), v(1), 1
		return w
	}
	tests := []struct {
		name    string
		rubrics []Judged
		cfg     Config
		want    wantMetrics
	}{
		{"no pitfall met", base(NotMet), DefaultConfig(), clean},
		{"zero mode", base(Met), Config{Breaker: BreakZero}, tripped(0)},
		// min(2/3, 0.2) = 0.2.
		{"cap mode caps", base(Met), Config{Breaker: BreakCap, Cap: 0.2}, tripped(0.2)},
		// min(2/3, 0.9) = 2/3: the cap only lowers.
		{"cap above the score", base(Met), Config{Breaker: BreakCap, Cap: 0.9}, tripped(2.0 / 3)},
		// (6 − 3)/9 = 1/3.
		{"subtract mode", base(Met), Config{Breaker: BreakSubtract}, tripped(1.0 / 3)},
		// Two met pitfalls: (6 − 3 − 3)/9 = 0; risk = 0/6.
		{"subtract to zero", append(base(Met), j("p2", Pitfall, Met)), Config{Breaker: BreakSubtract},
			func() wantMetrics { w := tripped(0); w.pitfallsMet = 2; return w }()},
		// Pitfall weight 9: (6 − 9)/9 < 0, floored at 0.
		{"subtract floored at 0", append(base(NotMet)[:4], Judged{ID: "p1", Category: Pitfall, Weight: 9, Status: Met}),
			Config{Breaker: BreakSubtract}, tripped(0)},
		// One of two pitfalls met: risk = 3/6 = 1/2; zero mode.
		{"risk interception is the share not met", append(base(Met), j("p2", Pitfall, NotMet)), DefaultConfig(),
			func() wantMetrics { w := tripped(0); w.risk = v(0.5); return w }()},
		// Given weights: positive = (5 + 0.5)/(5 + 1 + 0.5) = 11/13;
		// accuracy 5/5; coverage 5/6; highlight 0.5/0.5; no pitfall
		// judged: risk and tripped undefined, no breaker.
		{"explicit weights", []Judged{
			{ID: "e1", Category: Essential, Weight: 5, Status: Met},
			{ID: "i1", Category: Important, Weight: 1, Status: NotMet},
			{ID: "h1", Category: Highlight, Weight: 0.5, Status: Met},
		}, DefaultConfig(), wantMetrics{score: v(11.0 / 13), positive: v(11.0 / 13), accuracy: v(1), coverage: v(5.0 / 6),
			risk: none, highlight: v(1), tripped: none}},
		// e2 and h1 failed: positive = 3/(3 + 2) = 0.6; accuracy 3/3;
		// coverage 3/5; highlight undefined.
		{"judge errors leave the denominators", []Judged{
			j("e1", Essential, Met), j("e2", Essential, JudgeError), j("i1", Important, NotMet),
			j("h1", Highlight, JudgeError), j("p1", Pitfall, NotMet),
		}, DefaultConfig(), wantMetrics{score: v(0.6), positive: v(0.6), accuracy: v(1), coverage: v(0.6),
			risk: v(1), highlight: none, tripped: v(0), judgeErrors: 2}},
		{"every verdict failed: no score", []Judged{
			j("e1", Essential, JudgeError), j("i1", Important, JudgeError), j("p1", Pitfall, JudgeError),
		}, DefaultConfig(), wantMetrics{judgeErrors: 3}},
		// Only the pitfall was judged: tripped, but no positive rubric to
		// score, so no score (not 0).
		{"only a pitfall judged", []Judged{
			j("e1", Essential, JudgeError), j("p1", Pitfall, Met),
		}, DefaultConfig(), wantMetrics{risk: v(0), tripped: v(1), judgeErrors: 1, pitfallsMet: 1}},
		// A failed pitfall cannot trip the breaker.
		{"pitfall verdict failed", base(JudgeError), DefaultConfig(),
			func() wantMetrics { w := clean; w.risk, w.tripped, w.judgeErrors = none, none, 1; return w }()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Score(tc.rubrics, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			checkMetrics(t, m, tc.want)
			if m.Rubrics != len(tc.rubrics) || m.Turns != 1 || m.Scored() != tc.want.score.def {
				t.Errorf("rubrics %d, turns %d, scored %v", m.Rubrics, m.Turns, m.Scored())
			}
		})
	}
}

func TestScoreErrors(t *testing.T) {
	tests := []struct {
		name    string
		rubrics []Judged
		cfg     Config
		wantErr string
	}{
		{"unknown category", []Judged{{ID: "x", Category: "optional", Weight: 1, Status: Met}}, DefaultConfig(), `rubric x: medrubric: unknown rubric category "optional"`},
		{"zero weight", []Judged{{ID: "x", Category: Essential, Weight: 0, Status: Met}}, DefaultConfig(), "rubric x: weight 0"},
		{"NaN weight", []Judged{{ID: "x", Category: Essential, Weight: math.NaN(), Status: Met}}, DefaultConfig(), "weight NaN"},
		{"infinite weight", []Judged{{ID: "x", Category: Essential, Weight: math.Inf(1), Status: Met}}, DefaultConfig(), "weight +Inf"},
		{"unknown status", []Judged{{ID: "x", Category: Essential, Weight: 1, Status: "maybe"}}, DefaultConfig(), `unknown status "maybe"`},
		{"unknown mode", nil, Config{Breaker: "veto"}, `unknown breaker mode "veto"`},
		{"cap above 1", nil, Config{Breaker: BreakCap, Cap: 1.5}, "cap 1.5 outside [0, 1]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Score(tc.rubrics, tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Score error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
	if _, err := ParseCategory("Essential"); !errors.Is(err, ErrUnknownCategory) {
		t.Errorf("ParseCategory is case-sensitive: %v", err)
	}
}

func TestCategories(t *testing.T) {
	tests := []struct {
		c        Category
		positive bool
		severity int
		weight   float64
	}{
		{Essential, true, 3, 3}, {Important, true, 2, 2}, {Highlight, true, 1, 1}, {Pitfall, false, 4, 3}, {"other", false, 0, 0},
	}
	for _, tc := range tests {
		t.Run(string(tc.c), func(t *testing.T) {
			if tc.c.Positive() != tc.positive || tc.c.Severity() != tc.severity || DefaultWeight(tc.c) != tc.weight {
				t.Errorf("%s: positive %v, severity %d, weight %v", tc.c, tc.c.Positive(), tc.c.Severity(), DefaultWeight(tc.c))
			}
		})
	}
}

func TestMap(t *testing.T) {
	m, err := Score([]Judged{j("e1", Essential, Met), j("i1", Important, NotMet)}, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	got := m.Map()
	// positive = 3/5; accuracy 1; coverage 3/5; no highlight or pitfall.
	wantMap := map[string]float64{MetricScore: 0.6, MetricPositive: 0.6, MetricAccuracy: 1, MetricCoverage: 0.6}
	if len(got) != len(wantMap) {
		t.Fatalf("Map = %v, want %v", got, wantMap)
	}
	for k, w := range wantMap {
		if math.Abs(got[k]-w) > tol {
			t.Errorf("Map[%s] = %v, want %v", k, got[k], w)
		}
	}
}
