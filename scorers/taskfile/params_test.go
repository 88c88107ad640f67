package taskfile

import (
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/modelapi"
	openai "github.com/sashabaranov/go-openai"
)

// TestTopP: generation.top_p is the request's top_p unless the run sets
// its own; outside (0, 1] it is refused naming the key.
func TestTopP(t *testing.T) {
	c, err := Load("t.yaml", []byte(base+"generation: {top_p: 0.95, max_tokens: 64}\nscorers: [{type: exact_match}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	task := NewTask(c)
	if p := task.params(modelapi.Params{}); p.TopP != float32(0.95) || p.MaxTokens != 64 {
		t.Errorf("the task file's top_p 0.95: the request has top_p %v, max_tokens %d", p.TopP, p.MaxTokens)
	}
	if p := task.params(modelapi.Params{TopP: 0.5}); p.TopP != 0.5 {
		t.Errorf("the run's top_p 0.5 over the task file's: the request has %v", p.TopP)
	}
	for _, bad := range []string{"0", "1.5", "-0.1"} {
		_, err := Load("t.yaml", []byte(base+"generation: {top_p: "+bad+"}\nscorers: [{type: exact_match}]\n"))
		if err == nil || !strings.Contains(err.Error(), "generation.top_p") {
			t.Errorf("top_p %s: %v, want an error naming generation.top_p", bad, err)
		}
	}
}

// TestReplyPrefix: an assistant message after the user's last one is the
// start of the reply: sent last, after the few-shot examples (which go
// before the user's last message), and left out for a row where it renders
// empty; an assistant message anywhere else last is refused.
func TestReplyPrefix(t *testing.T) {
	const head = "name: t\ndescription: d\ndata:\n  test: {path: a.jsonl}\n  train: {path: b.jsonl}\ncolumns: {target: answer}\nprompt:\n  messages:\n"
	c, err := Load("t.yaml", []byte(head+"    - {role: system, content: S}\n    - {role: user, content: \"Q: {{ question }}\"}\n    - {role: assistant, content: \"{{ prefix }}\"}\n  fewshot: {from: train, n: 1, sampler: first}\nscorers: [{type: exact_match}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	shot := Row{ID: "s", Fields: map[string]any{"question": "one", "answer": "1", "prefix": "P"}}
	for _, tc := range []struct{ prefix, want string }{
		{"The answer is", "system:S user:Q: one assistant:1 user:Q: two assistant:The answer is"},
		{"", "system:S user:Q: one assistant:1 user:Q: two"},
	} {
		msgs, err := c.Messages(Row{ID: "r", Fields: map[string]any{"question": "two", "answer": "2", "prefix": tc.prefix}}, []Row{shot})
		if err != nil {
			t.Fatal(err)
		}
		if g := chatLine(msgs); g != tc.want {
			t.Errorf("prefix %q: the chat is %q, want %q", tc.prefix, g, tc.want)
		}
	}
	for _, bad := range []string{
		"    - {role: assistant, content: A}\n",
		"    - {role: user, content: Q}\n    - {role: assistant, content: A}\n    - {role: assistant, content: B}\n",
		"    - {role: system, content: S}\n    - {role: assistant, content: A}\n",
	} {
		_, err := Load("t.yaml", []byte(head+bad+"scorers: [{type: exact_match}]\n"))
		if err == nil || !strings.Contains(err.Error(), "prompt.messages") || !strings.Contains(err.Error(), "the user's last message") {
			t.Errorf("%q: %v, want a refusal naming prompt.messages", bad, err)
		}
	}
}

// TestOptionalMessages: a message marked optional that renders empty for a
// row is left out of its chat, one not marked is sent empty; the user's
// last message cannot be optional.
func TestOptionalMessages(t *testing.T) {
	const head = "name: t\ndescription: d\ndata:\n  test: {path: a.jsonl}\ncolumns: {target: answer}\nprompt:\n  messages:\n"
	c, err := Load("t.yaml", []byte(head+"    - {role: system, content: \"{{ sys }}\", optional: true}\n    - {role: user, content: \"{{ ex }}\"}\n    - {role: assistant, content: \"{{ ans }}\", optional: true}\n    - {role: user, content: \"{{ q }}\"}\nscorers: [{type: exact_match}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		fields map[string]any
		want   string
	}{
		{map[string]any{"sys": "S", "ex": "E", "ans": "A", "q": "Q"}, "system:S user:E assistant:A user:Q"},
		{map[string]any{"sys": "", "ex": "E", "ans": "", "q": "Q"}, "user:E user:Q"},
		{map[string]any{"sys": "S", "ex": "", "ans": "A", "q": "Q"}, "system:S user: assistant:A user:Q"},
	} {
		msgs, err := c.Messages(Row{ID: "r", Fields: tc.fields}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if g := chatLine(msgs); g != tc.want {
			t.Errorf("%v: the chat is %q, want %q", tc.fields, g, tc.want)
		}
	}
	_, err = Load("t.yaml", []byte(head+"    - {role: user, content: \"{{ q }}\", optional: true}\nscorers: [{type: exact_match}]\n"))
	if err == nil || !strings.Contains(err.Error(), "prompt.messages[0].optional") {
		t.Errorf("an optional last user message: %v, want refused naming prompt.messages[0].optional", err)
	}
}

// chatLine is a chat as "role:content" words joined by spaces.
func chatLine(msgs []openai.ChatCompletionMessage) string {
	var got []string
	for _, m := range msgs {
		got = append(got, m.Role+":"+m.Content)
	}
	return strings.Join(got, " ")
}
