package rmtbench

import (
	"slices"
	"strconv"
)

// Metric names beyond the dimensions (each dimension is a metric under its
// own name).
const (
	// MetricScore is the headline: the mean over the dialogue's dimensions
	// of each dimension's mean over the rounds, normalised to [0, 1].
	MetricScore = "score"
	// MetricJudgeErrorRate is the share of the judges' dimension scores
	// that are judge errors (no score), over every round.
	MetricJudgeErrorRate = "judge_error_rate"
	// MetricPanelUnanimous is the share of round dimensions that at least
	// two judges scored on which they all gave the same score; reported
	// for panels.
	MetricPanelUnanimous = "panel_unanimous"
	// MetricUserEnded is 1 when the simulated user ended the dialogue
	// before its turn limit, else 0; reported for simulated dialogues.
	MetricUserEnded = "user_ended"
)

// Item is one dimension of one round as a panel scored it.
type Item struct {
	Dimension Dimension `json:"dimension"`
	// Scores holds each judge's score on the 1–5 scale, in the panel's
	// order; 0 is a judge error (no score).
	Scores []int `json:"scores"`
	// Score is the panel's score: the median of the judges' scores (the
	// mean of the middle two for an even count), judge errors left out;
	// absent when no judge gave one.
	Score *float64 `json:"score,omitempty"`
	// Unanimous says at least two judges scored and all gave the same
	// score.
	Unanimous bool `json:"unanimous,omitempty"`
}

// Resolve fills the panel's score of an item from its judges' scores.
func Resolve(d Dimension, scores []int) Item {
	it := Item{Dimension: d, Scores: scores}
	var got []int
	for _, s := range scores {
		if s != 0 {
			got = append(got, s)
		}
	}
	if len(got) == 0 {
		return it
	}
	slices.Sort(got)
	m := float64(got[len(got)/2])
	if len(got)%2 == 0 {
		m = float64(got[len(got)/2-1]+got[len(got)/2]) / 2
	}
	it.Score = &m
	it.Unanimous = len(got) >= 2 && got[0] == got[len(got)-1]
	return it
}

// Label is a judge's score as a panel rating label ("" for a judge error).
func Label(score int) string {
	if score == 0 {
		return ""
	}
	return strconv.Itoa(score)
}

// DimensionStat is one dimension of a dialogue, over its rounds.
type DimensionStat struct {
	// Mean is the mean of the panel's scores over the rounds that have
	// one, normalised to [0, 1]; Raw is the same mean on the 1–5 scale.
	// Both are absent when no round has a score.
	Mean *float64 `json:"mean,omitempty"`
	Raw  *float64 `json:"raw,omitempty"`
	// Asked counts the rounds the dimension was asked in; Scored those
	// with a panel score; JudgeErrors the judges' scores missing.
	Asked       int `json:"asked"`
	Scored      int `json:"scored"`
	JudgeErrors int `json:"judge_errors"`
}

// Rollup combines a dialogue's rounds (each a list of items) into its
// metrics, for a dialogue in language with judges judges:
//
//   - each dimension: the mean over the rounds with a panel score,
//     normalised to [0, 1]; absent when no round has one (a dimension never
//     asked, or whose every score was a judge error, is not a 0);
//   - score: the mean of the dimensions present, each weighing the same
//     however many rounds asked it; absent when none is;
//   - <name>_<language>: score and each dimension again, so that the
//     summary rolls them up per language too;
//   - judge_error_rate: judge errors over the judges' scores asked;
//   - panel_unanimous (judges ≥ 2): unanimous items over items with two
//     or more scores.
func Rollup(rounds [][]Item, language string, judges int) (map[string]float64, map[Dimension]DimensionStat) {
	stats := map[Dimension]DimensionStat{}
	sums := map[Dimension]float64{}
	var scores, errs, paired, unanimous int
	for _, items := range rounds {
		for _, it := range items {
			st := stats[it.Dimension]
			st.Asked++
			n := 0
			for _, s := range it.Scores {
				scores++
				if s == 0 {
					st.JudgeErrors++
					errs++
				} else {
					n++
				}
			}
			if n >= 2 {
				paired++
				if it.Unanimous {
					unanimous++
				}
			}
			if it.Score != nil {
				st.Scored++
				sums[it.Dimension] += *it.Score
			}
			stats[it.Dimension] = st
		}
	}
	metrics := map[string]float64{}
	var total float64
	var present int
	for _, d := range Dimensions {
		st, ok := stats[d]
		if !ok || st.Scored == 0 {
			continue
		}
		raw := sums[d] / float64(st.Scored)
		mean := Normalise(raw)
		st.Raw, st.Mean = &raw, &mean
		stats[d] = st
		metrics[string(d)] = mean
		total += mean
		present++
	}
	if present > 0 {
		metrics[MetricScore] = total / float64(present)
	}
	if language != "" {
		for _, name := range append([]string{MetricScore}, dimensionNames()...) {
			if v, ok := metrics[name]; ok {
				metrics[name+"_"+language] = v
			}
		}
	}
	if scores > 0 {
		metrics[MetricJudgeErrorRate] = float64(errs) / float64(scores)
	}
	if judges > 1 && paired > 0 {
		metrics[MetricPanelUnanimous] = float64(unanimous) / float64(paired)
	}
	return metrics, stats
}

func dimensionNames() []string {
	out := make([]string, len(Dimensions))
	for i, d := range Dimensions {
		out[i] = string(d)
	}
	return out
}
