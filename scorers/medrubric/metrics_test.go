package medrubric

import (
	"math"
	"testing"
)

func mustScore(t *testing.T, rubrics []Judged) Metrics {
	t.Helper()
	m, err := Score(rubrics, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The turns used below, with their metrics under the default (zero) mode:
//
//	turnA = base(NotMet): score 2/3, positive 2/3, accuracy 1/2, coverage 5/8,
//	        highlight 1, risk 1, tripped 0 (5 rubrics)
//	turnB: every verdict failed: nothing defined (4 rubrics, 4 judge errors)
//	turnC: e met (3), i not (2), h not (1), p met (3): positive 3/6 = 1/2,
//	        score 0, accuracy 1, coverage 3/5, highlight 0, risk 0, tripped 1
//	turnD: e met, p not met: score 1, positive 1, accuracy 1, coverage 1,
//	        risk 1, tripped 0, highlight undefined (2 rubrics)
func turns(t *testing.T) (a, b, c, d Metrics) {
	a = mustScore(t, base(NotMet))
	b = mustScore(t, []Judged{j("e1", Essential, JudgeError), j("i1", Important, JudgeError),
		j("h1", Highlight, JudgeError), j("p1", Pitfall, JudgeError)})
	c = mustScore(t, []Judged{j("e1", Essential, Met), j("i1", Important, NotMet), j("h1", Highlight, NotMet), j("p1", Pitfall, Met)})
	d = mustScore(t, []Judged{j("e1", Essential, Met), j("p1", Pitfall, NotMet)})
	return a, b, c, d
}

func TestSession(t *testing.T) {
	a, b, c, d := turns(t)
	tests := []struct {
		name                           string
		turns                          []Metrics
		want                           wantMetrics
		rubrics, turnCount, judgeError int
	}{
		// Turn B has no score and is left out: score (2/3 + 0)/2 = 1/3;
		// positive (2/3 + 1/2)/2 = 7/12; accuracy (1/2 + 1)/2 = 3/4;
		// coverage (5/8 + 3/5)/2 = 49/80; highlight (1 + 0)/2 = 1/2; risk
		// (1 + 0)/2 = 1/2; tripped (0 + 1)/2 = 1/2.
		{"mean of the scored turns", []Metrics{a, b, c}, wantMetrics{score: v(1.0 / 3), positive: v(7.0 / 12),
			accuracy: v(0.75), coverage: v(49.0 / 80), highlight: v(0.5), risk: v(0.5), tripped: v(0.5),
			judgeErrors: 4, pitfallsMet: 1}, 5 + 4 + 4, 3, 4},
		// Highlight is defined in turn A only: 1; the rest average A and D:
		// score (2/3 + 1)/2 = 5/6, accuracy (1/2 + 1)/2 = 3/4, coverage
		// (5/8 + 1)/2 = 13/16.
		{"metric defined in some turns", []Metrics{a, d}, wantMetrics{score: v(5.0 / 6), positive: v(5.0 / 6),
			accuracy: v(0.75), coverage: v(13.0 / 16), highlight: v(1), risk: v(1), tripped: v(0)}, 7, 2, 0},
		{"no turn scored", []Metrics{b, b}, wantMetrics{judgeErrors: 8}, 8, 2, 8},
		{"one turn is that turn", []Metrics{c}, wantMetrics{score: v(0), positive: v(0.5), accuracy: v(1),
			coverage: v(0.6), highlight: v(0), risk: v(0), tripped: v(1), pitfallsMet: 1}, 4, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := Session(tc.turns)
			checkMetrics(t, s, tc.want)
			if s.Rubrics != tc.rubrics || s.Turns != tc.turnCount || s.JudgeErrors != tc.judgeError {
				t.Errorf("rubrics %d, turns %d, judge errors %d; want %d, %d, %d", s.Rubrics, s.Turns, s.JudgeErrors,
					tc.rubrics, tc.turnCount, tc.judgeError)
			}
		})
	}
}

func TestRollup(t *testing.T) {
	a, b, c, d := turns(t)
	units := []Unit{
		{ID: "q1", Domain: "clinical_care", Metrics: a},                           // score 2/3
		{ID: "s1", Domain: "clinical_care", Metrics: Session([]Metrics{a, b, c})}, // score 1/3
		{ID: "q2", Domain: "wellness", Metrics: b},                                // unscored
		{ID: "q3", Domain: "wellness", Metrics: d},                                // score 1
	}
	overall, domains := Rollup(units)
	type stat struct {
		mean float64
		n    int
	}
	check := func(s Summary, units, scored, unscored, judgeErrors int, want map[string]stat) {
		t.Helper()
		if s.Units != units || s.Scored != scored || s.Unscored != unscored || s.JudgeErrors != judgeErrors {
			t.Errorf("%q: units %d scored %d unscored %d judge errors %d", s.Domain, s.Units, s.Scored, s.Unscored, s.JudgeErrors)
		}
		if len(s.Metrics) != len(want) {
			t.Errorf("%q: metrics %v, want %v", s.Domain, s.Metrics, want)
		}
		for name, w := range want {
			got := s.Metrics[name]
			if got.N != w.n || math.Abs(got.Mean-w.mean) > tol {
				t.Errorf("%q %s = %+v, want mean %v over %d", s.Domain, name, got, w.mean, w.n)
			}
		}
	}
	// Overall: score (2/3 + 1/3 + 1)/3 = 2/3; accuracy (1/2 + 3/4 + 1)/3
	// = 3/4; coverage (5/8 + 49/80 + 1)/3 = (50/80 + 49/80 + 80/80)/3 =
	// 179/240; highlight (1 + 1/2)/2 = 3/4 (q3 has none); risk (1 + 1/2
	// + 1)/3 = 5/6; tripped (0 + 1/2 + 0)/3 = 1/6; positive (2/3 + 7/12 +
	// 1)/3 = (8/12 + 7/12 + 12/12)/3 = 3/4. Judge errors 4 (s1) + 4 (q2).
	check(overall, 4, 3, 1, 8, map[string]stat{
		MetricScore: {2.0 / 3, 3}, MetricAccuracy: {0.75, 3}, MetricCoverage: {179.0 / 240, 3},
		MetricHighlight: {0.75, 2}, MetricRiskInterception: {5.0 / 6, 3}, MetricTripped: {1.0 / 6, 3},
		MetricPositive: {0.75, 3},
	})
	if len(domains) != 2 || domains[0].Domain != "clinical_care" || domains[1].Domain != "wellness" {
		t.Fatalf("domains = %+v", domains)
	}
	// clinical_care: score (2/3 + 1/3)/2 = 1/2; accuracy (1/2 + 3/4)/2 =
	// 5/8; coverage (5/8 + 49/80)/2 = 99/160; highlight (1 + 1/2)/2 = 3/4;
	// risk (1 + 1/2)/2 = 3/4; tripped (0 + 1/2)/2 = 1/4; positive (2/3 +
	// 7/12)/2 = 5/8.
	check(domains[0], 2, 2, 0, 4, map[string]stat{
		MetricScore: {0.5, 2}, MetricAccuracy: {0.625, 2}, MetricCoverage: {99.0 / 160, 2},
		MetricHighlight: {0.75, 2}, MetricRiskInterception: {0.75, 2}, MetricTripped: {0.25, 2},
		MetricPositive: {0.625, 2},
	})
	// wellness: only q3 has metrics.
	check(domains[1], 2, 1, 1, 4, map[string]stat{
		MetricScore: {1, 1}, MetricAccuracy: {1, 1}, MetricCoverage: {1, 1},
		MetricRiskInterception: {1, 1}, MetricTripped: {0, 1}, MetricPositive: {1, 1},
	})
	if empty, doms := Rollup(nil); empty.Units != 0 || len(empty.Metrics) != 0 || doms != nil {
		t.Errorf("Rollup(nil) = %+v, %v", empty, doms)
	}
}
