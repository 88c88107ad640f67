// Package promptfoo reads a promptfoo config (promptfooconfig.yaml) as a
// task: its prompts times its tests are the samples, and each test's
// assertions are graded as promptfoo grades them (src/assertions in
// promptfoo 0.123.1): every assertion gives a pass and a score, the test's
// score is their weighted mean, and the test passes when every assertion
// passes, or, with a test threshold, when the score reaches it. What the
// package does not support (a key, an assertion type, a provider) fails
// the config naming it (docs/tasks.md, "promptfoo configs").
package promptfoo

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/benchline/benchline/scorers/taskfile"
)

// Limits on what a config brings in.
const (
	// MaxFileBytes bounds the config and every file:// it names.
	MaxFileBytes = 4 << 20
	// MaxSamples bounds prompts x tests.
	MaxSamples = 100_000
)

// ErrInvalid is a config benchline cannot run: errors wrap it.
var ErrInvalid = errors.New("promptfoo: invalid config")

// Error names the file and the key of what is wrong.
type Error struct {
	File, Key, Msg string
}

func (e *Error) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("promptfoo: %s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("promptfoo: %s: %s: %s", e.File, e.Key, e.Msg)
}

func (e *Error) Unwrap() error { return ErrInvalid }

// Detect says whether a YAML document is a promptfoo config rather than a
// benchline task file: it has promptfoo's keys (prompts with tests or
// providers) and none of a task file's (data, scorers).
func Detect(data []byte) bool {
	var m map[string]yaml.Node
	if yaml.Unmarshal(data, &m) != nil {
		return false
	}
	_, prompts := m["prompts"]
	_, tests := m["tests"]
	_, providers := m["providers"]
	_, data1 := m["data"]
	_, scorers := m["scorers"]
	return prompts && (tests || providers) && !data1 && !scorers
}

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Prompt is one of the config's prompts: a template over a test's vars.
type Prompt struct {
	Label string
	Raw   string
}

// Provider is the model a config names, mapped to benchline's terms.
type Provider struct {
	ID string
	// Model is the model's name at the endpoint.
	Model string
	// BaseURL is config.apiBaseUrl: the OpenAI-compatible endpoint.
	BaseURL     string
	Temperature *float64
	MaxTokens   int
	// Tools are config.tools, the functions offered.
	Tools []Tool
}

// Tool is one OpenAI tool.
type Tool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string `json:"name"`
		Description string `json:"description,omitempty"`
		Parameters  any    `json:"parameters,omitempty"`
	} `json:"function"`
}

// Assertion is one assert entry.
type Assertion struct {
	Type      string
	Value     any
	Weight    float64
	Threshold *float64
	Metric    string
}

// Test is one test after defaultTest is merged in.
type Test struct {
	Description string
	Vars        map[string]any
	Assert      []Assertion
	Threshold   *float64
	// Factuality is options.factuality: the score of each factuality
	// category (subset, superset, agree, disagree, differButFactual);
	// nil for promptfoo's defaults.
	Factuality map[string]float64 `json:",omitempty"`
}

// Config is a promptfoo config as benchline runs it.
type Config struct {
	File        string
	Description string
	Prompts     []Prompt
	Providers   []Provider
	Tests       []Test
}

// Sample is one prompt applied to one test.
type Sample struct {
	ID       string
	Prompt   int
	Test     int
	Rendered string
	Messages []Message
	Vars     map[string]any
}

// Judged reports whether a test of c has a judged assertion.
func (c *Config) Judged() bool {
	return slices.ContainsFunc(c.Tests, Test.Judged)
}

// Judged reports whether t has a judged assertion.
func (t Test) Judged() bool {
	return slices.ContainsFunc(t.Assert, func(a Assertion) bool {
		return slices.Contains(Judged, strings.TrimPrefix(a.Type, "not-"))
	})
}

// ReadFile reads a file:// path relative to the config.
type ReadFile func(rel string) ([]byte, error)

