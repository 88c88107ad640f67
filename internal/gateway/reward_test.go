package gateway

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/modelapi"
)

func TestParseRewardResponse(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       float64
		err        string // "" = no error
	}{
		{"sequence reward model", `{"id":"pool-1","object":"list","model":"rm","data":[{"index":0,"object":"pooling","data":[2.75]}],"usage":{"prompt_tokens":12,"total_tokens":12}}`, 2.75, ""},
		{"negative integer score", `{"data":[{"index":0,"data":[-3]}]}`, -3, ""},
		{"token reward model: the last token's", `{"data":[{"index":0,"data":[[0.1],[0.4],[-1.5]]}]}`, -1.5, ""},
		{"token reward model, flat last token", `{"data":[{"index":0,"data":[[0.1, 0.2],[0.3, 0.9]]}]}`, 0, "2 values for one input"},
		{"not JSON", `<html>502 Bad Gateway</html>`, 0, "not a pooling response"},
		{"truncated", `{"data":[{"index":0,"data":[1.5`, 0, "not a pooling response"},
		{"no data", `{"id":"x"}`, 0, "want one result in data, got 0"},
		{"two results", `{"data":[{"data":[1]},{"data":[2]}]}`, 0, "want one result in data, got 2"},
		{"missing score", `{"data":[{"index":0}]}`, 0, "no score"},
		{"null data (NaN)", `{"data":[{"index":0,"data":null}]}`, 0, "no score"},
		{"null score (NaN)", `{"data":[{"index":0,"data":[null]}]}`, 0, "NaN"},
		{"NaN literal", `{"data":[{"index":0,"data":[NaN]}]}`, 0, "not a pooling response"},
		{"overflow", `{"data":[{"index":0,"data":[1e999]}]}`, 0, "cannot unmarshal number 1e999"},
		{"empty list", `{"data":[{"index":0,"data":[]}]}`, 0, "empty list"},
		{"two labels", `{"data":[{"index":0,"data":[0.2,0.8]}]}`, 0, "2 values for one input"},
		{"base64", `{"data":[{"index":0,"data":"AAAAQA=="}]}`, 0, "base64"},
		{"an object", `{"data":[{"index":0,"data":{"score":1}}]}`, 0, "want a number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseRewardResponse([]byte(tc.body))
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got.Score)
			assert.False(t, math.IsNaN(got.Score))
		})
	}
	r, err := ParseRewardResponse([]byte(`{"id":"pool-1","model":"rm","data":[{"index":0,"data":[1]}],"usage":{"prompt_tokens":12}}`))
	require.NoError(t, err)
	assert.Equal(t, modelapi.RewardResponse{ID: "pool-1", Model: "rm", Score: 1, Usage: modelapi.Usage{PromptTokens: 12}}, r)
}

// rewardConfig is the baseline provider as LoadConfig makes it (with its
// reward_models default), pointed at url.
func rewardGateway(t *testing.T, url string, opts Options) *Gateway {
	t.Helper()
	cfg, err := LoadConfig(strings.NewReader("providers:\n  baseline:\n    base_url: "+url+"\n    prices: {input_per_mtok: 2}\n    timeout: 2s\n"), mapEnv(nil))
	require.NoError(t, err)
	opts.Config = cfg
	if opts.Env == nil {
		opts.Env = mapEnv(nil)
	}
	g, err := New(opts)
	require.NoError(t, err)
	return g
}

func conversation(reply string) []openai.ChatCompletionMessage {
	return []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: "You can call get_weather(city)."},
		{Role: openai.ChatMessageRoleUser, Content: "Weather in Oslo?"},
		{Role: openai.ChatMessageRoleAssistant, Content: reply},
	}
}

