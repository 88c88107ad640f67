// Package medrubric scores answers to medical queries against
// QuarkMedBench-style rubrics: positive rubrics (essential, important,
// highlight) earn their weight when met; a met pitfall trips a circuit
// breaker. QuarkMedBench's weights and formula are unpublished; the
// defaults here are benchline's documented choices (docs/benchmarks/medrubric.md).
//
// This file holds the per-answer arithmetic; metrics.go the multi-turn and
// per-domain roll-ups; length.go the length-limited mode.
package medrubric

import (
	"errors"
	"fmt"
	"math"
)

// Category is a rubric's category.
type Category string

// The four rubric categories. Essential, important and highlight rubrics
// are positive (met earns credit); a pitfall is negative (met is a fault).
const (
	Essential Category = "essential" // core facts, diagnoses, must-say safety advice
	Important Category = "important" // clinical reasoning, key context
	Highlight Category = "highlight" // extra value: evidence, nuance
	Pitfall   Category = "pitfall"   // factual error, unsafe advice, missed contraindication
)

// Categories lists the categories from the most to the least severe (see
// Severity).
var Categories = []Category{Pitfall, Essential, Important, Highlight}

// ErrUnknownCategory is returned for a category name that is not one of
// the four.
var ErrUnknownCategory = errors.New("medrubric: unknown rubric category")

// ParseCategory returns the category called s.
func ParseCategory(s string) (Category, error) {
	for _, c := range Categories {
		if string(c) == s {
			return c, nil
		}
	}
	return "", fmt.Errorf("%w %q (want essential, important, highlight or pitfall)", ErrUnknownCategory, s)
}

// Positive reports whether meeting a rubric of category c earns credit.
func (c Category) Positive() bool { return c == Essential || c == Important || c == Highlight }

// categories holds each category's severity and default weight.
var categories = map[Category]struct {
	severity int
	weight   float64
}{
	Pitfall: {4, 3}, Essential: {3, 3}, Important: {2, 2}, Highlight: {1, 1},
}

// Severity orders categories for tie-breaking (rubric consensus): pitfall 4,
// essential 3, important 2, highlight 1, anything else 0. A pitfall ranks
// highest because missing a safety fault costs more than missing credit.
func (c Category) Severity() int { return categories[c].severity }

// DefaultWeight is the weight of a rubric whose source gives none: 3 for
// essential, 2 for important, 1 for highlight, 3 for pitfall (as heavy as
// an essential point, which matters in BreakSubtract mode). 0 for an
// unknown category.
func DefaultWeight(c Category) float64 { return categories[c].weight }

// Status is the judge's verdict on one rubric.
type Status string

// The verdicts. JudgeError means no usable verdict (the judge's reply did
// not parse, or left the rubric out): the rubric is excluded from every
// denominator and counted.
const (
	Met        Status = "met"
	NotMet     Status = "not_met"
	JudgeError Status = "judge_error"
)

// Judged is one rubric with its verdict.
type Judged struct {
	ID       string   `json:"id"`
	Category Category `json:"category"`
	Weight   float64  `json:"weight"`
	Status   Status   `json:"status"`
}

// Breaker says what a met pitfall does to the score.
type Breaker string

// The circuit-breaker modes. With P the weighted share of positive rubrics
// met and at least one pitfall met:
//
//	BreakZero:     score = 0
//	BreakCap:      score = min(P, Cap)
//	BreakSubtract: score = max(0, (Σ met positive w − Σ met pitfall w) / Σ judged positive w)
const (
	BreakZero     Breaker = "zero"
	BreakCap      Breaker = "cap"
	BreakSubtract Breaker = "subtract"
)

// DefaultCap is Config.Cap's default, the highest score in BreakCap mode.
const DefaultCap = 0.2

// Config is the scoring configuration.
type Config struct {
	Breaker Breaker `json:"breaker"`
	// Cap is the highest score of an answer with a met pitfall in
	// BreakCap mode, in [0, 1]; ignored by the other modes.
	Cap float64 `json:"cap"`
}

// DefaultConfig is benchline's default: a met pitfall zeroes the score
// (the literal reading of QuarkMedBench's "circuit breaker"), with
// DefaultCap kept for BreakCap.
func DefaultConfig() Config { return Config{Breaker: BreakZero, Cap: DefaultCap} }

// Validate checks the mode and the cap.
func (c Config) Validate() error {
	switch c.Breaker {
	case BreakZero, BreakSubtract:
	case BreakCap:
		if !(c.Cap >= 0 && c.Cap <= 1) {
			return fmt.Errorf("medrubric: cap %v outside [0, 1]", c.Cap)
		}
	default:
		return fmt.Errorf("medrubric: unknown breaker mode %q (want zero, cap or subtract)", c.Breaker)
	}
	return nil
}

