package rmtbench_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/rmtbench"
	"github.com/benchline/benchline/schemas"
)

const goodCharacter = `{"id": "keeper", "kind": "custom", "en": {"name": "Mara Voss", "background": "Mara Voss keeps the lighthouse.", "keywords": ["lighthouse"]}}`

func TestReadCharactersRejects(t *testing.T) {
	tests := []struct {
		name, line, want string
	}{
		{"not JSON", `{"id": "keeper",`, "not a character"},
		{"unknown field", `{"id": "keeper", "kind": "custom", "colour": "red", "en": {"name": "M", "background": "b", "keywords": ["m"]}}`, `unknown field "colour"`},
		{"id not a slug", `{"id": "Keeper", "kind": "custom", "en": {"name": "M", "background": "b", "keywords": ["m"]}}`, `"id" must be a lower-case slug`},
		{"kind", `{"id": "k", "kind": "robot", "en": {"name": "M", "background": "b", "keywords": ["m"]}}`, `"kind" must be "custom"`},
		{"no profile", `{"id": "k", "kind": "custom"}`, "no profile"},
		{"custom without background", `{"id": "k", "kind": "custom", "en": {"name": "M", "keywords": ["m"]}}`, `character k: en: a custom character has a "background"`},
		{"abstract with background", `{"id": "k", "kind": "abstract", "zh": {"name": "M", "background": "b", "traits": ["t"], "keywords": ["m"]}}`, `character k: zh: an abstract character has 1 to 6 "traits"`},
		{"no keywords", `{"id": "k", "kind": "custom", "en": {"name": "M", "background": "b"}}`, `"keywords" needs at least one entry`},
		{"keyword case", `{"id": "k", "kind": "custom", "en": {"name": "M", "background": "b", "keywords": ["Lamp"]}}`, `keywords entry "Lamp" must be lower case`},
		{"forbidden repeats", `{"id": "k", "kind": "custom", "en": {"name": "M", "background": "b", "keywords": ["m"], "forbidden": ["x", "x"]}}`, `forbidden entry "x" repeats`},
		{"name with white space", `{"id": "k", "kind": "custom", "en": {"name": " M", "background": "b", "keywords": ["m"]}}`, `"name" is missing, empty or has surrounding white space`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rmtbench.ReadCharacters(strings.NewReader(goodCharacter+"\n\n"+tc.line+"\n"), "chars.jsonl")
			var ie *datasets.InputError
			if !errors.As(err, &ie) || ie.File != "chars.jsonl" || ie.Line != 3 || !strings.Contains(ie.Msg, tc.want) {
				t.Fatalf("err = %v; want an InputError at chars.jsonl:3 saying %q", err, tc.want)
			}
		})
	}
	_, err := rmtbench.ReadCharacters(strings.NewReader(goodCharacter+"\n"+goodCharacter+"\n"), "chars.jsonl")
	if err == nil || !strings.Contains(err.Error(), `chars.jsonl:2: duplicate character id "keeper" (first at line 1)`) {
		t.Errorf("duplicate: %v", err)
	}
}

