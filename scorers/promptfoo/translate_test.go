package promptfoo

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

// TestTranslationFitsTheSchema validates the task file a config is
// translated into (testdata/same's first prompt) against
// docs/taskfile.schema.json, the editors' schema.
func TestTranslationFitsTheSchema(t *testing.T) {
	raw, err := os.ReadFile("../../docs/taskfile.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("s.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("s.json")
	if err != nil {
		t.Fatal(err)
	}
	// A config with a judged assertion is translated to promptfoo-judged
	// scorers.
	for _, typ := range []string{"contains", "llm-rubric"} {
		cfg := &Config{File: "x.yaml", Prompts: []Prompt{{Raw: "Say {{ a }}"}}, Tests: []Test{{Vars: map[string]any{"a": "b"}, Assert: []Assertion{{Type: typ, Value: "b", Weight: 1}}}}}
		tr, err := cfg.Translate("x.rows.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := yaml.Unmarshal(tr.TaskFile, &v); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(v)
		inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err := sch.Validate(inst); err != nil {
			t.Errorf("the schema refuses the translated task file: %v\n%s", err, tr.TaskFile)
		}
	}
}

// TestTranslateRefuses: what a dataset cannot hold fails naming the key.
func TestTranslateRefuses(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "chat.json"), []byte(`[{"role": "system", "content": "s"}, {"role": "user", "content": "{{ a }}"}]`), 0o644)
	tests := []struct{ name, config, want string }{
		{"roles", "prompts: [file://chat.json, '{{ a }}']\ntests: [{vars: {a: x}}]\n", "prompts[1]: tests[0]: the chat's roles are user where the first sample's are system, user"},
		{"last", "prompts: ['[{\"role\": \"user\", \"content\": \"{{ a }}\"}, {\"role\": \"assistant\", \"content\": \"Sure:\"}]']\ntests: [{vars: {a: x}}]\n", "prompts[0]: tests[0]: the chat's last message is role assistant"},
		{"var", "prompts: ['{{ a }}']\ntests: [{vars: {a: x, pf_sample: y}}]\n", "tests[0].vars.pf_sample: is a column"},
		{"tools", "prompts: ['{{ a }}']\nproviders: [{id: 'openai:chat:m', config: {apiBaseUrl: 'http://h/v1', tools: [{type: function, function: {name: f}}]}}]\ntests: [{vars: {a: x}}]\n", "providers[0].config.tools"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(dir, "c.yaml")
			cfg, err := Parse(file, []byte(tt.config), DirReader(dir))
			if err != nil {
				t.Fatal(err)
			}
			_, err = cfg.Translate("c.rows.jsonl")
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), file) {
				t.Fatalf("err = %v, want one naming %s and %q", err, file, tt.want)
			}
		})
	}
}

// TestTranslateRowsBound: rows past the bound fail naming the sample that
// passes it, before anything is returned.
func TestTranslateRowsBound(t *testing.T) {
	defer func(n int) { maxRowsBytes = n }(maxRowsBytes)
	maxRowsBytes = 4000
	cfg := &Config{File: "big.yaml", Prompts: []Prompt{{Raw: "{{ a }}"}}}
	for range 10 {
		cfg.Tests = append(cfg.Tests, Test{Vars: map[string]any{"a": strings.Repeat("x", 500)}})
	}
	_, err := cfg.Translate("r.jsonl")
	if err == nil || !strings.Contains(err.Error(), "big.yaml: tests[") || !strings.Contains(err.Error(), "4000 bytes, the limit") {
		t.Fatalf("err = %v, want the bound named", err)
	}
	maxRowsBytes = 1 << 20
	if _, err := cfg.Translate("r.jsonl"); err != nil {
		t.Fatal(err)
	}
}
