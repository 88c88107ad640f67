package medrubric

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/schemas"
)

const uri = "s3://bucket/rubrics/clinic.jsonl"

// line builds a valid item line, then applies edits: each replaces the
// first occurrence of old with new.
func line(edits ...string) string {
	s := `{"id": "q1", "domain": "clinical_care", "language": "en", "turns": [` +
		`{"user": "Is a fever of 38 a worry?", "reference": "Usually not.", "rubrics": [` +
		`{"id": "r1", "category": "essential", "text": "Says when to seek care.", "keywords": ["seek care"]},` +
		`{"id": "r2", "category": "pitfall", "weight": 4.5, "text": "Recommends aspirin for a child.", "keywords": ["aspirin"], "proposed_by": ["m2", "m1"]}]}]}`
	for i := 0; i+1 < len(edits); i += 2 {
		s = strings.Replace(s, edits[i], edits[i+1], 1)
	}
	return s
}

func TestReadItems(t *testing.T) {
	input := "\n" + line() + "\n\n" + line(`"q1"`, `"q2"`, `"en"`, `"zh"`) + "\n"
	items, err := ReadItems(strings.NewReader(input), uri)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 {
		t.Fatalf("%d items, want 2", len(items))
	}
	it := items[0]
	if it.ID != "q1" || it.Domain != "clinical_care" || it.Language != "en" || it.NumTurns != 1 || it.NumRubrics != 2 ||
		it.SourceFile != uri || it.SourceLine != 2 || items[1].SourceLine != 4 || items[1].Language != "zh" {
		t.Errorf("rows = %+v", items)
	}
	turns, err := Turns(it)
	if err != nil {
		t.Fatal(err)
	}
	want := []schemas.MedRubricTurn{{
		User: "Is a fever of 38 a worry?", Reference: "Usually not.",
		Rubrics: []schemas.MedRubric{
			// The essential rubric gets its category's default weight, 3.
			{ID: "r1", Category: "essential", Weight: 3, Text: "Says when to seek care.", Keywords: []string{"seek care"}},
			{ID: "r2", Category: "pitfall", Weight: 4.5, Text: "Recommends aspirin for a child.", Keywords: []string{"aspirin"},
				ProposedBy: []string{"m1", "m2"}},
		},
	}}
	if !reflect.DeepEqual(turns, want) {
		t.Errorf("turns = %+v\nwant %+v", turns, want)
	}
}

func TestReadItemsErrors(t *testing.T) {
	tests := []struct {
		name, line, want string
	}{
		{"not JSON", `{"id": "q1",`, "not a rubric item"},
		{"unknown field", line(`"language"`, `"lang": "en", "language"`), `unknown field "lang"`},
		{"unknown rubric field", line(`"text": "Says`, `"note": "x", "text": "Says`), `unknown field "note"`},
		{"two values", line() + ` {}`, "more than one JSON value"},
		{"missing id", line(`"id": "q1", `, ``), `missing or empty "id"`},
		{"id with spaces", line(`"q1"`, `" q1"`), `id " q1" has surrounding white space`},
		{"bad domain", line(`"clinical_care"`, `"Clinical Care"`), `item q1: "domain" must be a lower-case slug`},
		{"missing language", line(`"language": "en", `, ``), `item q1: "language" must be a language tag such as "en" or "zh", got nothing`},
		{"empty turns", `{"id": "q1", "domain": "d", "language": "en", "turns": []}`, `item q1: "turns" is missing or empty`},
		{"empty user", line(`"Is a fever of 38 a worry?"`, `" "`), `item q1: turn 1: missing or empty "user"`},
		{"no rubrics", `{"id": "q1", "domain": "d", "language": "en", "turns": [{"user": "u", "rubrics": []}]}`, `turn 1: "rubrics" is missing or empty`},
		{"rubric without id", line(`"id": "r2", `, ``), `turn 1: a rubric has a missing or empty "id"`},
		{"unknown category", line(`"pitfall"`, `"optional"`), `turn 1: rubric r2: category "optional" is not essential`},
		{"missing category", line(`"category": "pitfall", `, ``), `rubric r2: missing "category"`},
		{"zero weight", line(`4.5`, `0`), `rubric r2: weight 0 must be positive`},
		{"negative weight", line(`4.5`, `-1`), `rubric r2: weight -1 must be positive`},
		{"empty text", line(`"Recommends aspirin for a child."`, `""`), `rubric r2: missing or empty "text"`},
		{"upper-case keyword", line(`["aspirin"]`, `["Aspirin"]`), `rubric r2: keyword "Aspirin" must be lower case`},
		{"keyword with spaces", line(`["aspirin"]`, `[" aspirin"]`), `keyword " aspirin" must be lower case without surrounding white space`},
		{"empty keyword", line(`["aspirin"]`, `["aspirin", ""]`), `rubric r2: keyword 2 is empty`},
		{"repeated keyword", line(`["aspirin"]`, `["aspirin", "aspirin"]`), `keyword "aspirin" repeats`},
		{"empty proposer", line(`"m1"`, `""`), `"proposed_by" has an empty name`},
		{"repeated proposer", line(`"m1"`, `"m2"`), `proposer "m2" repeats`},
		{"repeated rubric id", line(`"id": "r2"`, `"id": "r1"`), `turn 1: rubric id "r1" repeats (first in turn 1)`},
		{"no essential rubric", line(`"category": "essential"`, `"category": "important"`), "turn 1: no essential rubric"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The broken line is line 3, after a valid line and a blank one.
			input := line(`"q1"`, `"q0"`) + "\n\n" + tc.line + "\n"
			_, err := ReadItems(strings.NewReader(input), uri)
			var ie *datasets.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v is not a *datasets.InputError", err)
			}
			if ie.File != uri || ie.Line != 3 || !strings.Contains(ie.Msg, tc.want) {
				t.Errorf("error %q (line %d), want line 3 and %q", err, ie.Line, tc.want)
			}
			if !strings.HasPrefix(err.Error(), uri+":3: ") {
				t.Errorf("error %q does not start with the file and line", err)
			}
		})
	}
}

func TestParserIDsAcrossFiles(t *testing.T) {
	var p Parser
	if _, err := p.Parse(strings.NewReader(line()), "a.jsonl"); err != nil {
		t.Fatal(err)
	}
	_, err := p.Parse(strings.NewReader(line(`"q1"`, `"q9"`)+"\n"+line()), "b.jsonl")
	var ie *datasets.InputError
	if !errors.As(err, &ie) || ie.File != "b.jsonl" || ie.Line != 2 || ie.Msg != `duplicate id "q1" (first at a.jsonl:1)` {
		t.Errorf("duplicate across files: %v", err)
	}
}

func TestTurnsBadJSON(t *testing.T) {
	if _, err := Turns(schemas.MedRubricItem{ID: "x", TurnsJSON: "{"}); err == nil || !strings.Contains(err.Error(), "item x") {
		t.Errorf("Turns on bad JSON = %v", err)
	}
}