func TestReadDialogues(t *testing.T) {
	chars, err := rmtbench.ReadCharacters(strings.NewReader(goodCharacter), "chars.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	const fixed = `{"id": "d1", "character": "keeper", "language": "en", "scenario": "user_preference", "motivation": "m", "topics": ["storms"], "preferences": [{"statement": "I hate the cold.", "keywords": ["cold"]}], "turns": [{"user": "Hi", "reference": "Welcome."}, {"user": "I hate the cold."}]}`
	const simulated = `{"id": "d2", "character": "keeper", "language": "en", "scenario": "character_understanding", "motivation": "m", "topics": ["storms"], "dimensions": ["safety_boundaries", "character_consistency"], "max_turns": 6}`
	rows, err := rmtbench.ReadDialogues(strings.NewReader(fixed+"\n"+simulated+"\n"), "dialogues.jsonl", chars)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Mode != schemas.RMTModeFixed || rows[0].MaxTurns != 2 || rows[1].Mode != schemas.RMTModeSimulated ||
		rows[1].MaxTurns != 6 || rows[1].SourceLine != 2 || rows[0].CharacterName != "Mara Voss" || rows[0].CharacterKind != "custom" {
		t.Fatalf("rows %+v", rows)
	}
	_, d := decodeRow(t, rows[0])
	if len(d.Dimensions) != 5 || d.Turns[0].Reference != "Welcome." || d.Turns[1].Reference != "" {
		t.Errorf("fixed dialogue spec %+v", d)
	}
	if _, d := decodeRow(t, rows[1]); strings.Join(d.Dimensions, ",") != "safety_boundaries,character_consistency" {
		t.Errorf("dimensions %v", d.Dimensions)
	}

	tests := []struct {
		name, line, want string
	}{
		{"unknown field", `{"id": "x", "character": "keeper", "language": "en", "scenario": "s", "motivation": "m", "topics": ["t"], "max_turns": 2, "mood": 1}`, `unknown field "mood"`},
		{"language", `{"id": "x", "character": "keeper", "language": "fr", "scenario": "s", "motivation": "m", "topics": ["t"], "max_turns": 2}`, `dialogue x: "language" must be "en" or "zh"`},
		{"unknown character", `{"id": "x", "character": "nobody", "language": "en", "scenario": "s", "motivation": "m", "topics": ["t"], "max_turns": 2}`, `character "nobody" is not in characters.jsonl`},
		{"no profile in the language", `{"id": "x", "character": "keeper", "language": "zh", "scenario": "s", "motivation": "m", "topics": ["t"], "max_turns": 2}`, `character "keeper" has no "zh" profile`},
		{"scenario", `{"id": "x", "character": "keeper", "language": "en", "scenario": "User Pref", "motivation": "m", "topics": ["t"], "max_turns": 2}`, `"scenario" must be a lower-case slug`},
		{"no motivation", `{"id": "x", "character": "keeper", "language": "en", "scenario": "s", "topics": ["t"], "max_turns": 2}`, `missing or empty "motivation"`},
		{"no topics", `{"id": "x", "character": "keeper", "language": "en", "scenario": "s", "motivation": "m", "max_turns": 2}`, `"topics" needs at least one entry`},
		{"preference not in its statement", `{"id": "x", "character": "keeper", "language": "en", "scenario": "s", "motivation": "m", "topics": ["t"], "preferences": [{"statement": "I like tea.", "keywords": ["coffee"]}], "max_turns": 2}`, `preference 1: the statement "I like tea." holds none of its keywords`},
		{"unknown dimension", `{"id": "x", "character": "keeper", "language": "en", "scenario": "s", "motivation": "m", "topics": ["t"], "dimensions": ["humour"], "max_turns": 2}`, `unknown dimension "humour"`},
		{"dimension repeats", `{"id": "x", "character": "keeper", "language": "en", "scenario": "s", "motivation": "m", "topics": ["t"], "dimensions": ["safety_boundaries", "safety_boundaries"], "max_turns": 2}`, `dimension "safety_boundaries" repeats`},
		{"both modes", `{"id": "x", "character": "keeper", "language": "en", "scenario": "s", "motivation": "m", "topics": ["t"], "turns": [{"user": "u"}], "max_turns": 2}`, `not both`},
		{"neither mode", `{"id": "x", "character": "keeper", "language": "en", "scenario": "s", "motivation": "m", "topics": ["t"]}`, `give "turns"`},
		{"empty user turn", `{"id": "x", "character": "keeper", "language": "en", "scenario": "s", "motivation": "m", "topics": ["t"], "turns": [{"user": "u"}, {"user": " "}]}`, `turn 2: missing or empty "user"`},
		{"turn limit", `{"id": "x", "character": "keeper", "language": "en", "scenario": "s", "motivation": "m", "topics": ["t"], "max_turns": 51}`, `"max_turns" must be in 1..50`},
		{"duplicate id", simulated, `duplicate dialogue id "d2" (first at line 2)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rmtbench.ReadDialogues(strings.NewReader(fixed+"\n"+simulated+"\n"+tc.line+"\n"), "dialogues.jsonl", chars)
			var ie *datasets.InputError
			if !errors.As(err, &ie) || ie.File != "dialogues.jsonl" || ie.Line != 3 || !strings.Contains(ie.Msg, tc.want) {
				t.Fatalf("err = %v; want an InputError at dialogues.jsonl:3 saying %q", err, tc.want)
			}
		})
	}
}
