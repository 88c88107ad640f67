package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/limits"
	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/internal/secret"
	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var weatherTool = openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
	Name: "get_weather", Parameters: map[string]any{"type": "object", "properties": map[string]any{
		"city": map[string]any{"type": "string"}}}}}

func TestCompleteToolCallsAndAccounting(t *testing.T) {
	refs := baseline.NewMemoryReferences()
	refs.Add(userMsg("Weather in Oslo?"), baseline.Reference{ToolCalls: []baseline.ToolCall{
		{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)}}})
	_, url := startBaseline(t, baseline.Options{References: refs})
	g := newTestGateway(t, url, func(p *Provider) {
		p.Prices = Prices{InputPerMTok: 1, OutputPerMTok: 2}
	}, Options{})
	seed := 3
	resp, err := g.Complete(context.Background(), modelapi.Request{
		Model: "baseline/reference", Messages: userMsg("Weather in Oslo?"), Tools: []openai.Tool{weatherTool},
		Seed: &seed, Params: modelapi.Params{N: 2, ToolChoice: "auto"},
	})
	require.NoError(t, err)
	require.Len(t, resp.Choices, 2)
	tc := resp.Choices[0].ToolCalls
	require.Len(t, tc, 1)
	assert.Equal(t, "get_weather", tc[0].Function.Name)
	assert.JSONEq(t, `{"city":"Oslo"}`, tc[0].Function.Arguments)
	assert.Equal(t, "tool_calls", resp.Choices[0].FinishReason)
	assert.Equal(t, "baseline/reference", resp.Model)
	u := resp.Usage
	assert.Positive(t, u.PromptTokens)
	assert.Positive(t, u.CompletionTokens)
	assert.InDelta(t, (float64(u.PromptTokens)*1+float64(u.CompletionTokens)*2)/1e6, u.CostUSD, 1e-15)
	assert.Equal(t, 1, u.Attempts)
	assert.False(t, u.CacheHit)
	assert.Positive(t, u.Latency)
}

