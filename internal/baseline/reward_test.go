package baseline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/benchline/benchline/internal/refkey"
	"github.com/benchline/benchline/internal/toolcall"
)

// postPooling sends a pooling request over HTTP and decodes the reply.
func postPooling(t *testing.T, url string, body any) (int, map[string]any, http.Header) {
	t.Helper()
	return postJSON(t, url+"/pooling", body)
}

func postJSON(t *testing.T, url string, body any) (int, map[string]any, http.Header) {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(raw, &out), string(raw))
	return resp.StatusCode, out, resp.Header
}

func scoreOf(t *testing.T, out map[string]any) float64 {
	t.Helper()
	data := out["data"].([]any)
	require.Len(t, data, 1)
	item := data[0].(map[string]any)
	assert.Equal(t, "pooling", item["object"])
	v := item["data"].([]any)
	require.Len(t, v, 1)
	return v[0].(float64)
}

func withReply(msgs []openai.ChatCompletionMessage, reply openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
	reply.Role = openai.ChatMessageRoleAssistant
	return append(append([]openai.ChatCompletionMessage(nil), msgs...), reply)
}

func TestRewardReferenceOverHTTP(t *testing.T) {
	refs := testRefs()
	// A reward reference for a conversation with a system prompt (ignored
	// by the key) and two expected calls.
	conv := []openai.ChatCompletionMessage{{Role: "system", Content: "tools: ..."}, {Role: "user", Content: "Play jazz for 20 minutes, then rock for 10."}}
	refs.AddReward(conv[1:], Reference{Content: "<tool_call>\n{\"name\": \"play\", \"arguments\": {\"genre\": \"jazz\", \"minutes\": 20}}\n</tool_call>\n" +
		"<tool_call>\n{\"name\": \"play\", \"arguments\": {\"genre\": \"rock\", \"minutes\": 10}}\n</tool_call>"})
	_, _, hs := newTestServer(t, Options{References: refs})
	hermes := func(calls ...string) openai.ChatCompletionMessage {
		return openai.ChatCompletionMessage{Content: "<tool_call>\n" + strings.Join(calls, "\n</tool_call>\n<tool_call>\n") + "\n</tool_call>"}
	}
	jazz, rock := `{"name": "play", "arguments": {"genre": "jazz", "minutes": 20}}`, `{"name": "play", "arguments": {"minutes": 10, "genre": "rock"}}`
	for _, tc := range []struct {
		name  string
		msgs  []openai.ChatCompletionMessage
		model string
		want  float64
	}{
		{"both calls, any order and key order", withReply(conv, hermes(rock, jazz)), "reward-reference", 1},
		{"one call missing", withReply(conv, hermes(jazz)), "reward-reference", 0.5},
		{"a wrong value", withReply(conv, hermes(jazz, `{"name": "play", "arguments": {"genre": "rock", "minutes": 11}}`)), "reward-reference", (1 + 0.25 + 0.75*0.5) / 2},
		{"int for float is another value", withReply(conv, hermes(jazz, `{"name": "play", "arguments": {"genre": "rock", "minutes": 10.0}}`)), "reward-reference", (1 + 0.25 + 0.75*0.5) / 2},
		{"no call", withReply(conv, openai.ChatCompletionMessage{Content: "Which genre first?"}), "reward-reference", 0},
		{"openai tool_calls", withReply(user("What is the weather in Paris for 3 days?"), openai.ChatCompletionMessage{ToolCalls: []openai.ToolCall{
			{Type: "function", Function: openai.FunctionCall{Name: "get_weather", Arguments: `{"days":3,"city":"Paris"}`}}}}), "baseline/reward-reference", 1},
		{"chat reference, an extra argument", withReply(user("What is the weather in Paris for 3 days?"), openai.ChatCompletionMessage{ToolCalls: []openai.ToolCall{
			{Type: "function", Function: openai.FunctionCall{Name: "get_weather", Arguments: `{"days":3,"city":"Paris","unit":"C"}`}}}}), "reward-reference", 0.25 + 0.75*2/3},
		{"text reference, text reply", withReply(user("What is 2+2?"), openai.ChatCompletionMessage{Content: "5"}), "reward-reference", 1},
		{"no reference", withReply(user("Unknown question"), hermes(jazz)), "reward-reference", 0},
		{"length", withReply(conv, openai.ChatCompletionMessage{Content: "abc"}), "reward-length", 3},
		{"noisy 0 is the reference", withReply(conv, hermes(jazz)), "reward-noisy-0", 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out, h := postPooling(t, hs.URL, map[string]any{"model": tc.model, "messages": tc.msgs, "encoding_format": "float", "use_activation": false})
			require.Equal(t, http.StatusOK, status, out)
			assert.InDelta(t, tc.want, scoreOf(t, out), 1e-12)
			assert.Equal(t, "true", h.Get(BaselineHeader))
			assert.Equal(t, "list", out["object"])
			assert.True(t, strings.HasPrefix(out["model"].(string), "baseline/"), out["model"])
			assert.Positive(t, out["usage"].(map[string]any)["prompt_tokens"])
		})
	}
}

