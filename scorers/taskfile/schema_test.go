package taskfile

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

// TestEditorSchema holds docs/taskfile.schema.json (the JSON Schema editors
// use) to the parser: the demo's task files pass both, a file the parser
// refuses for an unknown key or parameter fails the schema too, and the
// schema's scorer types are the library's.
func TestEditorSchema(t *testing.T) {
	raw, err := os.ReadFile("../../docs/taskfile.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("taskfile.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("taskfile.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	asJSON := func(t *testing.T, y string) any {
		var v any
		if err := yaml.Unmarshal([]byte(y), &v); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(normalizeYAML(v))
		out, _ := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
		return out
	}
	files, _ := filepath.Glob("../../internal/devstack/demotasks/*/task.yaml")
	if len(files) < 3 {
		t.Fatalf("found %d demo task files", len(files))
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if _, err := Load(f, b); err != nil {
			t.Errorf("parser: %v", err)
		}
		if err := sch.Validate(asJSON(t, string(b))); err != nil {
			t.Errorf("%s: schema: %v", f, err)
		}
	}
	for _, good := range []string{
		toolBase + "scorers: [{type: tool_calls, name: calls, expected: gt, category: parallel_multiple, language: python}]\n",
		toolBase + "scorers: [{type: tool_calls, expected: gt, category_column: c}]\n",
		base + "scorers: [{type: code, name: pass, language: python, tests: t, prelude: p, timeout: 10s, memory_mb: 256}]\n",
		base + "scorers: [{type: code, language_column: l, tests: t}]\n",
		base + "generation: {repeats: 5, temperature: 0.8}\nscorers: [{type: exact_match}]\n",
		base + "generation: {top_p: 0.9}\nscorers: [{type: exact_match}]\n",
		strings.Replace(base, "  test:", "  train: {path: b.jsonl}\n  test:", 1) + "  fewshot: {from: train, n: 2, sampler: python, drop_same: true}\nscorers: [{type: exact_match}]\n",
		base + "scorers: [{type: rubric, breaker: cap, cap: 0.3, judges: [baseline/judge, baseline/judge-yes], criteria: [{id: a, category: essential, text: t, weight: 2, keywords: [k]}]}]\n",
		base + "scorers: [{type: rubric, criteria_column: rubric}]\n",
		base + "scorers: [{type: scale, prompt: 'Rate {{ reply }}', min: 0, max: 10}]\n",
		base + "scorers: [{type: qa_grade, judges: [baseline/judge]}]\n",
	} {
		if _, err := Load("t.yaml", []byte(good)); err != nil {
			t.Errorf("parser: %v", err)
		}
		if err := sch.Validate(asJSON(t, good)); err != nil {
			t.Errorf("the schema refuses %q: %v", good, err)
		}
	}
	for _, bad := range []string{
		strings.Replace(base, "description:", "descripton:", 1) + "scorers: [{type: regex, pattern: x}]\n",
		base + "scorers: [{type: exact_match, ignore_cse: true}]\n",
		base + "scorers: [{type: bleu}]\n",
		toolBase + "scorers: [{type: tool_calls, expected: gt, expect: gt}]\n",
		toolBase + "scorers: [{type: tool_calls, expected: gt, category: simple, category_column: c}]\n",
		base + "scorers: [{type: code, language: python}]\n",
		base + "scorers: [{type: code, language: python, language_column: l, tests: t}]\n",
		base + "scorers: [{type: code, language: cobol, tests: t}]\n",
		base + "scorers: [{type: code, language: python, tests: t, memory_mb: 8}]\n",
		base + "generation: {repeats: 65}\nscorers: [{type: exact_match}]\n",
		base + "generation: {repeat: 2}\nscorers: [{type: exact_match}]\n",
		base + "scorers: [{type: rubric, criteria: [{category: essential, text: t, points: 2}]}]\n",
		base + "scorers: [{type: rubric, criteria_column: r, criteria: [{category: essential, text: t}]}]\n",
		base + "scorers: [{type: scale, prompt: x, scale: 5}]\n",
		base + "scorers: [{type: qa_grade, judges: [judge]}]\n",
	} {
		if _, err := Load("t.yaml", []byte(bad)); err == nil {
			t.Errorf("the parser accepts %q", bad)
		}
		if err := sch.Validate(asJSON(t, bad)); err == nil {
			t.Errorf("the schema accepts %q", bad)
		}
	}
	var s struct {
		Properties struct {
			Scorers struct {
				Items struct {
					Properties struct {
						Type struct {
							Enum []string `json:"enum"`
						} `json:"type"`
					} `json:"properties"`
				} `json:"items"`
			} `json:"scorers"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	// lmeval, promptfoo and promptfoo-judged are registered by
	// scorers/lmeval and scorers/promptfoo (RegisterScorer,
	// RegisterJudgedScorer), which this package does not link; their
	// tests validate translated files.
	want := append(slices.Clone(Types), "lmeval", "promptfoo", "promptfoo-judged")
	if got := s.Properties.Scorers.Items.Properties.Type.Enum; !slices.Equal(got, want) {
		t.Errorf("the schema's scorer types %v, the library's and registered %v", got, want)
	}
}
