package promptfoo

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func parseIn(t *testing.T, files map[string]string) (*Config, error) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return Parse("promptfooconfig.yaml", []byte(files["promptfooconfig.yaml"]), DirReader(dir))
}

const okHead = "prompts: ['{{q}}']\nproviders: [openai:chat:m]\n"

// TestBadConfigs: what benchline does not run fails at once, naming the key.
func TestBadConfigs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"top key", map[string]string{"promptfooconfig.yaml": okHead + "scenarios: []\ntests: [{vars: {q: x}}]"}, "scenarios: is not supported"},
		{"provider", map[string]string{"promptfooconfig.yaml": "prompts: [x]\nproviders: [anthropic:messages:claude]\n"}, `providers[0]: "anthropic:messages:claude" is not supported`},
		{"provider config", map[string]string{"promptfooconfig.yaml": "prompts: [x]\nproviders: [{id: 'openai:chat:m', config: {organization: o}}]\n"}, "config.organization is not supported"},
		{"tool without a name", map[string]string{"promptfooconfig.yaml": "prompts: ['{{q}}']\nproviders: [{id: 'openai:chat:m', config: {tools: [{type: function, function: {description: d}}]}}]\ntests: [{vars: {q: x}}]"}, "providers[0]: config.tools[0].function.name: is required"},
		{"assertion type", map[string]string{"promptfooconfig.yaml": okHead + "tests: [{assert: [{type: similar, value: x}]}]"}, `tests[0].assert[0]: type: "similar" is not supported`},
		{"judged not- form", map[string]string{"promptfooconfig.yaml": okHead + "tests: [{assert: [{type: not-factuality, value: x}]}]"}, `tests[0].assert[0]: type: "not-factuality" is not supported (promptfoo's factuality ignores not-`},
		{"grader", map[string]string{"promptfooconfig.yaml": okHead + "tests: [{assert: [{type: llm-rubric, value: x, provider: 'openai:chat:g'}]}]"}, "tests[0].assert[0]: provider: is not supported (a judged assertion is graded by the run's judge panel"},
		{"rubric prompt", map[string]string{"promptfooconfig.yaml": okHead + "tests: [{options: {rubricPrompt: x}, vars: {q: x}}]"}, "tests[0].options.rubricPrompt: is not supported"},
		{"factuality option", map[string]string{"promptfooconfig.yaml": okHead + "defaultTest: {options: {factuality: {agreed: 1}}}\ntests: [{vars: {q: x}}]"}, "defaultTest.options.factuality.agreed: is not a category"},
		{"judged value", map[string]string{"promptfooconfig.yaml": okHead + "tests: [{assert: [{type: model-graded-closedqa, value: [x]}]}]"}, "tests[0].assert[0]: value: model-graded-closedqa wants a string"},
		{"assertion key", map[string]string{"promptfooconfig.yaml": okHead + "tests: [{assert: [{type: contains, value: x, transform: output}]}]"}, "tests[0].assert[0]: transform: is not supported"},
		{"test key", map[string]string{"promptfooconfig.yaml": okHead + "tests: [{provider: x, vars: {q: x}}]"}, "tests[0].provider: is not supported"},
		{"default test key", map[string]string{"promptfooconfig.yaml": okHead + "defaultTest: {provider: x}\ntests: [{vars: {q: x}}]"}, "defaultTest.provider: is not supported"},
		{"csv column", map[string]string{"promptfooconfig.yaml": okHead + "tests: file://t.csv", "t.csv": "q,__prefix\nx,y\n"}, "column __prefix is not supported"},
		{"csv python", map[string]string{"promptfooconfig.yaml": okHead + "tests: file://t.csv", "t.csv": "q,__expected\nx,python: output\n"}, "python assertions are not supported"},
		{"csv unsupported type", map[string]string{"promptfooconfig.yaml": okHead + "tests: file://t.csv", "t.csv": "q,__expected\nx,similar(0.8):hello\n"}, `type: "similar" is not supported`},
		{"prompt function", map[string]string{"promptfooconfig.yaml": "prompts: ['file://p.js:make']\nproviders: [openai:chat:m]\n"}, "a prompt function (make)"},
		{"tests file type", map[string]string{"promptfooconfig.yaml": okHead + "tests: file://t.txt", "t.txt": "x"}, "test files are .csv, .yaml or .json"},
		{"file outside", map[string]string{"promptfooconfig.yaml": okHead + "tests: file://../t.csv"}, "only paths inside the config's folder"},
		{"file var", map[string]string{"promptfooconfig.yaml": okHead + "tests: [{vars: {q: 'file://q.txt'}}]"}, "tests[0].vars.q: file:// vars are not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseIn(t, tc.files)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want one with %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), "promptfooconfig.yaml") {
				t.Errorf("err = %v does not name the file", err)
			}
		})
	}
}