// TestRewardOverHTTP scores replies with the baseline reward models on the
// real server: the reference reply beats a wrong one, answers are cached
// and accounted, and kinds are enforced in both directions.
func TestRewardOverHTTP(t *testing.T) {
	refs := baseline.NewMemoryReferences()
	refs.AddReward(userMsg("Weather in Oslo?"), baseline.Reference{ToolCalls: []baseline.ToolCall{
		{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)}}})
	srv, url := startBaseline(t, baseline.Options{References: refs})
	g := rewardGateway(t, url, Options{})
	ctx := context.Background()
	assert.Equal(t, modelapi.ModelReward, g.Kind("baseline/reward-reference"))
	assert.Equal(t, modelapi.ModelReward, g.Kind("baseline/reward-noisy-0.3"))
	assert.Equal(t, modelapi.ModelChat, g.Kind("baseline/reference"))
	assert.Equal(t, modelapi.ModelChat, g.Kind("nowhere/x"))

	good := `<tool_call>
{"name": "get_weather", "arguments": {"city": "Oslo"}}
</tool_call>`
	bad := `<tool_call>
{"name": "get_weather", "arguments": {"city": "Bergen"}}
</tool_call>`
	chosen, err := g.Reward(ctx, modelapi.RewardRequest{Model: "baseline/reward-reference", Messages: conversation(good)})
	require.NoError(t, err)
	rejected, err := g.Reward(ctx, modelapi.RewardRequest{Model: "baseline/reward-reference", Messages: conversation(bad)})
	require.NoError(t, err)
	assert.Equal(t, 1.0, chosen.Score)
	assert.Equal(t, 0.25, rejected.Score)
	assert.Equal(t, "baseline/reward-reference", chosen.Model)
	u := chosen.Usage
	assert.Positive(t, u.PromptTokens)
	assert.InDelta(t, float64(u.PromptTokens)*2/1e6, u.CostUSD, 1e-15)
	assert.Equal(t, 1, u.Attempts)
	assert.Positive(t, u.Latency)
	assert.False(t, u.CacheHit)

	// The same request again is a cache hit: no HTTP, same score and cost.
	before := srv.Stats().Requests
	again, err := g.Reward(ctx, modelapi.RewardRequest{Model: "baseline/reward-reference", Messages: conversation(good)})
	require.NoError(t, err)
	assert.Equal(t, before, srv.Stats().Requests)
	assert.True(t, again.Usage.CacheHit)
	assert.Equal(t, 0, again.Usage.Attempts)
	assert.Equal(t, chosen.Score, again.Score)
	assert.Equal(t, chosen.Usage.CostUSD, again.Usage.CostUSD)
	_, err = g.Reward(ctx, modelapi.RewardRequest{Model: "baseline/reward-reference", Messages: conversation(good), NoCache: true})
	require.NoError(t, err)
	assert.Equal(t, before+1, srv.Stats().Requests, "NoCache sends")
	// A chat completion of the same conversation is another cache entry.
	_, err = g.Complete(ctx, modelapi.Request{Model: "baseline/echo", Messages: conversation(good)})
	require.NoError(t, err)

	// Kinds: a reward model has no chat completions, a chat model no scores.
	_, err = g.Complete(ctx, modelapi.Request{Model: "baseline/reward-reference", Messages: userMsg("hi")})
	var ge *Error
	require.ErrorAs(t, err, &ge)
	assert.Equal(t, ClassNotFound, ge.Class)
	assert.Contains(t, ge.Error(), "reward model")
	_, err = g.Reward(ctx, modelapi.RewardRequest{Model: "baseline/reference", Messages: conversation(good)})
	require.ErrorAs(t, err, &ge)
	assert.Equal(t, ClassNotFound, ge.Class)
	assert.Contains(t, ge.Error(), "not a reward model")
	_, err = g.Reward(ctx, modelapi.RewardRequest{Model: "nowhere/rm", Messages: conversation(good)})
	require.ErrorAs(t, err, &ge)
	assert.Equal(t, ClassNotFound, ge.Class)
	_, err = g.Reward(ctx, modelapi.RewardRequest{Model: "baseline/reward-length"})
	require.ErrorAs(t, err, &ge)
	assert.Equal(t, ClassBadRequest, ge.Class)
	// A reward model the server refuses as such (a misconfigured provider)
	// is not found, so the run stops instead of scoring zeros.
	g2 := newTestGateway(t, url, func(p *Provider) { p.RewardModels = []string{"*"} }, Options{})
	_, err = g2.Reward(ctx, modelapi.RewardRequest{Model: "baseline/first", Messages: conversation(good)})
	require.ErrorAs(t, err, &ge)
	assert.Equal(t, ClassNotFound, ge.Class)
	assert.Equal(t, http.StatusNotFound, ge.Status)
	assert.Contains(t, ge.Message, "not a reward model")
	assert.False(t, IsModelFailure(err))
}

