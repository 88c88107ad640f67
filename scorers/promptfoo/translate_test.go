package promptfoo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"github.com/benchline/benchline/scorers/taskfile"
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
		{"empty optional", "prompts: ['[{\"role\": \"system\", \"content\": \"{{ s }}\"}, {\"role\": \"user\", \"content\": \"{{ a }}\"}]', '{{ a }}']\ntests: [{vars: {a: x, s: ''}}]\n", "prompts[0]: tests[0]: the chat's message 0 (system) renders empty"},
		{"last", "prompts: ['[{\"role\": \"user\", \"content\": \"{{ a }}\"}, {\"role\": \"assistant\", \"content\": \"Sure:\"}]']\ntests: [{vars: {a: x}}]\n", "prompts[0]: tests[0]: the chat's last message is role assistant"},
		{"var", "prompts: ['{{ a }}']\ntests: [{vars: {a: x, pf_sample: y}}]\n", "tests[0].vars.pf_sample: is a column"},
		{"tools differ", "prompts: ['{{ a }}']\nproviders: [{id: 'openai:chat:m', config: {apiBaseUrl: 'http://h/v1', tools: [{type: function, function: {name: f}}]}}, {id: 'openai:chat:n', config: {apiBaseUrl: 'http://h/v1'}}]\ntests: [{vars: {a: x}}]\n", "providers[1].config.tools: differ from providers[0]'s"},
		{"tools var", "prompts: ['{{ a }}']\nproviders: [{id: 'openai:chat:m', config: {apiBaseUrl: 'http://h/v1', tools: [{type: function, function: {name: f}}]}}]\ntests: [{vars: {a: x, pf_tools: y}}]\n", "tests[0].vars.pf_tools: is a column"},
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

// TestTranslateDifferingRoles: prompts whose chats differ in their roles
// (a system message in one, none in another, few-shot turns in a third)
// share one task file whose optional messages each row fills as its own
// prompt does: every row's chat, as the task file renders it, is the
// sample's chat promptfoo renders.
func TestTranslateDifferingRoles(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "sys.json"), []byte(`[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "{{ a }}"}]`), 0o644)
	os.WriteFile(filepath.Join(dir, "shots.json"), []byte(`[{"role": "user", "content": "1+1?"}, {"role": "assistant", "content": "2"}, {"role": "user", "content": "{{ a }}"}]`), 0o644)
	os.WriteFile(filepath.Join(dir, "both.json"), []byte(`[{"role": "system", "content": "S"}, {"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}, {"role": "user", "content": "{{ a }}"}]`), 0o644)
	file := filepath.Join(dir, "c.yaml")
	cfg, err := Parse(file, []byte("prompts: [file://sys.json, '{{ a }}', file://shots.json, file://both.json]\ntests: [{vars: {a: '2+2?'}}, {vars: {a: '3+3?'}}]\n"), DirReader(dir))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cfg.Translate("c.rows.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	c, err := taskfile.Load("c.task.yaml", tr.TaskFile)
	if err != nil {
		t.Fatalf("Load: %v\n%s", err, tr.TaskFile)
	}
	var roles []string
	for _, m := range c.Spec.Prompt.Messages {
		roles = append(roles, fmt.Sprintf("%s/%v", m.Role, m.Optional))
	}
	if got := strings.Join(roles, " "); got != "system/true user/true assistant/true user/false" {
		t.Errorf("the task file's messages are %s", got)
	}
	samples, err := cfg.Samples()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(tr.Rows)), "\n")
	if len(lines) != len(samples) || len(samples) != 8 {
		t.Fatalf("%d rows for %d samples, want 8", len(lines), len(samples))
	}
	for i, line := range lines {
		var fields map[string]any
		if err := json.Unmarshal([]byte(line), &fields); err != nil {
			t.Fatal(err)
		}
		msgs, err := c.Messages(taskfile.Row{ID: fmt.Sprint(fields["id"]), Fields: fields}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got, want []string
		for _, m := range msgs {
			got = append(got, m.Role+": "+m.Content)
		}
		for _, m := range samples[i].Messages {
			want = append(want, m.Role+": "+m.Content)
		}
		if strings.Join(got, " | ") != strings.Join(want, " | ") {
			t.Errorf("row %d: the chat sent is %q, promptfoo's %q", i, got, want)
		}
	}
}

// TestSupersequence: the shortest sequence of roles holding both.
func TestSupersequence(t *testing.T) {
	for _, tc := range []struct{ a, b, want string }{
		{"", "user", "user"},
		{"system user", "user", "system user"},
		{"user", "system user", "system user"},
		{"user assistant user", "system user", "system user assistant user"},
		{"system user assistant user", "user assistant user", "system user assistant user"},
		{"user assistant user", "assistant user", "user assistant user"},
	} {
		var a []string
		if tc.a != "" {
			a = strings.Fields(tc.a)
		}
		if got := strings.Join(supersequence(a, strings.Fields(tc.b)), " "); got != tc.want {
			t.Errorf("supersequence(%s; %s) = %s, want %s", tc.a, tc.b, got, tc.want)
		}
	}
}