var topKeys = []string{"description", "prompts", "providers", "tests", "defaultTest"}
var testKeys = []string{"description", "vars", "assert", "threshold", "metadata", "options"}
var assertKeys = []string{"type", "value", "weight", "threshold", "metric"}

// Parse reads a config; read opens its file:// references.
func Parse(file string, data []byte, read ReadFile) (*Config, error) {
	bad := func(key, format string, a ...any) error {
		return &Error{File: file, Key: key, Msg: fmt.Sprintf(format, a...)}
	}
	if len(data) > MaxFileBytes {
		return nil, bad("", "%d bytes, more than %d, the limit", len(data), MaxFileBytes)
	}
	var raw map[string]any
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, bad("", "%v", err)
	}
	for _, k := range sortedKeys(raw) {
		if !slices.Contains(topKeys, k) {
			return nil, bad(k, "is not supported (benchline reads %s)", strings.Join(topKeys, ", "))
		}
	}
	c := &Config{File: file}
	c.Description, _ = raw["description"].(string)

	// prompts
	prompts, err := listOf(raw["prompts"])
	if err != nil || len(prompts) == 0 {
		return nil, bad("prompts", "want a string or a list of prompts")
	}
	for i, p := range prompts {
		key := fmt.Sprintf("prompts[%d]", i)
		switch v := p.(type) {
		case string:
			ps, err := promptOf(v, read)
			if err != nil {
				return nil, bad(key, "%v", err)
			}
			c.Prompts = append(c.Prompts, ps...)
		case map[string]any:
			for k := range v {
				if k != "raw" && k != "label" && k != "id" {
					return nil, bad(key+"."+k, "is not supported (raw, label, id)")
				}
			}
			src, _ := v["raw"].(string)
			if src == "" {
				src, _ = v["id"].(string)
			}
			ps, err := promptOf(src, read)
			if err != nil {
				return nil, bad(key, "%v", err)
			}
			if l, ok := v["label"].(string); ok && len(ps) == 1 {
				ps[0].Label = l
			}
			c.Prompts = append(c.Prompts, ps...)
		default:
			return nil, bad(key, "want a string or a mapping with raw")
		}
	}

	// providers
	provs, err := listOf(raw["providers"])
	if err != nil {
		return nil, bad("providers", "want a string or a list")
	}
	for i, p := range provs {
		pr, err := providerOf(p)
		if err != nil {
			return nil, bad(fmt.Sprintf("providers[%d]", i), "%v", err)
		}
		c.Providers = append(c.Providers, pr)
	}

	// defaultTest and tests
	var def Test
	if d, ok := raw["defaultTest"]; ok {
		m, ok := d.(map[string]any)
		if !ok {
			return nil, bad("defaultTest", "want a mapping")
		}
		if def, err = testOf(m, "defaultTest"); err != nil {
			return nil, &Error{File: file, Msg: err.Error()}
		}
	}
	tests, err := testsOf(raw["tests"], read)
	if err != nil {
		return nil, &Error{File: file, Msg: err.Error()}
	}
	if len(tests) == 0 {
		tests = []map[string]any{{}}
	}
	for i, m := range tests {
		t, err := testOf(m, fmt.Sprintf("tests[%d]", i))
		if err != nil {
			return nil, &Error{File: file, Msg: err.Error()}
		}
		vars := map[string]any{}
		for k, v := range def.Vars {
			vars[k] = v
		}
		for k, v := range t.Vars {
			vars[k] = v
		}
		t.Vars = vars
		t.Assert = append(slices.Clone(def.Assert), t.Assert...)
		if t.Threshold == nil {
			t.Threshold = def.Threshold
		}
		if t.Factuality == nil {
			t.Factuality = def.Factuality
		}
		c.Tests = append(c.Tests, t)
	}
	if n := len(c.Prompts) * len(c.Tests); n > MaxSamples {
		return nil, bad("tests", "%d prompts x %d tests is more than %d samples, the limit", len(c.Prompts), len(c.Tests), MaxSamples)
	}
	return c, nil
}

