package bfcl

import (
	"encoding/json"
	"fmt"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/toolcall"
	scorer "github.com/benchline/benchline/scorers/bfcl"
)

// Why Check leaves an item out: the reasons a plan's Stats count skipped
// items under (datasets.SkipItem).
const (
	// MalformedQuestion: "question" is not a list of turns, each a list
	// of {role, content} messages, with a non-empty first turn.
	MalformedQuestion = "malformed question"
	// MalformedFunctions: "function" is missing or not a list of function
	// descriptions, each an object with a string "name".
	MalformedFunctions = "malformed functions"
	// MalformedGroundTruth: the possible answer's "ground_truth" is not a
	// non-empty list of {function: {param: [acceptable values]}}.
	MalformedGroundTruth = "malformed ground truth"
	// UndefinedFunction: the ground truth calls a function the item does
	// not define (no reply could ever match it).
	UndefinedFunction = "ground truth calls an undefined function"
)

// Raw is one item as a BFCL data folder holds it: the fields of its
// question line and, when it has one, its possible answer's
// "ground_truth" (nil when none).
type Raw struct {
	ID          string          `json:"id"`
	Question    json.RawMessage `json:"question"`
	Function    json.RawMessage `json:"function"`
	GroundTruth json.RawMessage `json:"-"`
}

// Item is an item Check kept, decoded as the BFCL scorer decodes it.
type Item struct {
	// Turns are the conversation's turns; Funcs the functions it offers;
	// Answers the ground truth's calls (nil when the item has none).
	Turns   [][]Message
	Funcs   []scorer.Function
	Answers []scorer.Answer
}

// Message is one message of a turn.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// A Defect is what makes one item unusable: the item is left out of the
// build and counted under Reason (one of the constants above), never
// fatal. Detail says what exactly, for errors and logs.
type Defect struct {
	ID, Reason, Detail string
}

func (d *Defect) Error() string {
	return fmt.Sprintf("bfcl: item %s: %s: %s", d.ID, d.Reason, d.Detail)
}

// Check is the one rule for which items of a BFCL data folder a build
// keeps: the bfcl builder and the toolpref builder (and trbench, through
// toolpref) all call it, so an item gets the same verdict in each. An
// item is kept when the BFCL scorer can evaluate it: its question is a
// list of turns of {role, content} messages with a non-empty first turn,
// its functions a list of function descriptions with names, its ground
// truth (when r has one) a non-empty list of calls of {param: [acceptable
// values]}, each to one of the item's functions. Anything else is a
// *Defect: that item alone is skipped and counted by reason.
//
// What concerns a file as a whole (a line that is not a JSON object, a
// missing or repeated id, an answer with no question, a question of a
// category with ground truth but no answer) is the caller's, and fails
// the build naming the file and the line.
func Check(r Raw) (Item, *Defect) {
	bad := func(reason, format string, args ...any) (Item, *Defect) {
		return Item{}, &Defect{ID: r.ID, Reason: reason, Detail: fmt.Sprintf(format, args...)}
	}
	var it Item
	if err := json.Unmarshal(r.Question, &it.Turns); err != nil || len(it.Turns) == 0 || len(it.Turns[0]) == 0 {
		return bad(MalformedQuestion, `"question" is not a list of turns of {role, content} messages with a non-empty first turn`)
	}
	fv, err := toolcall.DecodeJSON(r.Function)
	if _, isList := fv.([]any); err != nil || !isList {
		return bad(MalformedFunctions, `"function" is not a list of function descriptions`)
	}
	if it.Funcs, err = scorer.FunctionsFromValue(fv); err != nil {
		return bad(MalformedFunctions, "%v", err)
	}
	if r.GroundTruth == nil {
		return it, nil
	}
	gv, err := toolcall.DecodeJSON(r.GroundTruth)
	if err == nil {
		it.Answers, err = scorer.AnswersFromValue(gv)
	}
	if err != nil || len(it.Answers) == 0 {
		msg := `"ground_truth" must be a non-empty list of {function: {param: [values]}}`
		if err != nil {
			msg += ": " + err.Error()
		}
		return bad(MalformedGroundTruth, "%s", msg)
	}
	for _, a := range it.Answers {
		if !defines(it.Funcs, a.Name) {
			return bad(UndefinedFunction, "function %q is not among the item's functions", a.Name)
		}
	}
	return it, nil
}

func defines(funcs []scorer.Function, name string) bool {
	for _, f := range funcs {
		if f.Name == name {
			return true
		}
	}
	return false
}

// Skip counts the item d left out in stats: named by its id (up to
// datasets.MaxNamedItems items), else under its category cat.
func (d *Defect) Skip(stats map[string]int64, cat string) {
	datasets.SkipItem(stats, cat, d.ID, d.Reason)
}