func TestRewardNoisyIsDeterministicAndNoisy(t *testing.T) {
	_, _, hs := newTestServer(t, Options{Seed: 3})
	changed := 0
	for i := range 40 {
		msgs := withReply(user("What is the weather in Paris for 3 days?"), openai.ChatCompletionMessage{ToolCalls: []openai.ToolCall{
			{Type: "function", Function: openai.FunctionCall{Name: "get_weather", Arguments: fmt.Sprintf(`{"city":"Paris","days":%d}`, i+1)}}}})
		_, ref, _ := postPooling(t, hs.URL, map[string]any{"model": "reward-reference", "messages": msgs})
		if i == 2 {
			assert.Equal(t, 1.0, scoreOf(t, ref), "the reference call")
		}
		_, a, _ := postPooling(t, hs.URL, map[string]any{"model": "reward-noisy-0.5", "messages": msgs})
		_, b, _ := postPooling(t, hs.URL, map[string]any{"model": "reward-noisy-0.5", "messages": msgs})
		assert.Equal(t, scoreOf(t, a), scoreOf(t, b), "same request, same score")
		if scoreOf(t, a) != scoreOf(t, ref) {
			changed++
		}
	}
	assert.Greater(t, changed, 5, "about half the scores are redrawn")
	assert.Less(t, changed, 35)
}

func TestRewardRequestErrors(t *testing.T) {
	s, _, hs := newTestServer(t, Options{MaxContextTokens: 50})
	reply := withReply(user("What is 2+2?"), openai.ChatCompletionMessage{Content: "4"})
	for _, tc := range []struct {
		name   string
		body   map[string]any
		status int
		want   string
	}{
		{"chat model", map[string]any{"model": "reference", "messages": reply}, http.StatusNotFound, "not a reward model"},
		{"unknown model", map[string]any{"model": "gpt-4o", "messages": reply}, http.StatusNotFound, "unknown model"},
		{"input form", map[string]any{"model": "reward-reference", "input": "text"}, http.StatusBadRequest, "send messages"},
		{"no messages", map[string]any{"model": "reward-reference"}, http.StatusBadRequest, "must not be empty"},
		{"last is not the reply", map[string]any{"model": "reward-reference", "messages": user("What is 2+2?")}, http.StatusBadRequest, "assistant reply"},
		{"other task", map[string]any{"model": "reward-reference", "messages": reply, "task": "embed"}, http.StatusBadRequest, "task"},
		{"base64", map[string]any{"model": "reward-reference", "messages": reply, "encoding_format": "base64"}, http.StatusBadRequest, "encoding_format"},
		{"too long", map[string]any{"model": "reward-reference", "messages": withReply(user(strings.Repeat("long ", 100)), openai.ChatCompletionMessage{Content: "x"})}, http.StatusBadRequest, "context_length"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out, _ := postPooling(t, hs.URL, tc.body)
			assert.Equal(t, tc.status, status)
			b, _ := json.Marshal(out)
			assert.Contains(t, string(b), tc.want)
		})
	}
	assert.Positive(t, s.Stats().BadRequests)

	// A reward model has no chat completions.
	status, out, _ := postJSON(t, hs.URL+"/v1/chat/completions", map[string]any{"model": "reward-reference", "messages": user("hi")})
	assert.Equal(t, http.StatusNotFound, status)
	b, _ := json.Marshal(out)
	assert.Contains(t, string(b), "POST /pooling")
}

func TestRewardFaultsAndLoadJSONL(t *testing.T) {
	_, _, hs := newTestServer(t, Options{})
	b, _ := json.Marshal(map[string]any{"model": "reward-length", "messages": withReply(user("q"), openai.ChatCompletionMessage{Content: "a"})})
	req, _ := http.NewRequest(http.MethodPost, hs.URL+"/pooling", bytes.NewReader(b))
	req.Header.Set(FaultHeader, "rate_limit=1,retry_after=2s")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, "2", resp.Header.Get("Retry-After"))

	refs, err := LoadJSONL(strings.NewReader(`{"reward": true, "prompt": "Set a timer", "reference": {"tool_calls": [{"name": "timer", "arguments": {"minutes": 5}}]}}` + "\n"))
	require.NoError(t, err)
	ref, ok := refs.Lookup(refkey.Reward(user("Set a timer")))
	require.True(t, ok)
	assert.Equal(t, "timer", ref.ToolCalls[0].Name)
	_, ok = refs.Lookup(refkey.Conversation(user("Set a timer")))
	assert.False(t, ok, "a reward reference does not answer chat requests")
}

func TestAgreement(t *testing.T) {
	call := func(s string) toolcall.Call {
		c, err := toolcall.ParseHermes("<tool_call>" + s + "</tool_call>")
		require.NoError(t, err)
		return c[0]
	}
	a, b := call(`{"name": "f", "arguments": {"x": 1, "y": [1, {"k": "v"}]}}`), call(`{"name": "g", "arguments": {}}`)
	assert.Equal(t, 1.0, Agreement(nil, nil))
	assert.Equal(t, 0.0, Agreement([]toolcall.Call{a}, nil))
	assert.Equal(t, 0.0, Agreement(nil, []toolcall.Call{a}))
	assert.Equal(t, 1.0, Agreement([]toolcall.Call{a, b}, []toolcall.Call{b, call(`{"name": "f", "arguments": {"y": [1, {"k": "v"}], "x": 1}}`)}))
	assert.Equal(t, 0.0, CallAgreement(a, b))
	assert.Equal(t, 1.0, CallAgreement(b, b), "no arguments on either side")
	assert.InDelta(t, 0.25+0.75*0.5, CallAgreement(a, call(`{"name": "f", "arguments": {"x": 1, "y": [1, {"k": "w"}]}}`)), 1e-12)
	assert.InDelta(t, 0.5, Agreement([]toolcall.Call{a, b}, []toolcall.Call{a}), 1e-12)
	assert.InDelta(t, 1.0/3, Agreement([]toolcall.Call{a}, []toolcall.Call{a, b, b}), 1e-12)
}