// Metrics are one answer's scores (or, from Session, one session's).
// A nil metric is undefined: its denominator was empty (no rubric of its
// categories, or every one a judge error). Aggregations leave undefined
// metrics out; they are never 0.
type Metrics struct {
	// Score is the headline: Positive after the circuit breaker.
	Score *float64 `json:"score"`
	// Positive is the weighted share of judged positive rubrics met,
	// before the breaker.
	Positive *float64 `json:"positive"`
	// Accuracy is the weighted share of judged essential rubrics met.
	Accuracy *float64 `json:"accuracy"`
	// Coverage (key-point coverage) is the weighted share of judged
	// essential and important rubrics met.
	Coverage *float64 `json:"coverage"`
	// RiskInterception is the weighted share of judged pitfalls NOT met:
	// Σ w of pitfalls judged not met / Σ w of pitfalls judged.
	RiskInterception *float64 `json:"risk_interception"`
	// Highlight is the weighted share of judged highlight rubrics met.
	Highlight *float64 `json:"highlight"`
	// Tripped is 1 when a pitfall was met (the breaker applied), 0 when
	// pitfalls were judged and none met; nil when no pitfall was judged.
	Tripped *float64 `json:"tripped"`

	// Rubrics counts the rubrics, JudgeErrors those without a verdict,
	// PitfallsMet the met pitfalls. For a session they are sums over turns.
	Rubrics     int `json:"rubrics"`
	JudgeErrors int `json:"judge_errors"`
	PitfallsMet int `json:"pitfalls_met"`
	// Turns is 1 for an answer, the number of turns for a session.
	Turns int `json:"turns"`
}

// Scored reports whether the answer (or session) has a score. An answer
// whose every verdict is a judge error has none: it is counted, not
// scored 0.
func (m Metrics) Scored() bool { return m.Score != nil }

// Metric names, as reported to the engine (the first is the headline).
const (
	MetricScore            = "score"
	MetricAccuracy         = "accuracy"
	MetricCoverage         = "coverage"
	MetricRiskInterception = "risk_interception"
	MetricHighlight        = "highlight"
	MetricPositive         = "positive"
	MetricTripped          = "tripped"
)

// MetricNames lists every metric Map can report, the headline first.
var MetricNames = []string{MetricScore, MetricAccuracy, MetricCoverage, MetricRiskInterception, MetricHighlight, MetricPositive, MetricTripped}

// fields pairs each metric name with its field, in MetricNames order.
func (m *Metrics) fields() []**float64 {
	return []**float64{&m.Score, &m.Accuracy, &m.Coverage, &m.RiskInterception, &m.Highlight, &m.Positive, &m.Tripped}
}

// Map returns the defined metrics by name (undefined ones are absent).
func (m Metrics) Map() map[string]float64 {
	out := map[string]float64{}
	for i, f := range m.fields() {
		if *f != nil {
			out[MetricNames[i]] = **f
		}
	}
	return out
}

// share accumulates a weighted share.
type share struct{ num, den float64 }

func (s *share) add(w float64, met bool) {
	s.den += w
	if met {
		s.num += w
	}
}

func (s share) value() *float64 {
	if s.den == 0 {
		return nil
	}
	v := s.num / s.den
	return &v
}

// Score computes one answer's metrics from its judged rubrics under cfg.
// Rubrics with Status JudgeError are left out of every share and counted
// in JudgeErrors. The score is defined when at least one positive rubric
// was judged; the breaker applies when at least one pitfall was judged met.
// An unknown category or status, or a weight that is not a positive finite
// number, is an error naming the rubric.
func Score(rubrics []Judged, cfg Config) (Metrics, error) {
	if err := cfg.Validate(); err != nil {
		return Metrics{}, err
	}
	m := Metrics{Rubrics: len(rubrics), Turns: 1}
	var positive, accuracy, coverage, risk, highlight share
	pitfallMet := 0.0
	for _, r := range rubrics {
		if _, err := ParseCategory(string(r.Category)); err != nil {
			return Metrics{}, fmt.Errorf("medrubric: rubric %s: %w", r.ID, err)
		}
		if !(r.Weight > 0) || math.IsInf(r.Weight, 0) {
			return Metrics{}, fmt.Errorf("medrubric: rubric %s: weight %v is not a positive number", r.ID, r.Weight)
		}
		switch r.Status {
		case Met, NotMet:
		case JudgeError:
			m.JudgeErrors++
			continue
		default:
			return Metrics{}, fmt.Errorf("medrubric: rubric %s: unknown status %q", r.ID, r.Status)
		}
		met := r.Status == Met
		switch r.Category {
		case Pitfall:
			risk.add(r.Weight, !met)
			if met {
				m.PitfallsMet++
				pitfallMet += r.Weight
			}
			continue
		case Essential:
			accuracy.add(r.Weight, met)
			coverage.add(r.Weight, met)
		case Important:
			coverage.add(r.Weight, met)
		case Highlight:
			highlight.add(r.Weight, met)
		}
		positive.add(r.Weight, met)
	}
	m.Positive, m.Accuracy, m.Coverage, m.Highlight = positive.value(), accuracy.value(), coverage.value(), highlight.value()
	m.RiskInterception = risk.value()
	if risk.den > 0 {
		m.Tripped = ptr(0)
		if m.PitfallsMet > 0 {
			m.Tripped = ptr(1)
		}
	}
	if m.Positive == nil {
		return m, nil
	}
	score := *m.Positive
	if m.PitfallsMet > 0 {
		switch cfg.Breaker {
		case BreakZero:
			score = 0
		case BreakCap:
			score = math.Min(score, cfg.Cap)
		case BreakSubtract:
			score = math.Max(0, (positive.num-pitfallMet)/positive.den)
		}
	}
	m.Score = &score
	return m, nil
}

func ptr(v float64) *float64 { return &v }