// Samples renders every prompt over every test's vars, as promptfoo's
// renderPrompt does: a string var loses one trailing newline; a prompt that
// parses as JSON has each of its strings rendered and is written back as
// JSON (so vars need no escaping); any other prompt is rendered after the
// string vars are rendered themselves (a var may be a template).
func (c *Config) Samples() ([]Sample, error) {
	var out []Sample
	for ti, t := range c.Tests {
		vars := make(map[string]any, len(t.Vars))
		for k, v := range t.Vars {
			if s, ok := v.(string); ok {
				v = strings.TrimSuffix(s, "\n")
			}
			vars[k] = v
		}
		for pi, p := range c.Prompts {
			bad := func(err error) error {
				return &Error{File: c.File, Key: fmt.Sprintf("prompts[%d]", pi), Msg: fmt.Sprintf("tests[%d]: %v", ti, err)}
			}
			s, err := renderPrompt(p.Raw, vars)
			if err != nil {
				return nil, bad(err)
			}
			msgs, err := chatOf(s)
			if err != nil {
				return nil, bad(err)
			}
			out = append(out, Sample{ID: fmt.Sprintf("p%d-t%d", pi, ti), Prompt: pi, Test: ti,
				Rendered: s, Messages: msgs, Vars: vars})
		}
	}
	return out, nil
}

func renderPrompt(raw string, vars map[string]any) (string, error) {
	var parsed any
	if json.Unmarshal([]byte(raw), &parsed) == nil {
		v, err := renderStrings(parsed, vars)
		if err != nil {
			return "", err
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			return "", err
		}
		return strings.TrimSuffix(b.String(), "\n"), nil
	}
	rendered := make(map[string]any, len(vars))
	for k, v := range vars {
		if s, ok := v.(string); ok {
			r, err := render(s, vars)
			if err != nil {
				return "", fmt.Errorf("var %s: %w", k, err)
			}
			v = r
		}
		rendered[k] = v
	}
	return render(raw, rendered)
}

func renderStrings(v any, vars map[string]any) (any, error) {
	switch t := v.(type) {
	case string:
		return render(t, vars)
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			r, err := renderStrings(x, vars)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			r, err := renderStrings(x, vars)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	}
	return v, nil
}

// render renders a Nunjucks template over vars with benchline's Jinja
// engine (docs/tasks.md says where the two differ).
func render(src string, vars map[string]any) (string, error) {
	if !strings.Contains(src, "{{") && !strings.Contains(src, "{%") {
		return src, nil
	}
	return taskfile.RenderString(src, vars)
}

// chatOf reads a rendered prompt as promptfoo's OpenAI provider does: a
// prompt that parses as JSON is the list of messages (anything else JSON
// is refused: promptfoo would send it as the messages), one that starts
// with "- role:" is YAML messages, anything else is one user message.
func chatOf(s string) ([]Message, error) {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "- role:") {
		var msgs []Message
		if err := yaml.Unmarshal([]byte(s), &msgs); err != nil {
			return nil, fmt.Errorf("the rendered prompt is not valid YAML messages: %v", err)
		}
		return msgs, nil
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		if (strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}")) || (strings.HasPrefix(t, "[") && strings.HasSuffix(t, "]")) {
			return nil, fmt.Errorf("the rendered prompt looks like JSON but is not: %v", err)
		}
		return []Message{{Role: "user", Content: s}}, nil
	}
	var msgs []Message
	if err := json.Unmarshal([]byte(s), &msgs); err != nil || len(msgs) == 0 {
		return nil, errors.New("the rendered prompt is JSON but not a list of chat messages (role, content)")
	}
	for i, m := range msgs {
		if m.Role != "system" && m.Role != "user" && m.Role != "assistant" {
			return nil, fmt.Errorf("the rendered prompt's message %d has role %q (system, user or assistant)", i, m.Role)
		}
	}
	return msgs, nil
}

