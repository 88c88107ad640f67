package reporteval

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
)

// Redundancy is the redundancy judgement of a report: its candidate
// sections (Sections), the pairs drawn from them (Pairs) and each pair's
// judgement.
type Redundancy struct {
	// Skipped is the original's too-short skip (at most 3 paragraphs).
	Skipped bool `json:"skipped"`
	// Sections are the candidate sections the pairs index.
	Sections []string `json:"sections"`
	// Seed and MaxPairs are what Pairs drew the pairs with.
	Seed     uint64 `json:"seed"`
	MaxPairs int    `json:"max_pairs"`
	Pairs    []Pair `json:"pairs"`
	// Score is the mean of the pairs' panel scores over the pairs that
	// have one (RedundancyScore); absent when none has, e.g. a report
	// with fewer than two candidate sections.
	Score *float64 `json:"score,omitempty"`
	// Judged counts the pairs with a panel score.
	Judged int `json:"judged"`
}

// Pair is one pair of sections and the panel's judgement of it.
type Pair struct {
	A      int           `json:"a"`
	B      int           `json:"b"`
	Judges []JudgeRecord `json:"judges"`
	// Scores are the judges' scores, clamped to 0–4; null for a judge
	// error.
	Scores []*float64 `json:"scores"`
	// Clamped lists the judges (by index) whose score clamping moved.
	Clamped []int `json:"clamped,omitempty"`
	// Score is the panel's score (PanelMean); absent when every judge
	// failed.
	Score *float64 `json:"score,omitempty"`
}

// RedundancyScore is a report's redundancy: the mean of its pairs' panel
// scores over the pairs that have one, as the original averages over its
// successful pairs; ok is false when no pair has one (no candidate pairs,
// or every judge failed on every pair), and the report then has no
// redundancy score, not 0.
func RedundancyScore(pairs []Pair) (score float64, judged int, ok bool) {
	for _, p := range pairs {
		if p.Score != nil {
			score += *p.Score
			judged++
		}
	}
	if judged == 0 {
		return 0, 0, false
	}
	return score / float64(judged), judged, true
}

// PairSeed is the seed of a report's pair sample: the first 8 bytes
// (big-endian) of the SHA-256 of "reporteval-pairs", the sample id and the
// run's seed (empty when the run has none), NUL-separated. The same report
// of the same sample thus gets the same pairs in every run with the same
// seed, whichever model wrote it.
func PairSeed(id string, seed *int) uint64 {
	s := ""
	if seed != nil {
		s = fmt.Sprint(*seed)
	}
	sum := sha256.Sum256([]byte("reporteval-pairs\x00" + id + "\x00" + s))
	return binary.BigEndian.Uint64(sum[:8])
}

// judgeRedundancy splits the report, draws the pairs and asks the panel
// about each, with the redundancy oracle's reply attached.
func (a *asker) judgeRedundancy(ctx context.Context, judges []string, report string, seed uint64, maxPairs int) (Redundancy, error) {
	r := Redundancy{Seed: seed, MaxPairs: maxPairs}
	r.Skipped, r.Sections = Sections(report)
	drawn := Pairs(len(r.Sections), maxPairs, seed)
	r.Pairs = make([]Pair, len(drawn))
	// Each call writes its own element only.
	err := forEach(ctx, len(drawn), JudgeConcurrency, func(ctx context.Context, i int) error {
		var err error
		r.Pairs[i], err = a.judgePair(ctx, judges, drawn[i][0], drawn[i][1], r.Sections)
		return err
	})
	if err != nil {
		return r, err
	}
	if s, n, ok := RedundancyScore(r.Pairs); ok {
		r.Score, r.Judged = &s, n
	}
	return r, nil
}

func (a *asker) judgePair(ctx context.Context, judges []string, x, y int, sections []string) (Pair, error) {
	p := Pair{A: x, B: y}
	oracle, err := json.Marshal(RedundancyOracle(sections[x], sections[y]))
	if err != nil {
		return p, err
	}
	recs, replies, err := askPanel[RedundancyReply](ctx, a, judges, question{
		version: RedundancyPromptVersion, msgs: RedundancyMessages(sections[x], sections[y]), schema: RedundancySchema, oracle: string(oracle)})
	p.Judges = recs
	if err != nil {
		return p, err
	}
	p.Scores = make([]*float64, len(replies))
	for i, rep := range replies {
		if rep == nil {
			continue
		}
		v, moved := rep.Score.Clamp()
		p.Scores[i] = &v
		if moved {
			p.Clamped = append(p.Clamped, i)
		}
	}
	if m, ok := PanelMean(p.Scores); ok {
		p.Score = &m
	}
	return p, nil
}