// TestRewardFaultsAreRetried: 429s and 500s on the reward endpoint are
// retried in the call like completions, and the limiter backs off.
func TestRewardFaultsAreRetried(t *testing.T) {
	srv, url := startBaseline(t, baseline.Options{Faults: baseline.Faults{RateLimit: 0.3, RetryAfter: 10 * time.Millisecond, ServerError: 0.2, Seed: 2}})
	g := rewardGateway(t, url, Options{Retry: RetryPolicy{MaxAttempts: 20, InitialBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond}})
	var totals modelapi.Totals
	for i := range 30 {
		resp, err := g.Reward(context.Background(), modelapi.RewardRequest{Model: "baseline/reward-length", Messages: conversation(strings.Repeat("x", i+1))})
		require.NoError(t, err)
		assert.Equal(t, float64(i+1), resp.Score)
		totals.Add(resp.Usage)
	}
	st := srv.Stats()
	assert.Positive(t, st.RateLimited)
	assert.Positive(t, st.ServerErrors)
	assert.Equal(t, st.Requests, totals.Attempts, "every request the server saw is an accounted attempt")

	// Without in-call retries the failure comes back classified.
	g = rewardGateway(t, url, Options{Transport: faultTransport("rate_limit=1,retry_after=3s")})
	_, err := g.Reward(context.Background(), modelapi.RewardRequest{Model: "baseline/reward-length", Messages: conversation("x")})
	var ge *Error
	require.ErrorAs(t, err, &ge)
	assert.Equal(t, ClassRateLimit, ge.Class)
	assert.Equal(t, 3*time.Second, ge.RetryAfter)
	assert.Less(t, g.Limiter("baseline").Limit(), 64.0, "a 429 cuts concurrency")
}

// TestRewardErrorReplies: malformed 2xx replies are retryable server
// errors naming what was wrong; error statuses in vLLM's body formats are
// classed like chat errors, with the server's message and no key.
func TestRewardErrorReplies(t *testing.T) {
	var reply atomic.Value
	var path atomic.Value
	var body atomic.Value
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path.Store(r.URL.Path)
		b, _ := io.ReadAll(r.Body)
		body.Store(string(b))
		rep := reply.Load().([2]string)
		if rep[0] == "429" {
			w.Header().Set("Retry-After", "2")
		}
		code := map[string]int{"200": 200, "400": 400, "404": 404, "429": 429, "500": 500}[rep[0]]
		w.WriteHeader(code)
		_, _ = io.WriteString(w, rep[1])
	}))
	defer hs.Close()
	g := newTestGateway(t, hs.URL+"/v1", func(p *Provider) {
		p.RewardModels = []string{"rm-*"}
		p.APIKeyEnv = "RM_KEY"
	}, Options{Env: mapEnv(map[string]string{"RM_KEY": "sk-secret-123"})})
	for _, tc := range []struct {
		status, body string
		class        Class
		msg          string
	}{
		{"200", `{"data":[{"index":0,"data":[null]}]}`, ClassServer, "malformed reward response: data[0].data: score is null (NaN"},
		{"200", `{"data":[{"index":0,"data":[0.1,0.9]}]}`, ClassServer, "2 values for one input"},
		{"200", `not json`, ClassServer, "malformed reward response: not a pooling response"},
		{"400", `{"object":"error","message":"This model's maximum context length is 8192 tokens","type":"BadRequestError","code":400}`, ClassContextLength, "maximum context length"},
		{"400", `{"error":{"message":"The model does not support Pooling API","type":"BadRequestError","code":400}}`, ClassBadRequest, "does not support Pooling API"},
		{"404", `{"detail":"Not Found"}`, ClassNotFound, "Not Found"},
		{"429", `{"error":{"message":"slow down, sk-secret-123","type":"rate_limit"}}`, ClassRateLimit, "slow down, [REDACTED]"},
		{"500", `Internal Server Error`, ClassServer, "Internal Server Error"},
	} {
		reply.Store([2]string{tc.status, tc.body})
		_, err := g.Reward(context.Background(), modelapi.RewardRequest{Model: "baseline/rm-1", Messages: conversation(""), NoCache: true})
		var ge *Error
		require.ErrorAs(t, err, &ge, tc.body)
		assert.Equal(t, tc.class, ge.Class, tc.body)
		assert.Contains(t, ge.Error(), tc.msg)
		assert.NotContains(t, ge.Error(), "sk-secret-123")
		if tc.status == "429" {
			assert.Equal(t, 2*time.Second, ge.RetryAfter)
		}
	}
	// The wire: POST <root>/pooling with the chat form of the request.
	assert.Equal(t, "/pooling", path.Load())
	var sent map[string]any
	require.NoError(t, json.Unmarshal([]byte(body.Load().(string)), &sent))
	assert.Equal(t, "rm-1", sent["model"])
	assert.Equal(t, "float", sent["encoding_format"])
	assert.Equal(t, false, sent["use_activation"])
	assert.NotContains(t, sent, "task")
	msgs := sent["messages"].([]any)
	require.Len(t, msgs, 3)
	// An empty reply is sent as content "", not left out.
	assert.Equal(t, map[string]any{"role": "assistant", "content": ""}, msgs[2])
}

