package reporteval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ErrReply is wrapped by the Validate errors of the judges' replies.
var ErrReply = errors.New("reporteval: invalid judge reply")

// Score is a number in a judge's reply. It decodes from a JSON number or
// from a string holding one ("3", " 2.5 "), as the original's replies give
// both (its redundancy prompt shows "score" as a string in one place and a
// number in another); anything else does not parse. It encodes as a
// number.
type Score float64

// UnmarshalJSON implements json.Unmarshaler.
func (s *Score) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		b = []byte(strings.TrimSpace(str))
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%w: %s is not a number", ErrReply, b)
	}
	*s = Score(v)
	return nil
}

// The 0–4 scale of the quality criteria and of redundancy.
const (
	ScaleMin = 0
	ScaleMax = 4
)

// Clamp returns s within [ScaleMin, ScaleMax], and whether it had to move
// it: a judge that writes 5 gives the scale's top, -1 its bottom, and the
// record says so.
func (s Score) Clamp() (float64, bool) {
	v := float64(s)
	switch {
	case v < ScaleMin:
		return ScaleMin, true
	case v > ScaleMax:
		return ScaleMax, true
	}
	return v, false
}

// QualityReply is the quality judge's reply, with the original's keys.
// Every field is required (judge.Decode); Reason may be a string or an
// object (the original's own example result gives one reason per
// criterion), anything but null.
type QualityReply struct {
	Reason            json.RawMessage `json:"Reason"`
	Comprehensiveness Score           `json:"Comprehensiveness_Score"`
	Coherence         Score           `json:"Coherence_Score"`
	Clarity           Score           `json:"Clarity_Score"`
	Insightfulness    Score           `json:"Insightfulness_Score"`
	Overall           Score           `json:"Overall_Score"`
}

// The quality criteria, in the order of the reply's keys and of
// QualityReply.Scores; each is also a metric name.
var Criteria = []string{MetricComprehensiveness, MetricCoherence, MetricClarity, MetricInsightfulness, MetricQuality}

// Scores returns the five scores in Criteria's order, each clamped to
// the 0–4 scale, and the reply keys of the scores clamping moved.
func (r QualityReply) Scores() (scores []float64, clamped []string) {
	keys := []string{"Comprehensiveness_Score", "Coherence_Score", "Clarity_Score", "Insightfulness_Score", "Overall_Score"}
	for i, s := range []Score{r.Comprehensiveness, r.Coherence, r.Clarity, r.Insightfulness, r.Overall} {
		v, moved := s.Clamp()
		scores = append(scores, v)
		if moved {
			clamped = append(clamped, keys[i])
		}
	}
	return scores, clamped
}

// RedundancyReply is the redundancy judge's reply for one pair of
// sections, with the original's keys, all required. repetitions_found may
// hold strings or anything else (judges quote passages in several shapes);
// confidence is a string ("90%") or a number, as the original's prompt
// shows both.
type RedundancyReply struct {
	Score       Score             `json:"score"`
	Explanation string            `json:"explanation"`
	Repetitions []json.RawMessage `json:"repetitions_found"`
	Confidence  json.RawMessage   `json:"confidence"`
}

// FactReply is a fact checker's reply for one claim against one source,
// with the original's keys: is_factual is required and must be -1, 0 or 1
// (a number or a string holding one); sentence_support is optional (the
// original stores whatever the judge gave).
type FactReply struct {
	IsFactual       Score           `json:"is_factual"`
	SentenceSupport json.RawMessage `json:"sentence_support,omitempty"`
}

// Validate rejects a label other than -1, 0 and 1.
func (r FactReply) Validate() error {
	switch r.IsFactual {
	case -1, 0, 1:
		return nil
	}
	return fmt.Errorf("%w: is_factual %v is not -1, 0 or 1", ErrReply, float64(r.IsFactual))
}

// Label is the reply's label as a panel label: "-1", "0" or "1".
func (r FactReply) Label() string { return strconv.Itoa(int(r.IsFactual)) }

// ProposedClaims is the proposer's reply in the information-asymmetric
// mode: the report's cited statements as atomic claims.
type ProposedClaims struct {
	Claims []ProposedClaim `json:"claims"`
}

// ProposedClaim is one atomic claim and the reference numbers it rests
// on (the citations of the sentence it came from).
type ProposedClaim struct {
	Claim string `json:"claim"`
	Refs  []int  `json:"refs"`
}

// Validate rejects an empty claim.
func (p ProposedClaims) Validate() error {
	for i, c := range p.Claims {
		if strings.TrimSpace(c.Claim) == "" {
			return fmt.Errorf("%w: claim %d is empty", ErrReply, i+1)
		}
	}
	return nil
}
