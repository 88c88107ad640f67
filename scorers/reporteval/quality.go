package reporteval

import (
	"context"
	"encoding/json"
)

// Quality is the quality judgement of a report: one call per judge, the
// five criteria on 0–4.
type Quality struct {
	// Judges are the panel's records, in the panel's order.
	Judges []JudgeRecord `json:"judges"`
	// Scores holds each judge's five scores in Criteria's order, clamped
	// to 0–4; null for a judge error.
	Scores [][]float64 `json:"scores"`
	// Clamped lists, per judge, the reply keys whose value clamping moved.
	Clamped [][]string `json:"clamped,omitempty"`
	// Panel is the panel's score of each criterion (PanelMean), by metric
	// name; absent when every judge failed.
	Panel map[string]float64 `json:"panel,omitempty"`
}

// PanelQuality combines the judges' replies (nil for a judge error) into
// the panel's scores: each criterion's value is the mean of the judges'
// clamped scores. It returns the per-judge scores and clamped keys as
// Quality records them, and ok false when every judge failed.
func PanelQuality(replies []*QualityReply) (scores [][]float64, clamped [][]string, panel map[string]float64, ok bool) {
	scores = make([][]float64, len(replies))
	clamped = make([][]string, len(replies))
	moved := false
	for i, r := range replies {
		if r == nil {
			continue
		}
		scores[i], clamped[i] = r.Scores()
		moved = moved || len(clamped[i]) > 0
	}
	if !moved {
		clamped = nil
	}
	for c, name := range Criteria {
		m, judged := PanelMean(column(scores, c))
		if !judged {
			return scores, clamped, nil, false
		}
		if panel == nil {
			panel = map[string]float64{}
		}
		panel[name] = m
	}
	return scores, clamped, panel, true
}

// column returns criterion c of each judge's scores (nil where a judge
// has none).
func column(scores [][]float64, c int) []*float64 {
	out := make([]*float64, len(scores))
	for i, s := range scores {
		if s != nil {
			out[i] = &s[c]
		}
	}
	return out
}

// ratings are the panel's labels of the five criteria, for the run's
// agreement (one item per criterion).
func (q Quality) ratings() [][]string {
	items := make([][]string, len(Criteria))
	for c := range Criteria {
		items[c] = scoreLabels(column(q.Scores, c))
	}
	return items
}

// judgeQuality asks the panel for the report's quality, with the quality
// oracle's reply attached.
func (a *asker) judgeQuality(ctx context.Context, judges []string, topic, report string) (Quality, error) {
	oracle, err := json.Marshal(QualityOracle(report))
	if err != nil {
		return Quality{}, err
	}
	recs, replies, err := askPanel[QualityReply](ctx, a, judges, question{
		version: QualityPromptVersion, msgs: QualityMessages(topic, report), schema: QualitySchema, oracle: string(oracle)})
	q := Quality{Judges: recs}
	if err != nil {
		return q, err
	}
	q.Scores, q.Clamped, q.Panel, _ = PanelQuality(replies)
	return q, nil
}
