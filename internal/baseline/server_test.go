package baseline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/benchline/benchline/internal/refkey"
)

var update = flag.Bool("update", false, "update golden files")

func user(s string) []openai.ChatCompletionMessage {
	return []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: s}}
}

var weatherTool = openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
	Name: "get_weather", Parameters: map[string]any{"type": "object", "properties": map[string]any{
		"city": map[string]any{"type": "string"}, "days": map[string]any{"type": "integer"}}}}}

var forecastTool = openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
	Name: "get_forecast", Parameters: map[string]any{"type": "object"}}}

func testRefs() *MemoryReferences {
	refs := NewMemoryReferences()
	refs.Add(user("What is the weather in Paris for 3 days?"), Reference{ToolCalls: []ToolCall{
		{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris","days":3}`)}}})
	refs.Add(user("What is 2+2?"), Reference{Content: "4"})
	refs.Add(user("Write is_adult(age)."), Reference{Content: "def is_adult(age):\n    return age >= 18\n"})
	refs.Add(user("Which answer is better?"), Reference{Content: "<choice>\n1\n</choice>"})
	return refs
}

func newTestServer(t *testing.T, opts Options) (*Server, *openai.Client, *httptest.Server) {
	t.Helper()
	if opts.References == nil {
		opts.References = testRefs()
	}
	s, err := New(opts)
	require.NoError(t, err)
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	cfg := openai.DefaultConfig("")
	cfg.BaseURL = hs.URL + "/v1"
	return s, openai.NewClientWithConfig(cfg), hs
}

func TestModelsListed(t *testing.T) {
	_, c, _ := newTestServer(t, Options{})
	list, err := c.ListModels(context.Background())
	require.NoError(t, err)
	require.Len(t, list.Models, len(ListedModels))
	for _, m := range list.Models {
		assert.Equal(t, Owner, m.OwnedBy, m.ID)
		_, err := ParseModel(m.ID)
		assert.NoError(t, err)
	}
}

func TestParseModel(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Model
		err  bool
	}{
		{"reference", Model{Kind: KindReference}, false},
		{"baseline/first", Model{Kind: KindFirst}, false},
		{"second", Model{Kind: KindSecond}, false},
		{"noisy-0.25", Model{Kind: KindNoisy, P: 0.25}, false},
		{"baseline/noisy-1", Model{Kind: KindNoisy, P: 1}, false},
		{"reward-reference", Model{Kind: KindRewardReference}, false},
		{"baseline/reward-noisy-0.3", Model{Kind: KindRewardNoisy, P: 0.3}, false},
		{"reward-length", Model{Kind: KindRewardLength}, false},
		{"persona", Model{Kind: KindPersona}, false},
		{"baseline/assistant", Model{Kind: KindAssistant}, false},
		{"user", Model{Kind: KindUser}, false},
		{"baseline/user-3", Model{Kind: KindUser, K: 3}, false},
		{"user-12", Model{Kind: KindUser, K: 12}, false},
		{"user-0", Model{}, true},
		{"user-03", Model{}, true},
		{"user-x", Model{}, true},
		{"reward-noisy-2", Model{}, true},
		{"noisy-1.5", Model{}, true},
		{"noisy-x", Model{}, true},
		{"gpt-4o", Model{}, true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseModel(tc.in)
			if tc.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			again, err := ParseModel(got.ID())
			require.NoError(t, err)
			assert.Equal(t, got, again, "ID round-trips")
		})
	}
}

// TestGolden pins the wire format of each baseline's reply and that replies
// decode with go-openai.
func TestGolden(t *testing.T) {
	seed := 7
	verdict := &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
		JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "verdict", Strict: true, Schema: json.RawMessage(
			`{"type":"object","properties":{"preferred":{"type":"integer","enum":[1,2]},"score":{"type":"number","minimum":0,"maximum":10},"reason":{"type":"string"}},"required":["preferred","score","reason"]}`)}}
	cases := []struct {
		name string
		req  openai.ChatCompletionRequest
	}{
		{"reference_tool_call", openai.ChatCompletionRequest{Model: "reference", Messages: user("What is the weather in Paris for 3 days?"), Tools: []openai.Tool{weatherTool, forecastTool}}},
		{"reference_text", openai.ChatCompletionRequest{Model: "baseline/reference", Messages: user("What is 2+2?")}},
		{"reference_missing", openai.ChatCompletionRequest{Model: "reference", Messages: user("Unknown question")}},
		{"noisy_tool_call", openai.ChatCompletionRequest{Model: "noisy-1", Seed: &seed, N: 4, Messages: user("What is the weather in Paris for 3 days?"), Tools: []openai.Tool{weatherTool, forecastTool}}},
		{"noisy_code", openai.ChatCompletionRequest{Model: "noisy-1", N: 3, Messages: user("Write is_adult(age).")}},
		{"first_choice", openai.ChatCompletionRequest{Model: "first", Messages: user("Which answer is better? [1] a [2] b")}},
		{"second_json_schema", openai.ChatCompletionRequest{Model: "second", Messages: user("Judge."), ResponseFormat: verdict}},
		{"first_json_object", openai.ChatCompletionRequest{Model: "first", Messages: user("Judge."), ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}}},
	}
	_, _, hs := newTestServer(t, Options{})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, again := postOK(t, hs.URL, tc.req), postOK(t, hs.URL, tc.req)
			require.Equal(t, string(got), string(again), "answers must be a pure function of the request")
			var resp openai.ChatCompletionResponse
			require.NoError(t, json.Unmarshal(got, &resp), "reply must decode with go-openai")
			assert.True(t, strings.HasPrefix(resp.Model, "baseline/"))
			var pretty bytes.Buffer
			require.NoError(t, json.Indent(&pretty, got, "", "  "))
			path := filepath.Join("testdata", tc.name+".golden.json")
			if *update {
				require.NoError(t, os.WriteFile(path, append(pretty.Bytes(), '\n'), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test -update")
			assert.Equal(t, strings.TrimSpace(string(want)), strings.TrimSpace(pretty.String()))
		})
	}
}