// TestRewardSegment: reward answers go to the shard's cache segment and a
// reopened segment serves them with no request.
func TestRewardSegment(t *testing.T) {
	srv, url := startBaseline(t, baseline.Options{})
	g := rewardGateway(t, url, Options{})
	store := blobtest.NewMemory()
	ctx := context.Background()
	seg, err := OpenSegment(ctx, store, "cache/r/shard-0", SegmentOptions{})
	require.NoError(t, err)
	first, err := g.WithCache(seg).Reward(ctx, modelapi.RewardRequest{Model: "baseline/reward-length", Messages: conversation("hello")})
	require.NoError(t, err)
	require.NoError(t, seg.Flush(ctx))

	g = rewardGateway(t, url, Options{}) // a new process: empty LRU
	seg, err = OpenSegment(ctx, store, "cache/r/shard-0", SegmentOptions{})
	require.NoError(t, err)
	assert.Equal(t, 1, seg.Loaded())
	n := srv.Stats().Requests
	again, err := g.WithCache(seg).Reward(ctx, modelapi.RewardRequest{Model: "baseline/reward-length", Messages: conversation("hello")})
	require.NoError(t, err)
	assert.Equal(t, n, srv.Stats().Requests)
	assert.True(t, again.Usage.CacheHit)
	assert.Equal(t, first.Score, again.Score)
	assert.Equal(t, first.Usage.PromptTokens, again.Usage.PromptTokens)
}

func TestRewardConfig(t *testing.T) {
	cfg, err := LoadConfig(strings.NewReader(`
providers:
  rm:
    base_url: http://gpu:8000/v1/
    reward_models: ["*"]
  gw:
    base_url: https://gw.example.com/vllm/v1
    reward_models: [Skywork-Reward-V2-Llama-3.1-8B, "internlm2-*"]
    reward_url: https://gw.example.com/vllm/rm/pooling
`), mapEnv(nil))
	require.NoError(t, err)
	rm, gw, b := cfg.Providers["rm"], cfg.Providers["gw"], cfg.Providers["baseline"]
	assert.Equal(t, "http://gpu:8000/pooling", rm.RewardEndpoint())
	assert.Equal(t, modelapi.ModelReward, rm.KindOf("Skywork/Skywork-Reward-V2-Qwen3-8B"))
	assert.Equal(t, modelapi.ModelReward, gw.KindOf("Skywork-Reward-V2-Llama-3.1-8B"))
	assert.Equal(t, modelapi.ModelReward, gw.KindOf("internlm2-7b-reward"))
	assert.Equal(t, modelapi.ModelChat, gw.KindOf("Skywork-Reward-V2-Llama-3.1-8B-v2"))
	assert.Equal(t, "https://gw.example.com/vllm/rm/pooling", gw.RewardEndpoint())
	assert.Equal(t, modelapi.ModelReward, b.KindOf("reward-reference"), "the baseline provider always serves reward-*")
	assert.Equal(t, modelapi.ModelChat, b.KindOf("reference"))
	assert.Equal(t, "http://127.0.0.1:8400/pooling", b.RewardEndpoint())

	for _, tc := range []struct{ name, in, want string }{
		{"star inside", "providers:\n  x:\n    base_url: http://a/v1\n    reward_models: [\"a*b\"]\n", "reward_models"},
		{"empty pattern", "providers:\n  x:\n    base_url: http://a/v1\n    reward_models: [\"\"]\n", "reward_models"},
		{"bad reward url", "providers:\n  x:\n    base_url: http://a/v1\n    reward_url: /pooling\n", "reward_url"},
		{"reward url credentials", "providers:\n  x:\n    base_url: http://a/v1\n    reward_url: http://u:p@a/pooling\n", "credentials"},
		{"no kind field (reward_models says it)", "providers:\n  x:\n    base_url: http://a/v1\n    kind: reward\n", "kind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadConfig(strings.NewReader(tc.in), mapEnv(nil))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