func promptOf(src string, read ReadFile) ([]Prompt, error) {
	path, ok := strings.CutPrefix(src, "file://")
	if !ok {
		return []Prompt{{Label: src, Raw: src}}, nil
	}
	if strings.ContainsAny(path, "*?[") {
		return nil, fmt.Errorf("%s: globs are not supported", src)
	}
	if _, fn, ok := strings.Cut(path, ":"); ok {
		return nil, fmt.Errorf("%s: a prompt function (%s) needs JavaScript or Python files benchline does not run", src, fn)
	}
	data, err := read(path)
	if err != nil {
		return nil, err
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return []Prompt{{Label: src, Raw: string(data)}}, nil
	case ".yaml", ".yml":
		var v any
		if err := yaml.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return []Prompt{{Label: src, Raw: string(b)}}, nil
	case ".txt", ".md", ".j2", ".njk", "":
		var out []Prompt
		// promptfoo splits a text file on lines of "---" and trims each part.
		var buf []string
		flush := func() {
			if raw := strings.TrimSpace(strings.Join(buf, "\n")); raw != "" {
				out = append(out, Prompt{Label: src, Raw: raw})
			}
			buf = nil
		}
		for _, line := range strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n") {
			if strings.TrimSpace(line) == "---" {
				flush()
				continue
			}
			buf = append(buf, line)
		}
		flush()
		return out, nil
	}
	return nil, fmt.Errorf("%s: prompt files are .txt, .json or .yaml (scripts are not run)", src)
}

func providerOf(p any) (Provider, error) {
	var pr Provider
	var cfg map[string]any
	switch v := p.(type) {
	case string:
		pr.ID = v
	case map[string]any:
		for k := range v {
			if k != "id" && k != "config" && k != "label" {
				return pr, fmt.Errorf("%s is not supported (id, label, config)", k)
			}
		}
		pr.ID, _ = v["id"].(string)
		cfg, _ = v["config"].(map[string]any)
	default:
		return pr, errors.New("want a provider id or a mapping with id")
	}
	model, ok := strings.CutPrefix(pr.ID, "openai:chat:")
	if !ok {
		return pr, fmt.Errorf("%q is not supported: benchline maps openai:chat:MODEL (with config.apiBaseUrl) to a providers-file entry", pr.ID)
	}
	pr.Model = model
	for k, v := range cfg {
		switch k {
		case "apiBaseUrl":
			pr.BaseURL, _ = v.(string)
		case "temperature":
			f, ok := number(v)
			if !ok {
				return pr, errors.New("config.temperature: want a number")
			}
			pr.Temperature = &f
		case "max_tokens":
			f, ok := number(v)
			if !ok {
				return pr, errors.New("config.max_tokens: want a number")
			}
			pr.MaxTokens = int(f)
		case "tools":
			b, err := json.Marshal(v)
			if err == nil {
				err = json.Unmarshal(b, &pr.Tools)
			}
			if err != nil {
				return pr, fmt.Errorf("config.tools: want a list of OpenAI tools: %v", err)
			}
			for i, tool := range pr.Tools {
				if tool.Function.Name == "" {
					return pr, fmt.Errorf("config.tools[%d].function.name: is required (the model calls a tool by its name)", i)
				}
			}
		default:
			return pr, fmt.Errorf("config.%s is not supported (apiBaseUrl, temperature, max_tokens, tools)", k)
		}
	}
	return pr, nil
}

func testsOf(v any, read ReadFile) ([]map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	var out []map[string]any
	items, err := listOf(v)
	if err != nil {
		return nil, errors.New("tests: want a list, or a file:// path")
	}
	for i, it := range items {
		switch t := it.(type) {
		case map[string]any:
			out = append(out, t)
		case string:
			got, err := testFile(t, read)
			if err != nil {
				return nil, fmt.Errorf("tests[%d]: %w", i, err)
			}
			out = append(out, got...)
		default:
			return nil, fmt.Errorf("tests[%d]: want a mapping or a file:// path", i)
		}
	}
	return out, nil
}

