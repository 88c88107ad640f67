package taskfile

import (
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/scorers"
)

// TestReferenceNeedsTarget: baseline/reference answers a row with its
// target; a row without one (a task file naming no target column, as a
// translated promptfoo config or an lm-eval task with a template target)
// has no reference, instead of an empty answer that makes the baseline
// server refuse every reference of the run.
func TestReferenceNeedsTarget(t *testing.T) {
	c, err := Load("t.yaml", []byte("name: t\ndescription: d\nlicense: cc0-1.0\ndata: {test: {path: t.jsonl}}\nprompt:\n  messages: [{role: user, content: \"{{ q }}\"}]\nscorers: [{type: regex, pattern: x}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	tk := NewTask(c)
	msgs := []openai.ChatCompletionMessage{{Role: "user", Content: "q"}}
	for _, tc := range []struct {
		target string
		ok     bool
	}{{"", false}, {"42", true}} {
		ref, ok := tk.Reference(scorers.Sample{ID: "a", Row: &sample{row: TaskRow{ID: "a", Target: tc.target}, messages: msgs}})
		if ok != tc.ok || ok && ref.Content != tc.target {
			t.Errorf("target %q: reference %+v, %v; want ok %v", tc.target, ref, ok, tc.ok)
		}
	}
}
