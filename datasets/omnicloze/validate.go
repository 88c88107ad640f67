package omnicloze

import (
	"fmt"
	"strings"

	"github.com/benchline/benchline/schemas"
	scorer "github.com/benchline/benchline/scorers/omnicloze"
)

// The reasons an item is rejected, in the order they are checked; an item
// counts under the first it meets. Generated items are rejected and
// counted by reason (in the build result and the dataset card);
// hand-written ones that fail are bad input.
const (
	// RejectUnparseable: the writer's reply did not parse, after one retry.
	RejectUnparseable = "unparseable"
	// RejectRefused: the writer call was refused for its request (bad
	// request, context too long, content filter).
	RejectRefused = "refused"
	// RejectAnswerKey: a blank of a writer's reply does not mark exactly
	// one option correct.
	RejectAnswerKey = "answer_key"
	// RejectMalformed: the passage's markers and the blanks do not match,
	// or a blank's options break a rule (scorer.CheckBlanks).
	RejectMalformed = "malformed"
	// RejectWithoutCaption: from an empty caption (the passage alone) the
	// checker chose a content option for some blank: the passage gives the
	// blank away.
	RejectWithoutCaption = "answerable_without_caption"
	// RejectNotInCaption: from the reference caption the checker chose Not
	// Given for some blank: the answer does not occur in the caption.
	RejectNotInCaption = "answer_not_in_caption"
	// RejectWrongKey: from the reference caption the checker chose another
	// option, the only one of the blank's that occurs in the caption: the
	// key is wrong.
	RejectWrongKey = "wrong_key"
	// RejectAmbiguous: from the reference caption the checker chose another
	// option, several of the blank's occurring in the caption.
	RejectAmbiguous = "ambiguous"
)

// RejectReasons lists every reason, in the order they are checked.
var RejectReasons = []string{RejectUnparseable, RejectRefused, RejectAnswerKey, RejectMalformed,
	RejectWithoutCaption, RejectNotInCaption, RejectWrongKey, RejectAmbiguous}

// Check is the outcome of validating one item: kept when Reason is empty.
type Check struct {
	Reason string `json:"reason,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// Kept reports whether the item passed.
func (c Check) Kept() bool { return c.Reason == "" }

// CheckItem validates an item with its decoded blanks: their shape
// (scorer.CheckBlanks), then the checker (scorer.Fill, the lexical
// filler): from an empty caption it must choose Not Given for every blank,
// and from the item's reference caption the answer of every blank.
func CheckItem(it *schemas.OmniClozeItem, blanks []schemas.ClozeBlank) Check {
	if err := scorer.CheckBlanks(it.Passage, blanks); err != nil {
		return Check{Reason: RejectMalformed, Detail: err.Error()}
	}
	for _, f := range scorer.Fill("", it.Passage, blanks) {
		if f.Choice != scorer.NotGiven {
			return Check{Reason: RejectWithoutCaption, Detail: fmt.Sprintf("blank %d: %q occurs in the passage itself", f.Blank, f.Choice)}
		}
	}
	for i, f := range scorer.Fill(it.Caption, it.Passage, blanks) {
		answer := blanks[i].Answer
		switch {
		case f.Choice == answer:
		case f.Choice == scorer.NotGiven:
			return Check{Reason: RejectNotInCaption, Detail: fmt.Sprintf("blank %d: the answer %q does not occur in the reference caption", f.Blank, answer)}
		case len(f.Occurring) > 1:
			return Check{Reason: RejectAmbiguous, Detail: fmt.Sprintf("blank %d: the reference caption has %s; the checker chose %q, the answer is %q",
				f.Blank, quoteAll(f.Occurring), f.Choice, answer)}
		default:
			return Check{Reason: RejectWrongKey, Detail: fmt.Sprintf("blank %d: the reference caption has %q, the answer is %q", f.Blank, f.Choice, answer)}
		}
	}
	return Check{}
}

func quoteAll(s []string) string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}