func testFile(src string, read ReadFile) ([]map[string]any, error) {
	path, ok := strings.CutPrefix(src, "file://")
	if !ok {
		return nil, fmt.Errorf("%q: want a file:// path", src)
	}
	data, err := read(path)
	if err != nil {
		return nil, err
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		return csvTests(path, data)
	case ".yaml", ".yml", ".json":
		var list []map[string]any
		if err := yaml.Unmarshal(data, &list); err != nil {
			return nil, fmt.Errorf("%s: want a list of tests: %w", path, err)
		}
		return list, nil
	}
	return nil, fmt.Errorf("%s: test files are .csv, .yaml or .json", src)
}

// csvTests reads promptfoo's CSV tests: every column is a var, except
// __expected (and __expected1, ...: an assertion each), __description,
// __threshold and __metric.
func csvTests(path string, data []byte) ([]map[string]any, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []map[string]any
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		t := map[string]any{}
		vars := map[string]any{}
		var asserts []any
		var metric string
		for i, col := range head {
			col = strings.TrimSpace(col)
			if i >= len(rec) {
				break
			}
			cell := rec[i]
			switch {
			case strings.HasPrefix(col, "__expected"):
				if strings.TrimSpace(cell) == "" {
					continue
				}
				a, err := expectedAssertion(strings.TrimSpace(cell))
				if err != nil {
					return nil, fmt.Errorf("%s:%d: %s: %w", path, line, col, err)
				}
				asserts = append(asserts, a)
			case col == "__description":
				t["description"] = cell
			case col == "__threshold":
				f, err := strconv.ParseFloat(cell, 64)
				if err != nil {
					return nil, fmt.Errorf("%s:%d: __threshold: %q is not a number", path, line, cell)
				}
				t["threshold"] = f
			case col == "__metric":
				metric = cell
			case strings.HasPrefix(col, "__"):
				return nil, fmt.Errorf("%s: column %s is not supported", path, col)
			default:
				vars[col] = cell
			}
		}
		if metric != "" {
			for _, a := range asserts {
				a.(map[string]any)["metric"] = metric
			}
		}
		t["vars"] = vars
		if len(asserts) > 0 {
			t["assert"] = asserts
		}
		out = append(out, t)
	}
	return out, nil
}

// promptfooTypes are every assertion type promptfoo 0.123.1 knows, for
// reading __expected cells as it does (TYPE, TYPE:VALUE, TYPE(THRESHOLD):VALUE).
var promptfooTypes = []string{"agent-rubric", "answer-relevance", "bleu", "classifier", "contains", "contains-all",
	"contains-any", "contains-html", "contains-json", "contains-sql", "contains-xml", "context-faithfulness",
	"context-recall", "context-relevance", "conversation-relevance", "cost", "equals", "factuality", "finish-reason",
	"g-eval", "gleu", "guardrails", "icontains", "icontains-all", "icontains-any", "is-html", "is-json", "is-refusal",
	"is-sql", "is-valid-function-call", "is-valid-openai-function-call", "is-valid-openai-tools-call", "is-xml",
	"javascript", "latency", "levenshtein", "llm-rubric", "pi", "meteor", "model-graded-closedqa",
	"model-graded-factuality", "moderation", "perplexity", "perplexity-score", "python", "regex", "rouge-n", "ruby",
	"similar", "similar:cosine", "similar:dot", "similar:euclidean", "starts-with", "skill-used",
	"trajectory:goal-success", "trajectory:tool-args-match", "trajectory:step-count", "trajectory:tool-sequence",
	"trajectory:tool-used", "trace-error-spans", "trace-span-count", "trace-span-duration", "search-rubric", "webhook",
	"word-count", "select-best", "human", "max-score", "assert-set"}

var expectedRE = regexp.MustCompile(`^(not-)?(` + strings.Join(quoteMeta(promptfooTypes), "|") + `)(?:\((\d+(?:\.\d+)?)\))?(?::([\s\S]*))?$`)

func quoteMeta(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = regexp.QuoteMeta(x)
	}
	return out
}