func TestTemperatureZeroIsSent(t *testing.T) {
	var body map[string]any
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewDecoder(r.Body).Decode(&body)
		_, _ = io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"ok"}}]}`)
	}))
	defer hs.Close()
	g := newTestGateway(t, hs.URL+"/v1", func(p *Provider) { f := false; p.JSONSchema = &f }, Options{})
	zero := float32(0)
	schema := &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
		JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "v", Schema: json.RawMessage(`{"type":"object"}`)}}
	_, err := g.Complete(context.Background(), modelapi.Request{Model: "baseline/m", Messages: userMsg("hi"),
		Params: modelapi.Params{Temperature: &zero, ResponseFormat: schema}})
	require.NoError(t, err)
	assert.Contains(t, body, "temperature")
	assert.Less(t, body["temperature"].(float64), 1e-30)
	// The endpoint lacks json_schema: json_object plus the schema in a system message.
	assert.Equal(t, map[string]any{"type": "json_object"}, body["response_format"])
	first := body["messages"].([]any)[0].(map[string]any)
	assert.Equal(t, "system", first["role"])
	assert.Contains(t, first["content"], `{"type":"object"}`)
}

// TestFaultMixFinishesEverySample is the acceptance run: against the
// baseline server over real HTTP, 20% 429s, 5% 500s and 2% timeouts, every
// sample finishes with the reference answer (no infrastructure error is
// scored as a model failure), using the in-activity retry policy.
func TestFaultMixFinishesEverySample(t *testing.T) {
	const samples = 400
	refs := baseline.NewMemoryReferences()
	for i := range samples {
		refs.Add(userMsg(fmt.Sprintf("question %d", i)), baseline.Reference{Content: fmt.Sprintf("answer %d", i)})
	}
	srv, url := startBaseline(t, baseline.Options{References: refs, Faults: baseline.Faults{
		RateLimit: 0.20, RetryAfter: 20 * time.Millisecond, ServerError: 0.05, Timeout: 0.02, Seed: 1}})
	var logs bytes.Buffer
	g := newTestGateway(t, url, func(p *Provider) {
		p.Timeout = time.Second
		p.MaxConcurrency = 32
	}, Options{
		Retry:  RetryPolicy{MaxAttempts: 30, InitialBackoff: 5 * time.Millisecond, MaxBackoff: 100 * time.Millisecond},
		Logger: slog.New(slog.NewJSONHandler(&syncWriter{w: &logs}, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		totals modelapi.Totals
		failed []string
	)
	sem := make(chan struct{}, 32)
	for i := range samples {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			resp, err := g.Complete(context.Background(), modelapi.Request{Model: "baseline/reference", Messages: userMsg(fmt.Sprintf("question %d", i))})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed = append(failed, err.Error())
				return
			}
			if resp.Text() != fmt.Sprintf("answer %d", i) {
				failed = append(failed, "wrong answer: "+resp.Text())
			}
			totals.Add(resp.Usage)
		}()
	}
	wg.Wait()
	require.Empty(t, failed)
	st := srv.Stats()
	t.Logf("server: %+v; totals: %+v", st, totals)
	assert.EqualValues(t, samples, totals.Calls)
	// A client timeout can race a slow answer, so the server may have
	// answered (and a real provider billed) a few more than one per sample.
	assert.GreaterOrEqual(t, st.Answered, int64(samples))
	assert.Positive(t, st.RateLimited)
	assert.Positive(t, st.ServerErrors)
	assert.Positive(t, st.Timeouts)
	assert.GreaterOrEqual(t, totals.Attempts, st.Requests, "every request the server saw is an accounted attempt")
	// Every failed attempt was classed retryable.
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec))
		if rec["msg"] == "gateway attempt failed" {
			assert.True(t, strings.HasPrefix(rec["class"].(string), "retryable-"), rec["class"])
		}
	}
}

// TestFaultsWithoutInCallRetry: with the default policy each failure comes
// back at once as a retryable Temporal error.
func TestFaultsWithoutInCallRetry(t *testing.T) {
	_, url := startBaseline(t, baseline.Options{})
	for _, f := range []string{"rate_limit=1,retry_after=3s", "server_error=1", "timeout=1", "drop=1"} {
		g := newTestGateway(t, url, func(p *Provider) { p.Timeout = 200 * time.Millisecond }, Options{Transport: faultTransport(f)})
		_, err := g.Complete(context.Background(), modelapi.Request{Model: "baseline/reference", Messages: userMsg("q")})
		var ge *Error
		require.ErrorAs(t, err, &ge, f)
		assert.Equal(t, 1, ge.Attempts)
		assert.True(t, ge.Retryable(), f)
		assert.False(t, IsModelFailure(err))
		if strings.HasPrefix(f, "rate_limit") {
			assert.Equal(t, 3*time.Second, ge.RetryAfter)
			assert.Less(t, g.Limiter("baseline").Limit(), 32.0, "a 429 cuts concurrency")
		}
	}
}

func TestCacheHitsAndBypass(t *testing.T) {
	srv, url := startBaseline(t, baseline.Options{})
	g := newTestGateway(t, url, nil, Options{})
	ctx := context.Background()
	req := modelapi.Request{Model: "baseline/echo", Messages: userMsg("hello")}
	first, err := g.Complete(ctx, req)
	require.NoError(t, err)
	second, err := g.Complete(ctx, req)
	require.NoError(t, err)
	assert.True(t, second.Usage.CacheHit)
	assert.Equal(t, 0, second.Usage.Attempts)
	assert.Equal(t, first.Choices, second.Choices)
	assert.Equal(t, first.Usage.CostUSD, second.Usage.CostUSD)
	assert.EqualValues(t, 1, srv.Stats().Requests)

	// A different sample index, seed, parameter or n is another request.
	seed := 1
	temp := float32(0.7)
	for _, r := range []modelapi.Request{
		{Model: "baseline/echo", Messages: userMsg("hello"), SampleIndex: 1},
		{Model: "baseline/echo", Messages: userMsg("hello"), Seed: &seed},
		{Model: "baseline/echo", Messages: userMsg("hello"), Params: modelapi.Params{Temperature: &temp}},
		{Model: "baseline/echo", Messages: userMsg("hello"), Params: modelapi.Params{N: 2}},
		{Model: "baseline/echo", Messages: userMsg("hello"), Tools: []openai.Tool{weatherTool}},
	} {
		resp, err := g.Complete(ctx, r)
		require.NoError(t, err)
		assert.False(t, resp.Usage.CacheHit, "%+v", r)
	}
	assert.EqualValues(t, 6, srv.Stats().Requests)

	// NoCache neither reads nor writes.
	req.NoCache = true
	resp, err := g.Complete(ctx, req)
	require.NoError(t, err)
	assert.False(t, resp.Usage.CacheHit)
	assert.EqualValues(t, 7, srv.Stats().Requests)
}

func TestCacheKeyCanonical(t *testing.T) {
	params := func(order bool) map[string]any {
		m := map[string]any{}
		if order {
			m["b"], m["a"] = 1, map[string]any{"y": 2, "x": 1}
		} else {
			m["a"], m["b"] = map[string]any{"x": 1, "y": 2}, 1
		}
		return m
	}
	req := func(order bool) openai.ChatCompletionRequest {
		return openai.ChatCompletionRequest{Model: "m", Messages: userMsg("q"), Tools: []openai.Tool{{
			Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "f", Parameters: params(order)}}}}
	}
	a, err := CacheKey("p", req(true), 0)
	require.NoError(t, err)
	b, err := CacheKey("p", req(false), 0)
	require.NoError(t, err)
	assert.Equal(t, a, b, "map order does not change the key")
	type props struct {
		A struct {
			Y int `json:"y"`
			X int `json:"x"`
		} `json:"a"`
		B int `json:"b"`
	}
	var st props
	st.A.Y, st.A.X, st.B = 2, 1, 1
	e, err := CacheKey("p", openai.ChatCompletionRequest{Model: "m", Messages: userMsg("q"), Tools: []openai.Tool{{
		Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "f", Parameters: st}}}}, 0)
	require.NoError(t, err)
	assert.Equal(t, a, e, "a struct schema hashes like the equivalent map")
	raw := req(true)
	raw.Tools[0].Function.Parameters = json.RawMessage(`{"b":1,"a":{"y":2,"x":1}}`)
	f, err := CacheKey("p", raw, 0)
	require.NoError(t, err)
	assert.Equal(t, a, f, "raw JSON in any key order hashes the same")
	c, _ := CacheKey("p", req(false), 1)
	d, _ := CacheKey("q", req(false), 0)
	assert.NotEqual(t, a, c)
	assert.NotEqual(t, a, d)
}

// TestSegmentResumeAfterCrash: a shard answers its samples, the worker dies
// before the final flush, and the retried shard makes model calls only for
// the answers that were not yet flushed.
func TestSegmentResumeAfterCrash(t *testing.T) {
	const samples, flushEvery = 200, 16
	srv, url := startBaseline(t, baseline.Options{})
	store := blobtest.NewMemory()
	ctx := context.Background()
	runShard := func(crash bool) modelapi.Totals {
		seg, err := OpenSegment(ctx, store, "cache/plan-abc/shard-00007", SegmentOptions{FlushEvery: flushEvery})
		require.NoError(t, err)
		g := newTestGateway(t, url, nil, Options{}).WithCache(seg) // a fresh process: empty LRU
		var tot modelapi.Totals
		for i := range samples {
			resp, err := g.Complete(ctx, modelapi.Request{Model: "baseline/echo", Messages: userMsg(fmt.Sprint("s", i))})
			require.NoError(t, err)
			tot.Add(resp.Usage)
		}
		if !crash {
			require.NoError(t, seg.Flush(ctx))
		}
		return tot
	}
	first := runShard(true) // killed before its final flush
	assert.EqualValues(t, samples, srv.Stats().Requests)
	retry := runShard(false)
	extra := srv.Stats().Requests - samples
	t.Logf("calls after crash and retry: %d for %d samples (+%d)", srv.Stats().Requests, samples, extra)
	assert.LessOrEqual(t, extra, int64(flushEvery), "only unflushed answers are asked again")
	assert.EqualValues(t, samples-extra, retry.CacheHits)
	assert.InDelta(t, first.CostUSD, retry.CostUSD, 1e-12, "run cost is the same whether answers came from the cache")

	// A re-run of the same evaluation makes no model call at all.
	before := srv.Stats().Requests
	rerun := runShard(false)
	assert.Equal(t, before, srv.Stats().Requests)
	assert.EqualValues(t, samples, rerun.CacheHits)
	assert.Zero(t, rerun.SpentUSD)
}

func TestSegmentTTLAndRace(t *testing.T) {
	ctx := context.Background()
	store := blobtest.NewMemory()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	a, err := OpenSegment(ctx, store, "c/s", SegmentOptions{TTL: time.Hour, Now: clock})
	require.NoError(t, err)
	b, err := OpenSegment(ctx, store, "c/s", SegmentOptions{TTL: time.Hour, Now: clock}) // a duplicate attempt
	require.NoError(t, err)
	a.Put(ctx, Entry{Key: "k1", Created: now})
	b.Put(ctx, Entry{Key: "k2", Created: now})
	require.NoError(t, a.Flush(ctx))
	require.NoError(t, b.Flush(ctx), "the second writer takes the next part instead of overwriting")

	c, err := OpenSegment(ctx, store, "c/s", SegmentOptions{TTL: time.Hour, Now: clock})
	require.NoError(t, err)
	assert.Equal(t, 2, c.Loaded())
	_, ok := c.Get(ctx, "k1")
	assert.True(t, ok)

	now = now.Add(2 * time.Hour)
	_, ok = c.Get(ctx, "k1")
	assert.False(t, ok, "expired in memory")
	d, err := OpenSegment(ctx, store, "c/s", SegmentOptions{TTL: time.Hour, Now: clock})
	require.NoError(t, err)
	assert.Equal(t, 0, d.Loaded(), "expired on load")
}

func TestLRU(t *testing.T) {
	ctx := context.Background()
	c := NewLRU(2, time.Minute)
	now := time.Now()
	c.now = func() time.Time { return now }
	c.Put(ctx, Entry{Key: "a", Created: now})
	c.Put(ctx, Entry{Key: "b", Created: now})
	_, _ = c.Get(ctx, "a")
	c.Put(ctx, Entry{Key: "c", Created: now}) // evicts b, the least recently used
	_, okA := c.Get(ctx, "a")
	_, okB := c.Get(ctx, "b")
	assert.True(t, okA)
	assert.False(t, okB)
	now = now.Add(2 * time.Minute)
	_, okA = c.Get(ctx, "a")
	assert.False(t, okA, "TTL")
}

func TestTotals(t *testing.T) {
	var a, b modelapi.Totals
	a.Add(modelapi.Usage{PromptTokens: 10, CompletionTokens: 5, CostUSD: 0.5, Attempts: 3, Latency: time.Second})
	b.Add(modelapi.Usage{PromptTokens: 10, CompletionTokens: 5, CostUSD: 0.5, CacheHit: true})
	a.Merge(b)
	assert.Equal(t, modelapi.Totals{Calls: 2, CacheHits: 1, Attempts: 3, PromptTokens: 20, CompletionTokens: 10,
		CostUSD: 1, SpentUSD: 0.5, Latency: time.Second}, a)
}

// TestKeyNeverLeaks plants a key and looks for it in error messages, logs,
// JSON of responses, usage and errors, and printed config. The endpoint
// echoes the Authorization header back in every error body, the worst case.
func TestKeyNeverLeaks(t *testing.T) {
	const key = "sk-planted-8f14e45fceea167a5a36dedd4bea2543"
	var sawKey atomic.Bool
	var n atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		sawKey.Store(auth == "Bearer "+key)
		switch n.Add(1) {
		case 1:
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"error":{"message":"bad request from %s (key %s)","type":"invalid_request_error"}}`, auth, key)
		case 2:
			w.WriteHeader(500)
			fmt.Fprintf(w, `upstream rejected header Authorization: %s`, auth)
		case 3:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(429)
			fmt.Fprintf(w, `{"error":{"message":"%s"}}`, key)
		case 4:
			w.WriteHeader(401)
			fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s"}}`, key)
		default:
			fmt.Fprintf(w, `{"id":"x","model":"m","choices":[{"message":{"role":"assistant","content":"ok"}}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`)
		}
	}))
	defer hs.Close()
	var logs bytes.Buffer
	cfg := &Config{Providers: map[string]*Provider{"corp": {BaseURL: hs.URL + "/v1", APIKeyEnv: "CORP_KEY"}}}
	g, err := New(Options{Config: cfg, Env: mapEnv(map[string]string{"CORP_KEY": key}),
		Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	require.NoError(t, err)

	var seen []string
	for range 5 {
		resp, err := g.Complete(context.Background(), modelapi.Request{Model: "corp/m", Messages: userMsg("hi"), NoCache: true})
		if err != nil {
			seen = append(seen, err.Error(), fmt.Sprintf("%+v %#v", err, err), ToTemporal(err).Error())
			b, _ := json.Marshal(err)
			seen = append(seen, string(b))
			continue
		}
		b, _ := json.Marshal(resp)
		seen = append(seen, string(b), fmt.Sprintf("%+v", resp))
	}
	assert.True(t, sawKey.Load(), "the key reached the endpoint")
	b, _ := json.Marshal(cfg)
	s := secret.New(key)
	sj, _ := json.Marshal(struct{ K secret.Value }{s})
	var sl bytes.Buffer
	slog.New(slog.NewTextHandler(&sl, nil)).Info("x", "secret", s)
	seen = append(seen, logs.String(), string(b), fmt.Sprintf("%v %+v %#v %s", cfg, g, s, s), string(sj), sl.String())
	for _, text := range seen {
		assert.NotContains(t, text, key)
		assert.NotContains(t, text, key[10:], "not even a fragment")
	}
	assert.Equal(t, key, s.Reveal())
	assert.Contains(t, strings.Join(seen, "\n"), "[REDACTED]")
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// A segment flushes once FlushEvery answers are pending, or once the oldest
// pending answer has waited FlushInterval, whichever comes first.
func TestSegmentFlushEveryAndInterval(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	parts := func(store *blobtest.Memory) int {
		infos, err := store.List(ctx, "c/s/part-")
		require.NoError(t, err)
		return len(infos)
	}
	for _, tc := range []struct {
		name  string
		steps []time.Duration // clock advance before each Put
		want  []int           // parts after each Put
	}{
		{"count", []time.Duration{0, 0, 0, 0}, []int{0, 0, 1, 1}},
		{"interval", []time.Duration{0, 600 * time.Millisecond, 500 * time.Millisecond, 0}, []int{0, 0, 1, 1}},
		{"interval restarts after a flush", []time.Duration{0, 0, 0, 900 * time.Millisecond, time.Second}, []int{0, 0, 1, 1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := blobtest.NewMemory()
			seg, err := OpenSegment(ctx, store, "c/s", SegmentOptions{FlushEvery: 3, FlushInterval: time.Second, Now: clock})
			require.NoError(t, err)
			for i, d := range tc.steps {
				now = now.Add(d)
				seg.Put(ctx, Entry{Key: fmt.Sprint("k", i), Created: now})
				assert.Equal(t, tc.want[i], parts(store), "after put %d", i)
			}
		})
	}
}

// PutAll adds many answers without Put's automatic flushes: one Flush
// writes them as one part, and a reopened segment has each once.
func TestSegmentPutAll(t *testing.T) {
	ctx := context.Background()
	store := blobtest.NewMemory()
	seg, err := OpenSegment(ctx, store, "c/s", SegmentOptions{FlushEvery: 3})
	require.NoError(t, err)
	seg.Put(ctx, Entry{Key: "k0"})
	var entries []Entry
	for i := range 10 {
		entries = append(entries, Entry{Key: fmt.Sprint("k", i)}) // k0 is there already
	}
	seg.PutAll(entries)
	require.Equal(t, 10, seg.Pending())
	infos, err := store.List(ctx, "c/s/part-")
	require.NoError(t, err)
	require.Empty(t, infos, "no flush before the caller's")
	require.NoError(t, seg.Flush(ctx))
	infos, err = store.List(ctx, "c/s/part-")
	require.NoError(t, err)
	require.Len(t, infos, 1)
	again, err := OpenSegment(ctx, store, "c/s", SegmentOptions{})
	require.NoError(t, err)
	require.Equal(t, 10, again.Loaded())
}

// TestNoUsageIsWarnedOnce checks that a provider answering without usage
// is named in one warning (its tokens and cost are unknown, not 0), and
// that a provider that reports usage is not.
func TestNoUsageIsWarnedOnce(t *testing.T) {
	withUsage := atomic.Bool{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		usage := ""
		if withUsage.Load() {
			usage = `,"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}`
		}
		fmt.Fprintf(w, `{"id":"x","model":"m","choices":[{"message":{"role":"assistant","content":"ok"}}]%s}`, usage)
	}))
	defer hs.Close()
	var logs syncWriter
	var buf bytes.Buffer
	logs.w = &buf
	g := newTestGateway(t, hs.URL+"/v1", nil, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	for i := range 3 {
		resp, err := g.Complete(context.Background(), modelapi.Request{Model: "baseline/m", Messages: userMsg(fmt.Sprint(i)), NoCache: true})
		require.NoError(t, err)
		assert.Zero(t, resp.Usage.PromptTokens)
	}
	assert.Equal(t, 1, strings.Count(buf.String(), "reported no token usage"), buf.String())
	assert.Contains(t, buf.String(), "provider=baseline")

	withUsage.Store(true)
	buf.Reset()
	g2 := newTestGateway(t, hs.URL+"/v1", nil, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	_, err := g2.Complete(context.Background(), modelapi.Request{Model: "baseline/m", Messages: userMsg("x"), NoCache: true})
	require.NoError(t, err)
	assert.NotContains(t, buf.String(), "no token usage")
}

// TestReplyTooLarge: a reply over the reply limit, an answer (streamed
// for ever) or an error body, ends its call at once with the permanent
// class reply-too-large (no retry, the model's failure), having read at
// most the limit, and its error keeps only the start of the reply; a
// reply at the limit passes.
func TestReplyTooLarge(t *testing.T) {
	defer limits.Set(limits.Limits{})
	limits.Set(limits.Limits{ReplyBytes: 64 << 10})
	var calls atomic.Int64
	var sent atomic.Int64
	status := atomic.Int64{}
	status.Store(200)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		w.WriteHeader(int(status.Load()))
		io.WriteString(w, `{"id":"x","model":"m","choices":[{"message":{"role":"assistant","content":"`)
		chunk := bytes.Repeat([]byte("9"), 32<<10)
		for range 20 << 20 / len(chunk) { // a 20 MB reply, unless the client stops reading
			n, err := w.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
		io.WriteString(w, `"}}]}`)
	}))
	defer hs.Close()
	g := newTestGateway(t, hs.URL+"/v1", nil, Options{})
	for _, code := range []int64{200, 500} {
		status.Store(code)
		calls.Store(0)
		_, err := g.Complete(context.Background(), modelapi.Request{Model: "baseline/m", Messages: userMsg("x"), NoCache: true})
		var ge *Error
		require.ErrorAs(t, err, &ge, "HTTP %d", code)
		assert.Equal(t, ClassReplyTooLarge, ge.Class, "HTTP %d: %v", code, err)
		assert.Equal(t, "reply-too-large", ge.Class.String())
		assert.False(t, ge.Retryable())
		assert.True(t, IsModelFailure(err))
		assert.EqualValues(t, 1, calls.Load(), "HTTP %d: a reply too large is not retried", code)
		assert.Contains(t, ge.Message, "limits.max_reply_bytes")
		assert.Contains(t, ge.Message, `{\"id\":\"x\"`)
		assert.LessOrEqual(t, len(ge.Reason()), 500)
	}
	assert.Contains(t, NonRetryableErrorTypes(), "reply-too-large")

	// At the limit: passes.
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		head := `{"id":"x","model":"m","choices":[{"message":{"role":"assistant","content":"`
		tail := `"}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`
		io.WriteString(w, head+strings.Repeat("a", 64<<10-len(head)-len(tail))+tail)
	}))
	defer ok.Close()
	resp, err := newTestGateway(t, ok.URL+"/v1", nil, Options{}).Complete(context.Background(), modelapi.Request{Model: "baseline/m", Messages: userMsg("x"), NoCache: true})
	require.NoError(t, err)
	assert.Len(t, resp.Choices[0].Content, 64<<10-len(`{"id":"x","model":"m","choices":[{"message":{"role":"assistant","content":"`)-len(`"}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`))
}
