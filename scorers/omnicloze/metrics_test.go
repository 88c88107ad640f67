package omnicloze

import (
	"math"
	"reflect"
	"testing"
)

func tally(outcomes ...Outcome) Tally {
	var t Tally
	for _, o := range outcomes {
		t.Add(o)
	}
	return t
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestTallyRates(t *testing.T) {
	for _, tc := range []struct {
		name     string
		outcomes []Outcome
		want     Rates
	}{
		{"every blank correct", []Outcome{Correct, Correct, Correct}, Rates{true, 1, 0, 0}},
		{"always Not Given", []Outcome{Omission, Omission, Omission, Omission}, Rates{true, 0, 1, 0}},
		{"always a distractor", []Outcome{Hallucination, Hallucination}, Rates{true, 0, 0, 1}},
		{"a mix: 2 correct, 1 omitted, 1 hallucinated", []Outcome{Correct, Omission, Correct, Hallucination}, Rates{true, 0.5, 0.25, 0.25}},
		{"judge errors are left out, not zeros", []Outcome{Correct, JudgeError, JudgeError, Omission}, Rates{true, 0.5, 0.5, 0}},
		{"only judge errors: undefined", []Outcome{JudgeError, JudgeError}, Rates{}},
		{"no blanks: undefined", nil, Rates{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := tally(tc.outcomes...)
			if got := tl.Rates(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("rates %+v, want %+v", got, tc.want)
			}
			m := tl.Map()
			_, has := m[MetricAccuracy]
			if has != tc.want.Defined || m[MetricJudged] != float64(tl.Judged()) {
				t.Errorf("metrics %v: rates present %v, want %v", m, has, tc.want.Defined)
			}
		})
	}
}

func TestOutcomeOf(t *testing.T) {
	for _, tc := range []struct {
		choice string
		want   Outcome
	}{{"violin", Correct}, {NotGiven, Omission}, {"cello", Hallucination}, {"", JudgeError}} {
		if got := OutcomeOf(tc.choice, "violin"); got != tc.want {
			t.Errorf("OutcomeOf(%q) = %s, want %s", tc.choice, got, tc.want)
		}
	}
}

// TestRollup checks the roll-up by hand on items of different sizes, where
// micro over blanks and the mean over items differ.
func TestRollup(t *testing.T) {
	units := []Unit{
		// music/live: 4 blanks, 3 correct, 1 omitted.
		{"music", "live", tally(Correct, Correct, Correct, Omission)},
		// music/live: 1 blank, hallucinated.
		{"music", "live", tally(Hallucination)},
		// music/studio: 2 correct, 1 judge error (left out).
		{"music", "studio", tally(Correct, JudgeError, Correct)},
		// nature/water: 3 blanks: omitted, omitted, hallucinated.
		{"nature", "water", tally(Omission, Omission, Hallucination)},
		// nature/water: nothing judged: counts in items, in no rate.
		{"nature", "water", tally(JudgeError)},
	}
	r := Rollup(units)
	// Overall: judged 4+1+2+3 = 10; correct 5, omitted 3, hallucinated 2.
	if o := r.Overall; o.Items != 5 || o.Tally.Judged() != 10 || o.Tally.JudgeErrors != 2 ||
		!near(o.Micro.Accuracy, 0.5) || !near(o.Micro.Omission, 0.3) || !near(o.Micro.Hallucination, 0.2) {
		t.Errorf("overall %+v", o)
	}
	// Macro over the 4 items with a judged blank: accuracy (3/4 + 0 + 1 + 0)/4.
	if m := r.Overall.Macro; !near(m.Accuracy, 1.75/4) || !near(m.Omission, (0.25+2.0/3)/4) || !near(m.Hallucination, (1+1.0/3)/4) {
		t.Errorf("overall macro %+v", m)
	}
	want := map[string]Rates{
		"music":        {true, 5.0 / 7, 1.0 / 7, 1.0 / 7},
		"nature":       {true, 0, 2.0 / 3, 1.0 / 3},
		"music/live":   {true, 3.0 / 5, 1.0 / 5, 1.0 / 5},
		"music/studio": {true, 1, 0, 0},
		"nature/water": {true, 0, 2.0 / 3, 1.0 / 3},
	}
	var names []string
	for _, g := range append(append([]Group(nil), r.Domains...), r.Subcategories...) {
		names = append(names, g.Name)
		w := want[g.Name]
		if !near(g.Micro.Accuracy, w.Accuracy) || !near(g.Micro.Omission, w.Omission) || !near(g.Micro.Hallucination, w.Hallucination) {
			t.Errorf("%s: micro %+v, want %+v", g.Name, g.Micro, w)
		}
	}
	if !reflect.DeepEqual(names, []string{"music", "nature", "music/live", "music/studio", "nature/water"}) {
		t.Errorf("groups %v", names)
	}
	if r.Subcategories[2].Items != 2 {
		t.Errorf("nature/water has %d items", r.Subcategories[2].Items)
	}
}
