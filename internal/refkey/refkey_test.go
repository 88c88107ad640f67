package refkey

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"

	"github.com/benchline/benchline/internal/golden"
)

var update = flag.Bool("update", false, "update golden files")

func msg(role, content string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: role, Content: content}
}

func call(name, args string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{
		{ID: "c1", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: name, Arguments: args}}}}
}

func tool(name string, params any) openai.Tool {
	return openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: name, Parameters: params}}
}

const (
	user   = openai.ChatMessageRoleUser
	system = openai.ChatMessageRoleSystem
)

func TestConversationSameAndDifferent(t *testing.T) {
	base := []openai.ChatCompletionMessage{msg(user, "What is the weather in Paris?")}
	tests := []struct {
		name  string
		other []openai.ChatCompletionMessage
		same  bool
	}{
		{"identical", []openai.ChatCompletionMessage{msg(user, "What is the weather in Paris?")}, true},
		{"a system prompt is ignored", []openai.ChatCompletionMessage{msg(system, "Be brief."), msg(user, "What is the weather in Paris?")}, true},
		{"a developer prompt is ignored", []openai.ChatCompletionMessage{msg(openai.ChatMessageRoleDeveloper, "x"), msg(user, "What is the weather in Paris?")}, true},
		{"whitespace is collapsed", []openai.ChatCompletionMessage{msg(user, "  What is the\n weather in\tParis? ")}, true},
		{"text parts read as text", []openai.ChatCompletionMessage{{Role: user, MultiContent: []openai.ChatMessagePart{
			{Type: openai.ChatMessagePartTypeText, Text: "What is the weather"}, {Type: openai.ChatMessagePartTypeText, Text: "in Paris?"}}}}, true},
		{"another question", []openai.ChatCompletionMessage{msg(user, "What is the weather in Oslo?")}, false},
		{"another role", []openai.ChatCompletionMessage{msg(openai.ChatMessageRoleAssistant, "What is the weather in Paris?")}, false},
		{"an earlier turn", []openai.ChatCompletionMessage{msg(user, "hi"), msg(user, "What is the weather in Paris?")}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.same, Conversation(base) == Conversation(tc.other))
		})
	}
}

func TestToolCallArgumentsNormalized(t *testing.T) {
	a := Conversation([]openai.ChatCompletionMessage{call("f", `{"x": 1, "y": [2, 3]}`)})
	assert.Equal(t, a, Conversation([]openai.ChatCompletionMessage{call("f", `{"y":[2,3],"x":1}`)}), "key order and spacing")
	assert.NotEqual(t, a, Conversation([]openai.ChatCompletionMessage{call("f", `{"x": 2, "y": [2, 3]}`)}), "another value")
	assert.NotEqual(t, a, Conversation([]openai.ChatCompletionMessage{call("g", `{"x": 1, "y": [2, 3]}`)}), "another function")
	bad := Conversation([]openai.ChatCompletionMessage{call("f", `{"x": `)})
	assert.NotEqual(t, bad, Conversation([]openai.ChatCompletionMessage{call("f", `{"x": 1}`)}), "invalid JSON is hashed as written")
}

func TestKindsOfKeyAreApart(t *testing.T) {
	msgs := []openai.ChatCompletionMessage{msg(user, "Set a timer")}
	keys := map[string]string{
		"Conversation": Conversation(msgs),
		"Reward":       Reward(msgs),
		"WithTools":    WithTools(msgs, ToolsHash(nil)),
	}
	seen := map[string]string{}
	for name, k := range keys {
		assert.Len(t, k, 64, name)
		if other, dup := seen[k]; dup {
			t.Errorf("%s and %s give the same key", name, other)
		}
		seen[k] = name
	}
}

func TestToolsHash(t *testing.T) {
	weather := tool("get_weather", map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}})
	forecast := tool("get_forecast", map[string]any{"type": "object"})
	tests := []struct {
		name string
		a, b []openai.Tool
		same bool
	}{
		{"order does not matter", []openai.Tool{weather, forecast}, []openai.Tool{forecast, weather}, true},
		{"a schema given as spaced JSON text hashes as the map", []openai.Tool{forecast},
			[]openai.Tool{tool("get_forecast", json.RawMessage(`{ "type" : "object" }`))}, true},
		{"another tool set", []openai.Tool{weather}, []openai.Tool{weather, forecast}, false},
		{"another schema", []openai.Tool{forecast}, []openai.Tool{tool("get_forecast", map[string]any{"type": "array"})}, false},
		{"no tools is not one tool", nil, []openai.Tool{forecast}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.same, ToolsHash(tc.a) == ToolsHash(tc.b))
		})
	}
}

func TestLastUser(t *testing.T) {
	assert.Empty(t, LastUser(nil))
	assert.Empty(t, LastUser([]openai.ChatCompletionMessage{msg(system, "x")}))
	conv := []openai.ChatCompletionMessage{msg(user, "first"), msg(openai.ChatMessageRoleAssistant, "ok"), msg(user, "second"), call("f", "{}")}
	assert.Equal(t, Conversation([]openai.ChatCompletionMessage{msg(user, "second")}), LastUser(conv))
}

// TestGolden pins the keys themselves: references stored by key (the
// "key" lines of a references file) are found only while they stay the
// same.
func TestGolden(t *testing.T) {
	conv := []openai.ChatCompletionMessage{msg(system, "Be brief."), msg(user, "What is the weather in Paris?"),
		call("get_weather", `{"city": "Paris"}`), {Role: openai.ChatMessageRoleTool, ToolCallID: "c1", Content: "sunny"}}
	tools := []openai.Tool{tool("get_weather", map[string]any{"type": "object"})}
	var b strings.Builder
	fmt.Fprintf(&b, "Conversation %s\n", Conversation(conv))
	fmt.Fprintf(&b, "Reward %s\n", Reward(conv))
	fmt.Fprintf(&b, "ToolsHash %s\n", ToolsHash(tools))
	fmt.Fprintf(&b, "WithTools %s\n", WithTools(conv, ToolsHash(tools)))
	fmt.Fprintf(&b, "LastUser %s\n", LastUser(conv))
	path := filepath.Join("testdata", "keys.golden")
	golden.Check(t, path, b.String(), *update, "")
}

// TestNormalizeIsFieldsJoined checks the one-pass normalize against its
// definition, strings.Join(strings.Fields(s), " "), on edge cases and on
// random strings of ASCII and Unicode spaces, words and invalid UTF-8: keys
// written before it must still be found.
func TestNormalizeIsFieldsJoined(t *testing.T) {
	cases := []string{"", " ", "a", " a ", "a  b", "\ta\nb\r\n", "\u00a0x\u3000y\u2028", "\u0085z", "a\xffb", "\xff \xfe", "x\u00a0", "\v\f"}
	parts := []string{" ", "\t", "\n", "\u00a0", "\u3000", "\u2029", "\u0085", "\xff", "\xe2\x80", "ab", "é", "z", "\ufffd"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(parts[r.IntN(len(parts))])
		}
		cases = append(cases, b.String())
	}
	for _, s := range cases {
		if got, want := normalize(s), strings.Join(strings.Fields(s), " "); got != want {
			t.Fatalf("normalize(%q) = %q, want %q", s, got, want)
		}
	}
}

func BenchmarkConversation(b *testing.B) {
	msgs := []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: "You are a helpful assistant."},
		{Role: openai.ChatMessageRoleUser, Content: strings.Repeat("Which of these   answers is right,\nand why? ", 8)},
	}
	b.ReportAllocs()
	for b.Loop() {
		Conversation(msgs)
	}
}