func postOK(t *testing.T, url string, req openai.ChatCompletionRequest) []byte {
	t.Helper()
	resp, err := post(t, url, "", req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return b
}

func TestReferenceToolCallDecodes(t *testing.T) {
	_, c, _ := newTestServer(t, Options{})
	resp, err := c.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model: "reference", Messages: append([]openai.ChatCompletionMessage{{Role: "system", Content: "You are helpful."}},
			user("What   is the weather in Paris for 3 days?")...), Tools: []openai.Tool{weatherTool}})
	require.NoError(t, err)
	require.Len(t, resp.Choices, 1)
	msg := resp.Choices[0].Message
	require.Len(t, msg.ToolCalls, 1, "system prompt and whitespace must not change the lookup")
	assert.Equal(t, openai.FinishReasonToolCalls, resp.Choices[0].FinishReason)
	assert.Equal(t, "get_weather", msg.ToolCalls[0].Function.Name)
	assert.JSONEq(t, `{"city":"Paris","days":3}`, msg.ToolCalls[0].Function.Arguments)
	assert.NotEmpty(t, msg.ToolCalls[0].ID)
	assert.Positive(t, resp.Usage.PromptTokens)
	assert.Positive(t, resp.Usage.CompletionTokens)
}

func TestNoisyShare(t *testing.T) {
	refs := NewMemoryReferences()
	const n = 1000
	for i := range n {
		refs.Add(user(fmt.Sprintf("q%d", i)), Reference{Content: fmt.Sprintf("answer number %d is a fine answer to the question", i)})
	}
	s, err := New(Options{References: refs})
	require.NoError(t, err)
	for _, p := range []float64{0, 0.1, 0.3, 1} {
		corrupted := 0
		for i := range n {
			req := openai.ChatCompletionRequest{Model: fmt.Sprintf("noisy-%v", p), Messages: user(fmt.Sprintf("q%d", i))}
			a := s.generate(&req, Model{Kind: KindNoisy, P: p}, requestDigest(&req), 0, "")
			if a.content != fmt.Sprintf("answer number %d is a fine answer to the question", i) {
				corrupted++
			}
		}
		share := float64(corrupted) / n
		assert.InDelta(t, p, share, 0.05, "p=%v", p)
	}
}

func TestCorruptions(t *testing.T) {
	req := &openai.ChatCompletionRequest{Tools: []openai.Tool{weatherTool, forecastTool}}
	call := answer{toolCalls: []ToolCall{{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris","days":3}`)}}}
	seen := map[string]bool{}
	for i := range 200 {
		a := corrupt(call, req, hashOf(i))
		switch {
		case len(a.toolCalls) == 0:
			seen["missing-call"] = true
		case a.toolCalls[0].Name != "get_weather":
			assert.Equal(t, "get_forecast", a.toolCalls[0].Name)
			seen["wrong-function"] = true
		case strings.Contains(string(a.toolCalls[0].Arguments), "unexpected_param"):
			seen["extra-argument"] = true
		default:
			assert.NotEqual(t, `{"city":"Paris","days":3}`, string(a.toolCalls[0].Arguments))
			seen["wrong-argument"] = true
		}
	}
	assert.Len(t, seen, 4, "every tool-call failure mode occurs: %v", seen)
	for _, tc := range []struct{ in, notWant string }{
		{"<choice>\n1\n</choice>", "<choice>\n1\n</choice>"},
		{"42", "42"},
		{"B", "B"},
		{"def f(x):\n    return x >= 18\n", "def f(x):\n    return x >= 18\n"},
		{"The capital of France is Paris, a city on the Seine.", "The capital of France is Paris, a city on the Seine."},
	} {
		got := corrupt(answer{content: tc.in}, req, hashOf(tc.in))
		assert.NotEqual(t, tc.notWant, got.content, tc.in)
	}
	assert.Equal(t, "<choice>\n2\n</choice>", corrupt(answer{content: "<choice>\n1\n</choice>"}, req, hashOf(1)).content)
}

func TestContextLength(t *testing.T) {
	_, c, _ := newTestServer(t, Options{MaxContextTokens: 10})
	_, err := c.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model: "reference", Messages: user(strings.Repeat("long prompt ", 20))})
	var apiErr *openai.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusBadRequest, apiErr.HTTPStatusCode)
	assert.Equal(t, "context_length_exceeded", apiErr.Code)
}