// TestPromptsAsPromptfoo: a JSON prompt is a chat whose strings are
// rendered (vars need no escaping); a prompt that renders to other JSON is
// refused, as promptfoo would send it as the messages.
func TestPromptsAsPromptfoo(t *testing.T) {
	cfg, err := parseIn(t, map[string]string{
		"promptfooconfig.yaml": "prompts: ['file://chat.json', '{{q}}']\nproviders: [openai:chat:m]\ntests: [{vars: {q: \"say \\\"hi\\\"\\n\"}}]",
		"chat.json":            `[{"role": "system", "content": "be brief"}, {"role": "user", "content": "{{ q }}"}]`,
	})
	if err != nil {
		t.Fatal(err)
	}
	ss, err := cfg.Samples()
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 2 || len(ss[0].Messages) != 2 || ss[0].Messages[1].Content != `say "hi"` || ss[1].Messages[0].Content != `say "hi"` {
		t.Fatalf("samples = %+v", ss)
	}
	cfg, err = parseIn(t, map[string]string{"promptfooconfig.yaml": "prompts: ['{{q}}']\nproviders: [openai:chat:m]\ntests: [{vars: {q: '42'}}]"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.Samples(); err == nil || !strings.Contains(err.Error(), "prompts[0]: tests[0]: the rendered prompt is JSON but not a list of chat messages") {
		t.Fatalf("err = %v", err)
	}
}

// TestJavaScriptBounds: the engine stops a script past its time limit and
// offers no I/O.
func TestJavaScriptBounds(t *testing.T) {
	old := JSTimeout
	JSTimeout = 200 * time.Millisecond
	defer func() { JSTimeout = old }()
	for _, tc := range []struct {
		name, code, want string
	}{
		{"endless loop", "while (true) {}\nreturn true", "ran longer than"},
		{"require", "require('fs').readFileSync('/etc/passwd')", "require is not defined"},
		{"process has no env", "process.env.HOME", "Cannot read property"},
		{"fetch", "fetch('http://example.com')", "fetch is not defined"},
		{"too big", strings.Repeat(" ", MaxJSBytes) + "true", "more than"},
		{"not a verdict", "'yes'", "must return a boolean, number, or GradingResult"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			test := Test{Assert: []Assertion{{Type: "javascript", Value: tc.code, Weight: 1}}}
			done := make(chan Result, 1)
			go func() { done <- Grade(test, Provider{}, Sample{}, Output{Text: "x"}) }()
			select {
			case r := <-done:
				if r.Pass || r.Score != 0 || !strings.Contains(r.Components[0].Reason, tc.want) {
					t.Fatalf("result = %+v, want a failure with %q", r, tc.want)
				}
			case <-time.After(2 * time.Minute): // a deadline against a hang, not a timing check
				t.Fatal("the script was not stopped")
			}
		})
	}
}

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		want bool
	}{
		{"prompts: [x]\nproviders: [openai:chat:m]\ntests: []", true},
		{"prompts: [x]\ntests: []", true},
		{"name: t\ndata: {test: d.jsonl}\nprompt: {messages: []}\nscorers: []", false},
		{"prompts: [x]\nscorers: []\ntests: []", false},
		{"- a\n- b", false},
	} {
		if got := Detect([]byte(tc.doc)); got != tc.want {
			t.Errorf("Detect(%q) = %v, want %v", tc.doc, got, tc.want)
		}
	}
}
