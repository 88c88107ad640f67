package baseline

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/benchline/benchline/internal/refkey"
	"github.com/benchline/benchline/scorers"
)

// TestLoadEngineReferences reads lines as the engine writes them (JSON of
// scorers.Reference): plain, with tools (found under both keys) and reward
// references (only under the reward key).
func TestLoadEngineReferences(t *testing.T) {
	msgs := user("Weather in Oslo?")
	tools := []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "get_weather"}}}
	lines := []scorers.Reference{
		{Messages: user("2+2?"), Content: "4"},
		{Messages: msgs, ToolsHash: refkey.ToolsHash(tools), ToolCalls: []scorers.ToolCall{{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)}}},
		{Messages: user("rate this"), Reward: true, Content: "the reference reply"},
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	for _, l := range lines {
		require.NoError(t, enc.Encode(l))
	}
	refs := NewMemoryReferences()
	n, err := refs.Load(strings.NewReader(b.String()), "task-1.jsonl")
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	ref, ok := refs.Lookup(refkey.Conversation(user("2+2?")))
	require.True(t, ok)
	assert.Equal(t, "4", ref.Content)
	for _, key := range []string{refkey.WithTools(msgs, refkey.ToolsHash(tools)), refkey.Conversation(msgs)} {
		ref, ok = refs.Lookup(key)
		require.True(t, ok)
		assert.Equal(t, "get_weather", ref.ToolCalls[0].Name)
	}
	ref, ok = refs.Lookup(refkey.Reward(user("rate this")))
	require.True(t, ok)
	assert.Equal(t, "the reference reply", ref.Content)
	_, ok = refs.Lookup(refkey.Conversation(user("rate this")))
	assert.False(t, ok, "a reward reference is no chat answer")
}

// TestLoadRejectsUnusableLines checks that a line baseline/reference could
// not answer from is an error naming the file and line, never a silent ""
// answer (finding 7).
func TestLoadRejectsUnusableLines(t *testing.T) {
	cases := []struct{ name, line, want string }{
		{"no answer", `{"messages":[{"role":"user","content":"q"}]}`, "neither content nor tool calls"},
		{"empty hand-written answer", `{"prompt":"q","reference":{}}`, "neither content nor tool calls"},
		{"unknown field", `{"messages":[{"role":"user","content":"q"}],"content":"a","answer":"b"}`, `unknown field "answer"`},
		{"misspelt reference", `{"prompt":"q","reference":{"text":"a"}}`, `unknown field "text"`},
		{"no conversation", `{"content":"a"}`, "no messages"},
		{"two conversations", `{"prompt":"a","key":"b","reference":{"content":"x"}}`, "exactly one of key, prompt and messages"},
		{"tool call without a name", `{"prompt":"q","reference":{"tool_calls":[{"arguments":{}}]}}`, "tool call 1 has no name"},
		{"arguments not an object", `{"prompt":"q","reference":{"tool_calls":[{"name":"f","arguments":"x=1"}]}}`, "arguments must be a JSON object"},
		{"truncated", `{"prompt":"q","reference":{"content":"a"`, "unexpected end of JSON"},
		{"two values", `{"prompt":"q","reference":{"content":"a"}} {}`, "after top-level value"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := `{"prompt":"fine","reference":{"content":"ok"}}` + "\n\n" + tc.line + "\n"
			_, err := NewMemoryReferences().Load(strings.NewReader(in), "refs.jsonl")
			require.Error(t, err)
			assert.True(t, errors.Is(err, ErrBadReferences), "%v", err)
			assert.Contains(t, err.Error(), "refs.jsonl:3: ")
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	t.Run("line too long", func(t *testing.T) {
		in := `{"prompt":"` + strings.Repeat("x", 65<<20) + `","reference":{"content":"a"}}`
		_, err := NewMemoryReferences().Load(strings.NewReader(in), "big.jsonl")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "big.jsonl")
	})
}