func TestUnknownModel(t *testing.T) {
	_, c, _ := newTestServer(t, Options{})
	_, err := c.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{Model: "gpt-5", Messages: user("hi")})
	var apiErr *openai.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusNotFound, apiErr.HTTPStatusCode)
}

func TestParseFaults(t *testing.T) {
	f, err := ParseFaults("rate_limit=0.2, server_error=0.05,timeout=0.02,drop=0.01,latency=200ms,retry_after=1500ms,seed=3")
	require.NoError(t, err)
	assert.Equal(t, Faults{Latency: 200 * time.Millisecond, RateLimit: 0.2, RetryAfter: 1500 * time.Millisecond,
		ServerError: 0.05, Timeout: 0.02, Drop: 0.01, Seed: 3}, f)
	again, err := ParseFaults(f.String())
	require.NoError(t, err)
	assert.Equal(t, f, again)
	for _, bad := range []string{"rate_limit=2", "rate_limit=0.6,server_error=0.6", "nope=1", "latency=fast", "drop"} {
		_, err := ParseFaults(bad)
		assert.Error(t, err, bad)
	}
}

func post(t *testing.T, url, faults string, body any) (*http.Response, error) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", bytes.NewReader(b))
	req.Header.Set(FaultHeader, faults)
	return (&http.Client{Timeout: 300 * time.Millisecond}).Do(req)
}

func TestFaults(t *testing.T) {
	s, _, hs := newTestServer(t, Options{})
	body := openai.ChatCompletionRequest{Model: "reference", Messages: user("What is 2+2?")}

	resp, err := post(t, hs.URL, "rate_limit=1,retry_after=2s", body)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, "2", resp.Header.Get("Retry-After"))
	assert.Equal(t, "true", resp.Header.Get(BaselineHeader))

	resp, err = post(t, hs.URL, "server_error=1", body)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)

	_, err = post(t, hs.URL, "drop=1", body)
	require.Error(t, err)

	_, err = post(t, hs.URL, "timeout=1", body)
	var ne interface{ Timeout() bool }
	require.ErrorAs(t, err, &ne)
	assert.True(t, ne.Timeout())

	st := s.Stats()
	assert.Equal(t, Stats{Requests: 4, RateLimited: 1, ServerErrors: 1, Timeouts: 1, Dropped: 1}, st)
}

// TestFaultsDeterministic: the same sequence of requests meets the same
// faults on a fresh server, and a retried request gets a new draw.
func TestFaultsDeterministic(t *testing.T) {
	run := func() []int {
		_, _, hs := newTestServer(t, Options{Faults: Faults{RateLimit: 0.3, ServerError: 0.2}})
		var codes []int
		for i := range 20 {
			for range 3 { // the same request three times
				resp, err := post(t, hs.URL, "", openai.ChatCompletionRequest{Model: "echo", Messages: user(fmt.Sprint(i))})
				require.NoError(t, err)
				resp.Body.Close()
				codes = append(codes, resp.StatusCode)
			}
		}
		return codes
	}
	a, b := run(), run()
	assert.Equal(t, a, b)
	assert.Contains(t, a, http.StatusTooManyRequests)
	assert.Contains(t, a, http.StatusOK)
}

func TestLoadJSONL(t *testing.T) {
	in := `{"prompt": "What is 2+2?", "reference": {"content": "4"}}

{"messages": [{"role": "system", "content": "x"}, {"role": "user", "content": "call f"}], "reference": {"tool_calls": [{"name": "f", "arguments": {"a": 1}}]}}
`
	refs, err := LoadJSONL(strings.NewReader(in))
	require.NoError(t, err)
	assert.Equal(t, 2, refs.Len())
	ref, ok := refs.Lookup(refkey.Conversation(user("What is 2+2?")))
	require.True(t, ok)
	assert.Equal(t, "4", ref.Content)
	ref, ok = refs.Lookup(refkey.Conversation(user("call f")))
	require.True(t, ok)
	assert.JSONEq(t, `{"a":1}`, string(ref.ToolCalls[0].Arguments))

	_, err = LoadJSONL(strings.NewReader(`{"prompt":"a","key":"b","reference":{}}`))
	assert.Error(t, err)
	_, err = LoadJSONL(strings.NewReader(`{`))
	assert.Error(t, err)
}

func TestServeShutsDown(t *testing.T) {
	s, err := New(Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- s.ListenAndServe(ctx, "127.0.0.1:0", func(a net.Addr) { addrc <- a.String() })
	}()
	addr := <-addrc
	resp, err := http.Get("http://" + addr + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	cancel()
	require.NoError(t, <-errc)
	_, err = http.Get("http://" + addr + "/healthz")
	assert.True(t, err != nil && !errors.Is(err, context.Canceled))
}