// expectedAssertion reads an __expected cell as promptfoo's
// assertionFromString: fn:, eval: and javascript: are javascript, grade:
// and llm-rubric: a rubric, [not-]TYPE[(THRESHOLD)][:VALUE] that type (a
// list type's value split on commas; levenshtein and starts-with with the
// threshold 0.75 unless given), anything else an equals.
func expectedAssertion(cell string) (map[string]any, error) {
	for _, p := range []string{"javascript:", "fn:", "eval:"} {
		if v, ok := strings.CutPrefix(cell, p); ok {
			return map[string]any{"type": "javascript", "value": strings.TrimSpace(v)}, nil
		}
	}
	for _, p := range []string{"grade:", "llm-rubric:"} {
		if v, ok := strings.CutPrefix(cell, p); ok {
			return map[string]any{"type": "llm-rubric", "value": v}, nil
		}
	}
	if strings.HasPrefix(cell, "python:") || strings.HasPrefix(cell, "file://") {
		t, _, _ := strings.Cut(cell, ":")
		return nil, fmt.Errorf("%q: %s assertions are not supported", cell, t)
	}
	m := expectedRE.FindStringSubmatch(cell)
	if m == nil {
		return map[string]any{"type": "equals", "value": cell}, nil
	}
	typ := m[2]
	if m[1] != "" {
		typ = "not-" + typ
	}
	a := map[string]any{"type": typ}
	hasValue := strings.Contains(cell[len(m[1])+len(m[2]):], ":")
	switch m[2] {
	case "contains-all", "contains-any", "icontains-all", "icontains-any":
		if hasValue && m[4] != "" {
			list, err := splitValues(m[4])
			if err != nil {
				return nil, fmt.Errorf("%q: %w", cell, err)
			}
			vals := make([]any, len(list))
			for i, v := range list {
				vals[i] = v
			}
			a["value"] = vals
		} else if hasValue {
			a["value"] = m[4]
		}
	case "contains-json", "is-json":
		if hasValue {
			a["value"] = m[4]
		}
	case "levenshtein", "starts-with":
		if hasValue {
			a["value"] = strings.TrimSpace(m[4])
		}
		a["threshold"] = 0.75
		if m[3] != "" {
			f, _ := strconv.ParseFloat(m[3], 64)
			a["threshold"] = f
		}
	default:
		if hasValue {
			a["value"] = strings.TrimSpace(m[4])
		}
	}
	return a, nil
}

func testOf(m map[string]any, where string) (Test, error) {
	var t Test
	for _, k := range sortedKeys(m) {
		if !slices.Contains(testKeys, k) {
			return t, fmt.Errorf("%s.%s: is not supported (%s)", where, k, strings.Join(testKeys, ", "))
		}
	}
	t.Description, _ = m["description"].(string)
	if v, ok := m["vars"]; ok {
		vars, ok := v.(map[string]any)
		if !ok {
			return t, fmt.Errorf("%s.vars: want a mapping", where)
		}
		for k, x := range vars {
			if s, ok := x.(string); ok && strings.HasPrefix(s, "file://") {
				return t, fmt.Errorf("%s.vars.%s: file:// vars are not supported", where, k)
			}
		}
		t.Vars = vars
	}
	if v, ok := m["threshold"]; ok {
		f, ok := number(v)
		if !ok {
			return t, fmt.Errorf("%s.threshold: want a number", where)
		}
		t.Threshold = &f
	}
	if v, ok := m["options"]; ok {
		f, err := optionsOf(v, where+".options")
		if err != nil {
			return t, err
		}
		t.Factuality = f
	}
	if v, ok := m["assert"]; ok {
		list, ok := v.([]any)
		if !ok {
			return t, fmt.Errorf("%s.assert: want a list", where)
		}
		for i, a := range list {
			as, err := assertionOf(a)
			if err != nil {
				return t, fmt.Errorf("%s.assert[%d]: %w", where, i, err)
			}
			t.Assert = append(t.Assert, as)
		}
	}
	return t, nil
}

