// Package omnicloze scores Omni-Cloze-style caption evaluation: a model
// captions a media clip, and a judge fills the blanks of a cloze passage
// about the clip from that caption alone, choosing for each blank one of
// its content options or "Not Given". Accuracy, omission (Not Given where
// the clip has the answer) and hallucination (a wrong content option) are
// counted over blanks. The package holds the blank markers, the lexical
// filler (the deterministic checker the dataset builder validates items
// with and the judges' oracle), the prompts, the metrics and their
// roll-ups, and the engine's Task. See docs/benchmarks/omnicloze.md.
package omnicloze

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/benchline/benchline/internal/judge"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/benchline/benchline/schemas"
)

// NotGiven is the option offered with every blank besides its content
// options: the caption does not say. It is never an answer.
const NotGiven = "Not Given"

// MaxOptions bounds a blank's content options (they are lettered A, B, …
// with Not Given after them).
const MaxOptions = 10

// Marker is the mark of blank k in a passage: "[BLANK_k]".
func Marker(k int) string { return "[BLANK_" + strconv.Itoa(k) + "]" }

var markerRE = regexp.MustCompile(`\[BLANK_(\d+)\]`)

// Markers lists the blank numbers marked in passage, in order of
// appearance (repeats included).
func Markers(passage string) []int {
	var out []int
	for _, m := range markerRE.FindAllStringSubmatch(passage, -1) {
		k, err := strconv.Atoi(m[1])
		if err != nil {
			k = -1 // too many digits: never a valid blank number
		}
		out = append(out, k)
	}
	return out
}

// WithoutMarkers is passage with every blank marker replaced by a line
// break, so that the words around a blank never join.
func WithoutMarkers(passage string) string { return markerRE.ReplaceAllString(passage, "\n") }

// ErrBlanks is wrapped by the errors of CheckBlanks.
var ErrBlanks = errors.New("omnicloze: invalid blanks")

// CheckBlanks checks the shape of an item's blanks against its passage:
// the passage marks blanks 1..n once each, in order; blank i of the list
// is blank i+1; each has 2 to MaxOptions distinct, non-empty options (none
// of them Not Given, compared ignoring case and spacing) and an answer
// among them.
func CheckBlanks(passage string, blanks []schemas.ClozeBlank) error {
	if len(blanks) == 0 {
		return fmt.Errorf("%w: no blanks", ErrBlanks)
	}
	marks := Markers(passage)
	for i, k := range marks {
		if k != i+1 {
			return fmt.Errorf("%w: the passage's marker %d is [BLANK_%d], want %s (blanks are marked once each, in order)", ErrBlanks, i+1, k, Marker(i+1))
		}
	}
	if len(marks) != len(blanks) {
		return fmt.Errorf("%w: the passage marks %d blanks, the item has %d", ErrBlanks, len(marks), len(blanks))
	}
	for i, b := range blanks {
		if b.Blank != i+1 {
			return fmt.Errorf("%w: blank %d of the list is numbered %d", ErrBlanks, i+1, b.Blank)
		}
		if len(b.Options) < 2 || len(b.Options) > MaxOptions {
			return fmt.Errorf("%w: blank %d has %d options, want 2 to %d (the answer and distractors)", ErrBlanks, b.Blank, len(b.Options), MaxOptions)
		}
		seen := map[string]bool{}
		for _, o := range b.Options {
			n := normalise(o)
			switch {
			case n == "":
				return fmt.Errorf("%w: blank %d has an empty option", ErrBlanks, b.Blank)
			case n == normalise(NotGiven):
				return fmt.Errorf("%w: blank %d lists %q, which every blank offers anyway", ErrBlanks, b.Blank, NotGiven)
			case seen[n]:
				return fmt.Errorf("%w: blank %d lists %q twice", ErrBlanks, b.Blank, o)
			}
			seen[n] = true
		}
		if OptionIndex(b, b.Answer) < 0 {
			return fmt.Errorf("%w: blank %d: answer %q is not among its options", ErrBlanks, b.Blank, b.Answer)
		}
	}
	return nil
}

// DecodeBlanks decodes an item's BlanksJSON and checks it (CheckBlanks).
func DecodeBlanks(it *schemas.OmniClozeItem) ([]schemas.ClozeBlank, error) {
	var blanks []schemas.ClozeBlank
	if err := json.Unmarshal([]byte(it.BlanksJSON), &blanks); err != nil {
		return nil, fmt.Errorf("%w: item %s: %v", ErrBlanks, it.ID, err)
	}
	if err := CheckBlanks(it.Passage, blanks); err != nil {
		return nil, fmt.Errorf("item %s: %w", it.ID, err)
	}
	return blanks, nil
}

// OptionIndex is the index of option o among b's options (exact text), or
// -1.
func OptionIndex(b schemas.ClozeBlank, o string) int {
	for i, x := range b.Options {
		if x == o {
			return i
		}
	}
	return -1
}

func normalise(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// Filled is the lexical filler's choice for one blank.
type Filled struct {
	Blank int `json:"blank"`
	// Choice is the option chosen, or NotGiven.
	Choice string `json:"choice"`
	// Occurring lists the options that occur in the text read, in option
	// order; Choice is one of them unless none occurs.
	Occurring []string `json:"occurring,omitempty"`
}

// Fill is the lexical filler, the deterministic checker of Omni-Cloze
// items. It reads what a judge reads, the caption and the passage (its
// blank markers removed), and chooses for each blank the option that
// occurs in that text (judge.ContainsKeyword: case and spacing
// ignored, whole words, CJK anywhere); when several occur, the longest
// (the most specific: "dark red" over "red"), ties to the first in option
// order; when none occurs, Not Given.
//
// The dataset builder keeps an item only when Fill over its reference
// caption chooses every answer, and Fill over an empty caption (so over
// the passage alone) chooses Not Given everywhere: no blank can be
// answered without the caption. It is also the oracle of judge requests
// (FillOracle), so baseline judges fill as it does.
func Fill(caption, passage string, blanks []schemas.ClozeBlank) []Filled {
	text := caption + "\n" + WithoutMarkers(passage)
	out := make([]Filled, len(blanks))
	for i, b := range blanks {
		f := Filled{Blank: b.Blank, Choice: NotGiven}
		for _, o := range b.Options {
			if judge.ContainsKeyword(text, o) {
				f.Occurring = append(f.Occurring, o)
				if f.Choice == NotGiven || utf8.RuneCountInString(o) > utf8.RuneCountInString(f.Choice) {
					f.Choice = o
				}
			}
		}
		out[i] = f
	}
	return out
}
