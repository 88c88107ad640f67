package omnicloze

import (
	"sort"
	"strings"
)

// Outcome is what became of one blank. The answer is always a content
// option, so a judged blank is exactly one of Correct, Omission and
// Hallucination.
type Outcome string

const (
	// Correct: the answer was chosen.
	Correct Outcome = "correct"
	// Omission: Not Given was chosen, though the clip has the answer.
	Omission Outcome = "omission"
	// Hallucination: another content option (a distractor) was chosen.
	Hallucination Outcome = "hallucination"
	// JudgeError: no judge gave a usable choice for the blank (the reply
	// did not parse, left the blank out, or named no option of it). Judge
	// errors are counted and shown, and left out of every rate.
	JudgeError Outcome = "judge_error"
)

// OutcomeOf classifies choice (an option's text, NotGiven, or "" for no
// choice) against the blank's answer.
func OutcomeOf(choice, answer string) Outcome {
	switch choice {
	case "":
		return JudgeError
	case answer:
		return Correct
	case NotGiven:
		return Omission
	}
	return Hallucination
}

// Tally counts the outcomes of a set of blanks.
type Tally struct {
	Blanks        int `json:"blanks"`
	Correct       int `json:"correct"`
	Omission      int `json:"omission"`
	Hallucination int `json:"hallucination"`
	JudgeErrors   int `json:"judge_errors"`
}

// Add counts one outcome.
func (t *Tally) Add(o Outcome) {
	t.Blanks++
	switch o {
	case Correct:
		t.Correct++
	case Omission:
		t.Omission++
	case Hallucination:
		t.Hallucination++
	default:
		t.JudgeErrors++
	}
}

// Merge adds u's counts.
func (t *Tally) Merge(u Tally) {
	t.Blanks += u.Blanks
	t.Correct += u.Correct
	t.Omission += u.Omission
	t.Hallucination += u.Hallucination
	t.JudgeErrors += u.JudgeErrors
}

// Judged counts the blanks with an outcome other than JudgeError: the
// denominator of every rate.
func (t Tally) Judged() int { return t.Correct + t.Omission + t.Hallucination }

// Rates are the shares of judged blanks; they sum to 1. They are undefined
// (Defined false) when no blank was judged.
type Rates struct {
	Defined       bool    `json:"defined"`
	Accuracy      float64 `json:"accuracy"`
	Omission      float64 `json:"omission_rate"`
	Hallucination float64 `json:"hallucination_rate"`
}

// Rates are t's rates, micro over its blanks: each judged blank weighs the
// same.
func (t Tally) Rates() Rates {
	n := float64(t.Judged())
	if n == 0 {
		return Rates{}
	}
	return Rates{Defined: true, Accuracy: float64(t.Correct) / n, Omission: float64(t.Omission) / n, Hallucination: float64(t.Hallucination) / n}
}

// Metric names of a sample (Task.Metrics).
const (
	MetricAccuracy      = "accuracy"
	MetricOmission      = "omission_rate"
	MetricHallucination = "hallucination_rate"
	// MetricJudgeErrorRate is the share of the panel judges' per-blank
	// choices that are judge errors.
	MetricJudgeErrorRate = "judge_error_rate"
	// The counts, whose means over any set of samples give the micro
	// rates: micro accuracy = mean(n_correct) / mean(n_judged), since both
	// means are over the same samples.
	MetricJudged       = "n_judged"
	MetricCorrect      = "n_correct"
	MetricOmitted      = "n_omitted"
	MetricHallucinated = "n_hallucinated"
	// MetricPanelUnanimous (panels only) is the share of blanks labelled
	// by at least two judges on which they all agreed.
	MetricPanelUnanimous = "panel_unanimous"
)

// Map is t's metrics by name: the rates over the item's judged blanks
// (absent when none was judged: undefined, not zero) and the counts.
func (t Tally) Map() map[string]float64 {
	m := map[string]float64{
		MetricJudged: float64(t.Judged()), MetricCorrect: float64(t.Correct),
		MetricOmitted: float64(t.Omission), MetricHallucinated: float64(t.Hallucination),
	}
	if r := t.Rates(); r.Defined {
		m[MetricAccuracy], m[MetricOmission], m[MetricHallucination] = r.Accuracy, r.Omission, r.Hallucination
	}
	return m
}

// Unit is one scored item as Rollup reads it.
type Unit struct {
	Domain      string `json:"domain"`
	Subcategory string `json:"subcategory"`
	Tally       Tally  `json:"tally"`
}

// Group is the roll-up of a set of items: their summed tally and its rates
// (micro over blanks), and the macro rates (the mean of the items' rates,
// over the items with a judged blank).
type Group struct {
	Name  string `json:"name"`
	Items int    `json:"items"`
	Tally Tally  `json:"tally"`
	Micro Rates  `json:"micro"`
	Macro Rates  `json:"macro"`
}

// Report is the roll-up of a run: overall, per domain and per sub-category
// ("domain/subcategory"), each sorted by name.
type Report struct {
	Overall       Group   `json:"overall"`
	Domains       []Group `json:"domains"`
	Subcategories []Group `json:"subcategories"`
}

// Rollup sums the units' tallies overall, per domain and per sub-category.
// The headline figures are micro over blanks: every judged blank weighs
// the same, wherever it is. The macro figures (each item weighing the
// same) are what the engine's run summary reports per item; they differ
// when items have different numbers of judged blanks.
func Rollup(units []Unit) Report {
	type acc struct {
		g      Group
		macro  Rates
		judged int
	}
	groups := map[string]*acc{}
	add := func(name string, u Unit) {
		a := groups[name]
		if a == nil {
			a = &acc{g: Group{Name: name}}
			groups[name] = a
		}
		a.g.Items++
		a.g.Tally.Merge(u.Tally)
		if r := u.Tally.Rates(); r.Defined {
			a.judged++
			a.macro.Accuracy += r.Accuracy
			a.macro.Omission += r.Omission
			a.macro.Hallucination += r.Hallucination
		}
	}
	for _, u := range units {
		add("", u)
		add("domain:"+u.Domain, u)
		add("sub:"+u.Domain+"/"+u.Subcategory, u)
	}
	finish := func(a *acc) Group {
		g := a.g
		g.Micro = g.Tally.Rates()
		if a.judged > 0 {
			n := float64(a.judged)
			g.Macro = Rates{Defined: true, Accuracy: a.macro.Accuracy / n, Omission: a.macro.Omission / n, Hallucination: a.macro.Hallucination / n}
		}
		return g
	}
	var r Report
	names := make([]string, 0, len(groups))
	for n := range groups {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		g := finish(groups[n])
		if d, ok := strings.CutPrefix(n, "domain:"); ok {
			g.Name = d
			r.Domains = append(r.Domains, g)
		} else if s, ok := strings.CutPrefix(n, "sub:"); ok {
			g.Name = s
			r.Subcategories = append(r.Subcategories, g)
		} else {
			r.Overall = g
		}
	}
	return r
}
