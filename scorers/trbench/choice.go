// Package trbench scores TRBench-style pairwise reward-model evaluation of
// function calls: a judge model reads a conversation, the tools, and two
// candidate replies, and answers <choice>\n1\n</choice> or 2. Every pair is
// asked in both orders; a pair counts only when both verdicts are right
// (W-Avg). A scalar reward model instead scores the conversation ending in
// each reply, once per pair, and is right when the chosen reply scores
// higher (ScalarCorrect).
package trbench

import (
	"regexp"
	"strings"
)

var (
	strictChoice = regexp.MustCompile(`(?s)<choice>\n(.*?)\n</choice>`)
	looseChoice  = regexp.MustCompile(`(?s)<choice>(.*?)</choice>`)
)

// How a choice was found.
const (
	ParsedStrict = "strict" // <choice>\nN\n</choice>
	ParsedLoose  = "loose"  // <choice>N</choice> (any whitespace)
	ParsedNone   = "none"
)

// ParseChoice extracts the judge's verdict as TRBench's evaluation does: the
// first <choice>\n...\n</choice> block, else the first <choice>...</choice>
// block; the content, trimmed, must be "1" or "2". It returns "" (and
// ParsedNone) when there is no valid verdict. A strict block with an
// invalid content does not fall back to the loose pattern.
func ParseChoice(text string) (choice, how string) {
	how = ParsedStrict
	m := strictChoice.FindStringSubmatch(text)
	if m == nil {
		how = ParsedLoose
		m = looseChoice.FindStringSubmatch(text)
	}
	if m == nil {
		return "", ParsedNone
	}
	c := strings.TrimSpace(m[1])
	if c != "1" && c != "2" {
		return "", ParsedNone
	}
	return c, how
}

// ParseChoiceStrict is the RL-reward variant: the strict pattern only.
func ParseChoiceStrict(text string) string {
	m := strictChoice.FindStringSubmatch(text)
	if m == nil {
		return ""
	}
	if c := strings.TrimSpace(m[1]); c == "1" || c == "2" {
		return c
	}
	return ""
}

// WAvg is TRBench's weighted average: the mean over pairs of
// order1[j]*order2[j], each score 0 or 1, so a pair counts only when both
// orders are right. The slices hold the two halves of the dataset (the same
// pairs, swapped); it returns 0 for no pairs and panics on halves of
// different lengths.
func WAvg(order1, order2 []float64) float64 {
	if len(order1) != len(order2) {
		panic("trbench: WAvg halves differ in length")
	}
	if len(order1) == 0 {
		return 0
	}
	sum := 0.0
	for j := range order1 {
		sum += order1[j] * order2[j]
	}
	return sum / float64(len(order1))
}

// ScalarCorrect is the verdict of a discriminative (scalar) reward model on
// one pair: right iff the chosen reply scores strictly higher; ties are
// wrong. Discriminative models are asked one order only, so their W-Avg is
// the mean of ScalarCorrect.
func ScalarCorrect(chosen, rejected float64) bool { return chosen > rejected }