func assertionOf(v any) (Assertion, error) {
	a := Assertion{Weight: 1}
	m, ok := v.(map[string]any)
	if !ok {
		return a, errors.New("want a mapping with type")
	}
	for _, k := range sortedKeys(m) {
		if k == "provider" || k == "rubricPrompt" {
			return a, fmt.Errorf("%s: is not supported (a judged assertion is graded by the run's judge panel, --judge judge=MODEL, with benchline's prompts)", k)
		}
		if !slices.Contains(assertKeys, k) {
			return a, fmt.Errorf("%s: is not supported (%s)", k, strings.Join(assertKeys, ", "))
		}
	}
	a.Type, _ = m["type"].(string)
	base := strings.TrimPrefix(a.Type, "not-")
	if !slices.Contains(Types, base) && !slices.Contains(Judged, base) {
		return a, fmt.Errorf("type: %q is not supported (benchline grades %s and their not- forms, and the judged %s)", a.Type, strings.Join(Types, ", "), strings.Join(Judged, ", "))
	}
	if base != a.Type && base != "llm-rubric" && slices.Contains(Judged, base) {
		return a, fmt.Errorf("type: %q is not supported (promptfoo's %s ignores not-, grading it as %s: write %s, or llm-rubric with a negated rubric)", a.Type, base, base, base)
	}
	a.Value = m["value"]
	if slices.Contains(Judged, base) {
		if _, ok := a.Value.(string); !ok {
			return a, fmt.Errorf("value: %s wants a string (the rubric, criterion or expert answer)", base)
		}
	}
	if w, ok := m["weight"]; ok {
		f, ok := number(w)
		if !ok || f < 0 {
			return a, errors.New("weight: want a number, 0 or more")
		}
		a.Weight = f
	}
	if th, ok := m["threshold"]; ok {
		f, ok := number(th)
		if !ok {
			return a, errors.New("threshold: want a number")
		}
		a.Threshold = &f
	}
	a.Metric, _ = m["metric"].(string)
	return a, nil
}

// factualityKeys are options.factuality's keys, in promptfoo's order of
// the categories (A) to (E).
var factualityKeys = []string{"subset", "superset", "agree", "disagree", "differButFactual"}

// optionsOf reads a test's options: factuality's category scores only.
// A grader (provider) or grading prompt (rubricPrompt) is refused: the
// run's judge panel grades, with benchline's prompts.
func optionsOf(v any, where string) (map[string]float64, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: want a mapping", where)
	}
	var out map[string]float64
	for _, k := range sortedKeys(m) {
		if k != "factuality" {
			return nil, fmt.Errorf("%s.%s: is not supported (options reads factuality only; the run's judge panel grades, --judge judge=MODEL, with benchline's prompts)", where, k)
		}
		f, ok := m[k].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s.factuality: want a mapping of %s to scores", where, strings.Join(factualityKeys, ", "))
		}
		out = map[string]float64{}
		for _, c := range sortedKeys(f) {
			if !slices.Contains(factualityKeys, c) {
				return nil, fmt.Errorf("%s.factuality.%s: is not a category (%s)", where, c, strings.Join(factualityKeys, ", "))
			}
			n, ok := number(f[c])
			if !ok {
				return nil, fmt.Errorf("%s.factuality.%s: want a number", where, c)
			}
			out[c] = n
		}
	}
	return out, nil
}

func listOf(v any) ([]any, error) {
	switch t := v.(type) {
	case nil:
		return nil, nil
	case []any:
		return t, nil
	case string, map[string]any:
		return []any{t}, nil
	}
	return nil, errors.New("want a list")
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// DirReader reads file:// paths relative to dir, at most MaxFileBytes
// each; paths leaving dir are refused.
func DirReader(dir string) ReadFile {
	return func(rel string) ([]byte, error) {
		if filepath.IsAbs(rel) || !filepath.IsLocal(rel) {
			return nil, fmt.Errorf("file://%s: only paths inside the config's folder are read", rel)
		}
		f, err := os.Open(filepath.Join(dir, rel))
		if err != nil {
			return nil, err
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
		if err != nil {
			return nil, err
		}
		if len(b) > MaxFileBytes {
			return nil, fmt.Errorf("file://%s: more than %d bytes, the limit", rel, MaxFileBytes)
		}
		return b, nil
	}
}
