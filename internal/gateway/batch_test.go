package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/limits"
	"github.com/benchline/benchline/internal/modelapi"
)

// runBatch sends reqs through the provider's batch API and waits for the
// outcome.
func runBatch(t *testing.T, g *Gateway, reqs []BatchRequest) (BatchStatus, BatchOutcome) {
	t.Helper()
	ctx := context.Background()
	files, err := EncodeBatch(reqs, 1000, 1<<20)
	require.NoError(t, err)
	require.Len(t, files, 1)
	st, err := g.CreateBatch(ctx, BaselineProvider, BatchContentKey(files[0]), files[0])
	require.NoError(t, err)
	found, ok, err := g.FindBatch(ctx, BaselineProvider, BatchContentKey(files[0]))
	require.NoError(t, err)
	require.True(t, ok, "the batch is found by its content key")
	require.Equal(t, st.ID, found.ID)
	for deadline := time.Now().Add(10 * time.Second); !st.Terminal(); {
		require.True(t, time.Now().Before(deadline), "batch %s still %s", st.ID, st.Status)
		time.Sleep(20 * time.Millisecond)
		st, err = g.PollBatch(ctx, BaselineProvider, st.ID)
		require.NoError(t, err)
	}
	byKey := map[string]string{}
	for i := range reqs {
		byKey[reqs[i].Key] = reqs[i].Model
	}
	out, err := g.BatchResults(ctx, BaselineProvider, st, byKey)
	require.NoError(t, err)
	return st, out
}

// collect runs Complete of n questions through a deferring view and
// returns the deferred requests.
func collect(t *testing.T, g *Gateway, n int) []BatchRequest {
	t.Helper()
	c := NewCollector(true)
	for i := range n {
		v, deferred := g.Deferring(c, nil)
		_, err := v.Complete(context.Background(), modelapi.Request{Model: "baseline/reference", Messages: userMsg(fmt.Sprintf("question %d", i))})
		require.True(t, IsDeferred(err), "a miss is deferred: %v", err)
		// Tasks see it without linking the gateway, never as the model's failure.
		wrapped := fmt.Errorf("task: %w", err)
		require.True(t, errors.Is(wrapped, modelapi.ErrDeferred) && !errors.Is(wrapped, modelapi.ErrModelFailure), "%v", err)
		require.True(t, deferred())
	}
	return c.Requests()
}

func TestBatchAnswersEqualCalls(t *testing.T) {
	refs := baseline.NewMemoryReferences()
	for i := range 20 {
		refs.Add(userMsg(fmt.Sprintf("question %d", i)), baseline.Reference{Content: fmt.Sprintf("answer %d", i)})
	}
	srv, url := startBaseline(t, baseline.Options{References: refs, Batch: baseline.BatchOptions{Delay: 50 * time.Millisecond}})
	batchPrices := func(p *Provider) {
		p.Prices = Prices{InputPerMTok: 2, OutputPerMTok: 8}
		p.Batch = &BatchConfig{Enabled: true}
	}
	g := newTestGateway(t, url, batchPrices, Options{})
	reqs := collect(t, g, 20)
	require.Len(t, reqs, 20)
	st, out := runBatch(t, g, reqs)
	require.Equal(t, "completed", st.Status)
	require.Empty(t, out.Failed)
	require.Len(t, out.Entries, 20)

	// The same requests made as calls by another gateway: the same replies,
	// at twice the batch price.
	plain := newTestGateway(t, url, batchPrices, Options{})
	lru := NewLRU(100, 0)
	for _, e := range out.Entries {
		lru.Put(context.Background(), e)
	}
	cached := newTestGateway(t, url, batchPrices, Options{Cache: lru})
	for i := range 20 {
		req := modelapi.Request{Model: "baseline/reference", Messages: userMsg(fmt.Sprintf("question %d", i))}
		want, err := plain.Complete(context.Background(), req)
		require.NoError(t, err)
		got, err := cached.Complete(context.Background(), req)
		require.NoError(t, err)
		require.True(t, got.Usage.CacheHit, "the batch answer is the cached answer of the same call")
		require.Equal(t, want.Choices, got.Choices)
		require.Equal(t, fmt.Sprintf("answer %d", i), got.Choices[0].Content)
		require.InDelta(t, want.Usage.CostUSD/2, got.Usage.CostUSD, 1e-12, "batch price is half")
	}
	require.Equal(t, 1, srv.BatchStats().MaxPerKey)
}

func TestBatchFailures(t *testing.T) {
	cases := []struct {
		name   string
		opts   baseline.BatchOptions
		status string
		failed int
	}{
		{"expired", baseline.BatchOptions{Expire: 1}, "expired", 10},
		{"failed lines", baseline.BatchOptions{FailLines: 1}, "completed", 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, url := startBaseline(t, baseline.Options{Batch: tc.opts})
			g := newTestGateway(t, url, func(p *Provider) { p.Batch = &BatchConfig{Enabled: true} }, Options{})
			st, out := runBatch(t, g, collect(t, g, 10))
			require.Equal(t, tc.status, st.Status)
			require.Len(t, out.Failed, tc.failed)
			for _, e := range out.Failed {
				require.True(t, IsBatchFailure(e), "%v", e)
				require.True(t, e.Class.Retryable())
			}
		})
	}
}

func TestBatchNeverCompletesAndCancel(t *testing.T) {
	srv, url := startBaseline(t, baseline.Options{Batch: baseline.BatchOptions{Never: 1}})
	g := newTestGateway(t, url, func(p *Provider) { p.Batch = &BatchConfig{Enabled: true} }, Options{})
	files, err := EncodeBatch(collect(t, g, 3), 100, 1<<20)
	require.NoError(t, err)
	st, err := g.CreateBatch(context.Background(), BaselineProvider, "k", files[0])
	require.NoError(t, err)
	time.Sleep(20 * time.Millisecond)
	st, err = g.PollBatch(context.Background(), BaselineProvider, st.ID)
	require.NoError(t, err)
	require.Equal(t, "in_progress", st.Status)
	require.NoError(t, g.CancelBatch(context.Background(), BaselineProvider, st.ID))
	st, err = g.PollBatch(context.Background(), BaselineProvider, st.ID)
	require.NoError(t, err)
	require.Equal(t, "cancelled", st.Status)
	require.EqualValues(t, 1, srv.BatchStats().Cancelled)
}

func TestEncodeBatchLimits(t *testing.T) {
	reqs := make([]BatchRequest, 5)
	for i := range reqs {
		reqs[i] = BatchRequest{Key: fmt.Sprintf("k%d", i), Model: "baseline/echo"}
	}
	cases := []struct {
		maxReqs  int
		maxBytes int64
		files    int
	}{
		{10, 1 << 20, 1},
		{2, 1 << 20, 3},
		{1, 1 << 20, 5},
		{10, 250, 3}, // a line is about 115 bytes: two a file
	}
	for _, tc := range cases {
		files, err := EncodeBatch(reqs, tc.maxReqs, tc.maxBytes)
		require.NoError(t, err)
		require.Len(t, files, tc.files, "max %d requests, %d bytes", tc.maxReqs, tc.maxBytes)
	}
	_, err := EncodeBatch(reqs, 10, 50)
	require.ErrorContains(t, err, "exceeds max_bytes")
}

func TestBatchConfigValidate(t *testing.T) {
	b := &BatchConfig{Enabled: true}
	require.NoError(t, b.validate())
	require.Equal(t, 24*time.Hour+time.Hour, b.Bound())
	require.Equal(t, 0.5, b.Discount)
	for _, bad := range []BatchConfig{{CompletionWindow: "a day"}, {Discount: 2}, {Fallback: "smoke"}, {Retries: -2}} {
		require.Error(t, bad.validate(), "%+v", bad)
	}
}

// TestBatchResultFileLimits: a result file is bounded by max_result_bytes,
// not by the reply limit (which bounds each of its answers); a download
// cut short is a retryable download error, not a line that does not
// decode. Found at a shard of 5,000: its 2.6 MB output file stopped at
// the 1 MiB reply limit, mid-line, and every retry failed the same way.
func TestBatchResultFileLimits(t *testing.T) {
	defer limits.Set(limits.Limits{})
	limits.Set(limits.Limits{ReplyBytes: 4 << 10}) // each output line is about 500 bytes
	refs := baseline.NewMemoryReferences()
	for i := range 40 {
		content := fmt.Sprintf("answer %d", i)
		if i == 7 {
			content = strings.Repeat("long ", 2000) // one answer over the reply limit
		}
		refs.Add(userMsg(fmt.Sprintf("question %d", i)), baseline.Reference{Content: content})
	}
	srv, err := baseline.New(baseline.Options{References: refs})
	require.NoError(t, err)
	// A proxy that can cut the result files' downloads short.
	var cut atomic.Bool
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !cut.Load() || !strings.HasSuffix(r.URL.Path, "/content") {
			srv.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body[:len(body)/2]) // then the connection closes: unexpected EOF
	}))
	t.Cleanup(hs.Close)
	enabled := func(max int64) func(p *Provider) {
		return func(p *Provider) { p.Batch = &BatchConfig{Enabled: true, MaxResultBytes: max} }
	}

	g := newTestGateway(t, hs.URL+"/v1", enabled(0), Options{})
	st, out := runBatch(t, g, collect(t, g, 40))
	require.Equal(t, "completed", st.Status)
	require.Len(t, out.Entries, 39, "a file of 40 answers, about 30 KB, read whole past the 4 KB reply limit")
	require.Len(t, out.Failed, 1)
	for _, e := range out.Failed {
		require.Equal(t, ClassReplyTooLarge, e.Class, "the one answer over the reply limit: %v", e)
		require.Contains(t, e.Message, "larger than 4096 bytes")
	}

	reqs := collect(t, g, 40)
	byKey := map[string]string{}
	for i := range reqs {
		byKey[reqs[i].Key] = reqs[i].Model
	}
	t.Run("cut short", func(t *testing.T) {
		cut.Store(true)
		defer cut.Store(false)
		g := newTestGateway(t, hs.URL+"/v1", enabled(0), Options{})
		_, err := g.BatchResults(context.Background(), BaselineProvider, st, byKey)
		var e *Error
		require.ErrorAs(t, err, &e)
		require.Contains(t, e.Message, "download failed after line")
		require.NotContains(t, e.Message, "does not decode")
		require.Equal(t, ClassNetwork, e.Class, "%v", e)
	})
	// A file over max_result_bytes is read up to the limit: the answers
	// before it are kept (the one over the reply limit, line 8, is still
	// its sample's failure), the requests past it fail unanswered and
	// retryable, as an expired batch's do, naming the file and the limit.
	t.Run("over max_result_bytes", func(t *testing.T) {
		g := newTestGateway(t, hs.URL+"/v1", enabled(20<<10), Options{})
		part, err := g.BatchResults(context.Background(), BaselineProvider, st, byKey)
		require.NoError(t, err)
		require.NotEmpty(t, part.Entries, "the answers within 20 KiB of the file")
		require.Len(t, part.Failed, 40-len(part.Entries))
		whole := map[string]string{}
		for _, e := range out.Entries {
			whole[e.Key] = e.Response.Choices[0].Content
		}
		for _, e := range part.Entries {
			require.Equal(t, whole[e.Key], e.Response.Choices[0].Content, "an answer read before the limit is the answer")
		}
		past := 0
		for k, e := range part.Failed {
			if e.Class == ClassReplyTooLarge {
				continue
			}
			past++
			require.Equal(t, ClassServer, e.Class, "%s: %v", k, e)
			require.True(t, IsBatchFailure(e), "%v", e)
			require.Contains(t, e.Message, "exceeds max_result_bytes 20480")
			require.Contains(t, e.Message, st.OutputFileID)
		}
		require.Greater(t, past, 10, "the requests past 20 KiB of a 30 KB file")
	})
}

// deferOne makes one Complete of req through a deferring view with memo m
// and returns the deferred request.
func deferOne(t *testing.T, g *Gateway, m *KeyMemo, req modelapi.Request) BatchRequest {
	t.Helper()
	c := NewCollector(true)
	v, deferred := g.Deferring(c, m)
	_, err := v.Complete(context.Background(), req)
	require.True(t, IsDeferred(err), "%v", err)
	require.True(t, deferred())
	reqs := c.Requests()
	require.Len(t, reqs, 1)
	return reqs[0]
}

// A deferred request's batch line is put together around the JSON its
// cache key hashed, the bytes json.Marshal of the line gives, for a request
// without free-form values; one with tools (whose key hashes their schemas
// with sorted keys) is encoded as a call sends it, key order and all; and
// the line is the same again when the request is keyed from a KeyMemo (no
// JSON kept: the line is encoded anew).
func TestBatchLineFromKeyJSON(t *testing.T) {
	g := newTestGateway(t, "http://127.0.0.1:1/v1", func(p *Provider) { p.Batch = &BatchConfig{Enabled: true} }, Options{})
	tools := []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "f",
		Parameters: json.RawMessage(`{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"number"}}}`)}}}
	schema := &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
		JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "v", Schema: json.RawMessage(`{"type":"object","properties":{"z":{},"a":{}}}`)}}
	for _, tc := range []struct {
		name     string
		req      modelapi.Request
		keyJSON  bool // the line reuses the key's JSON
		contains string
	}{
		{"plain", modelapi.Request{Model: "baseline/reference", Messages: userMsg("what is <1> & \u2028 \"2\"?")}, true, ""},
		{"oracle", modelapi.Request{Model: "baseline/judge-oracle", Messages: userMsg("q"), Oracle: "A"}, true, ""},
		{"tools", modelapi.Request{Model: "baseline/reference", Messages: userMsg("call f"), Tools: tools}, false, `"properties":{"z":{"type":"string"},"a":`},
		{"schema", modelapi.Request{Model: "baseline/reference", Messages: userMsg("json"), Params: modelapi.Params{ResponseFormat: schema}}, false, `"properties":{"z":{},"a":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &KeyMemo{}
			r := deferOne(t, g, m, tc.req)
			require.Equal(t, tc.keyJSON, r.body != nil, "the request carries its key's JSON")
			require.Equal(t, tc.keyJSON, r.Body == nil, "and then not the request itself")
			got, err := appendLine(nil, r)
			require.NoError(t, err)

			// The next round: the same request is keyed from the memo (a
			// request of text; one with tools or a schema is keyed again),
			// and its line encoded anew, by json.Marshal of the line.
			again := deferOne(t, g, m, tc.req)
			require.Equal(t, r.Key, again.Key)
			require.Nil(t, again.body, "keyed from the memo, not encoded")
			require.NotNil(t, again.Body)
			if tc.keyJSON {
				require.Len(t, m.entries, 1)
			} else {
				require.Empty(t, m.entries)
			}
			want, err := appendLine(nil, again)
			require.NoError(t, err)
			require.Equal(t, string(want), string(got))
			require.Contains(t, string(got), tc.contains, "the line carries the request as a call sends it")
			back, err := DecodeBatch(BaselineProvider, got)
			require.NoError(t, err)
			require.Len(t, back, 1)
			require.Equal(t, r.Key, back[0].Key)
			require.Equal(t, tc.req.Oracle, back[0].Oracle)
			m2, err := BatchManifest([]BatchRequest{r, again})
			require.NoError(t, err)
			back, err = DecodeBatch(BaselineProvider, m2)
			require.NoError(t, err)
			require.Equal(t, back[0].Model, back[1].Model, "the manifest names the model either way")
			require.Equal(t, tc.req.Model, back[0].Model)
		})
	}
}

// A KeyMemo gives a request's key only to an equal request: another
// message, parameter, sample index or oracle is keyed anew, to the key
// the gateway gives it without a memo.
func TestKeyMemo(t *testing.T) {
	g := newTestGateway(t, "http://127.0.0.1:1/v1", func(p *Provider) { p.Batch = &BatchConfig{Enabled: true} }, Options{})
	base := modelapi.Request{Model: "baseline/reference", Messages: userMsg("q")}
	temp := float32(0.5)
	seed := 7
	variants := []func(r *modelapi.Request){
		func(r *modelapi.Request) {},
		func(r *modelapi.Request) { r.Messages = userMsg("q2") },
		func(r *modelapi.Request) { r.Params.Temperature = &temp },
		func(r *modelapi.Request) { r.Seed = &seed },
		func(r *modelapi.Request) { r.SampleIndex = 1 },
		func(r *modelapi.Request) { r.Model = "baseline/judge-oracle"; r.Oracle = "B" },
		func(r *modelapi.Request) { r.Model = "baseline/judge-oracle"; r.Oracle = "C" },
	}
	m := &KeyMemo{}
	seen := map[string]bool{}
	for round := range 2 {
		for i, mut := range variants {
			req := base
			req.Messages = slices.Clone(base.Messages) // a new slice each round, as a task builds it
			mut(&req)
			want := deferOne(t, g, nil, req).Key
			got := deferOne(t, g, m, req).Key
			require.Equal(t, want, got, "variant %d, round %d", i, round)
			if round == 0 {
				require.False(t, seen[got], "variant %d has a key of its own", i)
				seen[got] = true
			}
		}
		require.Len(t, m.entries, len(variants), "round %d: every variant keyed once", round)
	}
}

// An answer line decoded in one step (decodeAnswer) converts to the
// Response the full decode of the line's body as a chat completion gives;
// a line that is not an answer within the limit is left to the full
// decode.
func TestDecodeAnswer(t *testing.T) {
	g := newTestGateway(t, "http://127.0.0.1:1/v1", nil, Options{})
	p := g.providers[BaselineProvider]
	body := func(b string) string {
		return `{"id":"batch_req_1","custom_id":"k1","response":{"status_code":200,"request_id":"r","body":` + b + `},"error":null}`
	}
	answers := []string{
		`{"id":"c1","object":"chat.completion","created":1,"model":"reference","choices":[{"index":0,"message":{"role":"assistant","content":"6912"},"finish_reason":"stop"}],"usage":{"prompt_tokens":31,"completion_tokens":2,"total_tokens":33}}`,
		`{"id":"c2","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"t1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":7}}`,
		`{"id":"c3","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"","refusal":"no"},"finish_reason":"stop"},{"index":1,"message":{"role":"assistant","content":"b\u00e9 \ud83d\ude00","reasoning_content":"think"},"finish_reason":"length"}]}`,
		`{"id":"c4","model":"m","choices":[]}`,
		`{"id":"c5","model":"m","choices":[{"message":{"content":"x","unknown":{"deep":[1,2]}},"finish_reason":"stop","logprobs":null}],"system_fingerprint":"fp"}`,
	}
	for i, a := range answers {
		id, got, ok := decodeAnswer([]byte(body(a)), 1<<20)
		require.True(t, ok, "answer %d", i)
		require.Equal(t, "k1", id)
		var want openai.ChatCompletionResponse
		require.NoError(t, json.Unmarshal([]byte(a), &want))
		gr, ge := g.answer(context.Background(), p, "baseline/m", got, 0, 0)
		wr, we := g.answer(context.Background(), p, "baseline/m", want, 0, 0)
		require.Equal(t, we, ge, "answer %d", i)
		require.Equal(t, wr, gr, "answer %d", i)
	}
	for i, l := range []string{
		body(answers[0])[:40],
		`{"custom_id":"k1","response":{"status_code":500,"body":{"error":{"message":"x"}}}}`,
		`{"custom_id":"k1","response":null,"error":{"code":"batch_expired","message":"x"}}`,
		body(`{"choices":[{"message":{"content":[{"type":"text","text":"parts"}]}}]}`),
	} {
		_, _, ok := decodeAnswer([]byte(l), 1<<20)
		require.False(t, ok, "line %d is left to the full decode", i)
	}
	_, _, ok := decodeAnswer([]byte(body(answers[0])), 100)
	require.False(t, ok, "a line over the limit is left to the full decode, which names the limit")
}

// nonZero returns a value of t other than its zero value.
func nonZero(t *testing.T, typ reflect.Type) reflect.Value {
	v := reflect.New(typ).Elem()
	switch typ.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.Pointer:
		v.Set(reflect.New(typ.Elem()))
	case reflect.Slice:
		v.Set(reflect.MakeSlice(typ, 1, 1))
	case reflect.Interface:
		v.Set(reflect.ValueOf("x"))
	case reflect.Struct:
		f := typ.Field(0)
		if f.IsExported() {
			v.Field(0).Set(nonZero(t, f.Type))
		}
	default:
		t.Fatalf("no non-zero value for %s", typ)
	}
	return v
}

// sameRequest tells apart two requests that differ in any one field of the
// request, of its parameters or of a message: a go-openai upgrade that
// adds a message field sameMessage does not compare fails here, not in a
// wrong cache key.
func TestSameRequestFields(t *testing.T) {
	base := modelapi.Request{Model: "baseline/m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "q"}}}
	same := base
	same.Messages = slices.Clone(base.Messages)
	require.True(t, sameRequest(&base, &same))
	empty := same
	empty.Tools = []openai.Tool{}
	require.True(t, sameRequest(&base, &empty), "an empty slice sends what a nil one does")

	set := func(v reflect.Value, name string) {
		t.Helper()
		f, _ := v.Type().FieldByName(name)
		v.FieldByName(name).Set(nonZero(t, f.Type))
	}
	for i := range reflect.TypeFor[modelapi.Request]().NumField() {
		name := reflect.TypeFor[modelapi.Request]().Field(i).Name
		if name == "Messages" {
			continue
		}
		other := base
		set(reflect.ValueOf(&other).Elem(), name)
		require.False(t, sameRequest(&base, &other), "requests differing in %s", name)
	}
	for i := range reflect.TypeFor[modelapi.Params]().NumField() {
		name := reflect.TypeFor[modelapi.Params]().Field(i).Name
		other := base
		set(reflect.ValueOf(&other.Params).Elem(), name)
		require.False(t, sameRequest(&base, &other), "requests differing in Params.%s", name)
	}
	for i := range reflect.TypeFor[openai.ChatCompletionMessage]().NumField() {
		f := reflect.TypeFor[openai.ChatCompletionMessage]().Field(i)
		if !f.IsExported() {
			continue
		}
		other := base
		other.Messages = slices.Clone(base.Messages)
		set(reflect.ValueOf(&other.Messages[0]).Elem(), f.Name)
		require.False(t, sameRequest(&base, &other), "messages differing in %s", f.Name)
	}
	longer := base
	longer.Messages = append(slices.Clone(base.Messages), base.Messages[0])
	require.False(t, sameRequest(&base, &longer))
	s1, s2 := 1, 2
	a, b := base, base
	a.Seed, b.Seed = &s1, &s2
	require.False(t, sameRequest(&a, &b), "seeds 1 and 2")
}

// A round's requests come sorted by provider, then by key: each provider's
// requests are a run of the slice, the batch file's order.
func TestCollectorRequestsOrder(t *testing.T) {
	c := NewCollector(true)
	c.Reserve(2) // fewer than come: the rest grow the collector
	// "a" twice: two samples deferring the same request make one line.
	for _, r := range []BatchRequest{{Key: "b", Provider: "p2"}, {Key: "c", Provider: "p1"}, {Key: "a", Provider: "p2"}, {Key: "d", Provider: "p1"}, {Key: "a", Provider: "p2"}} {
		c.add(r)
	}
	keys := func() []string {
		var got []string
		for _, r := range c.Requests() {
			got = append(got, r.Provider+"/"+r.Key)
		}
		return got
	}
	require.Equal(t, []string{"p1/c", "p1/d", "p2/a", "p2/b"}, keys())
	require.Empty(t, c.Requests(), "forgotten once returned")
	c.add(BatchRequest{Key: "a", Provider: "p2"}) // the next round's
	require.Equal(t, []string{"p2/a"}, keys())
}

// permute places each element where the order puts it, in place, for
// every permutation of up to six positions (cycles of every length, fixed
// points, the identity) and for a large random one.
func TestPermute(t *testing.T) {
	check := func(order []int32) {
		t.Helper()
		s := make([]string, len(order))
		for i := range s {
			s[i] = fmt.Sprint(i)
		}
		want := make([]string, len(order))
		for i, j := range order {
			want[i] = s[j]
		}
		permute(s, slices.Clone(order))
		require.Equal(t, want, s, "order %v", order)
	}
	var all func(prefix []int32, n int)
	all = func(prefix []int32, n int) {
		if len(prefix) == n {
			check(prefix)
			return
		}
		for v := range int32(n) {
			if !slices.Contains(prefix, v) {
				all(append(slices.Clone(prefix), v), n)
			}
		}
	}
	for n := range 7 {
		all(nil, n)
	}
	r := rand.New(rand.NewPCG(1, 2))
	order := make([]int32, 10000)
	for i, v := range r.Perm(len(order)) {
		order[i] = int32(v)
	}
	check(order)
}

// A task that changes its own request after a call (a message slice reused
// for the next question) gets the changed request's key: the memo holds a
// copy of what it remembered.
func TestKeyMemoCopies(t *testing.T) {
	g := newTestGateway(t, "http://127.0.0.1:1/v1", func(p *Provider) { p.Batch = &BatchConfig{Enabled: true} }, Options{})
	temp, seed := float32(0.5), 7
	msgs := []openai.ChatCompletionMessage{{Role: "system", Content: "Answer."}, {Role: "user", Content: "first"}}
	req := modelapi.Request{Model: "baseline/reference", Messages: msgs, Seed: &seed, Params: modelapi.Params{Temperature: &temp, Stop: []string{"x"}}}
	m := &KeyMemo{}
	first := deferOne(t, g, m, req).Key
	for name, change := range map[string]func(){
		"message": func() { msgs[1].Content = "second" },
		"seed":    func() { seed = 8 },
		"temp":    func() { temp = 0.9 },
		"stop":    func() { req.Params.Stop[0] = "y" },
	} {
		change()
		want := deferOne(t, g, nil, req).Key
		require.NotEqual(t, first, want, name)
		require.Equal(t, want, deferOne(t, g, m, req).Key, "after a change of the %s in place", name)
	}
}

// TestBatchManifest: a manifest reads back, through DecodeBatch, as its
// requests' keys and models, at a fraction of the file's bytes.
func TestBatchManifest(t *testing.T) {
	reqs := []BatchRequest{
		{Key: "k1", Provider: "p", Model: "p/m1", Body: &openai.ChatCompletionRequest{Model: "m1", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: strings.Repeat("long question ", 20)}}}},
		{Key: "k\"2", Provider: "p", Model: "p/odd \"model\"\n", Body: &openai.ChatCompletionRequest{Model: "odd \"model\"\n", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "q"}}}},
	}
	m, err := BatchManifest(reqs)
	require.NoError(t, err)
	back, err := DecodeBatch("p", m)
	require.NoError(t, err)
	require.Len(t, back, 2)
	for i, r := range back {
		require.Equal(t, reqs[i].Key, r.Key)
		require.Equal(t, reqs[i].Model, r.Model)
		require.Empty(t, r.Body.Messages)
	}
	files, err := EncodeBatch(reqs, 10, 1<<20)
	require.NoError(t, err)
	require.Less(t, 3*len(m), len(files[0]))
}

// A line put together around a request's JSON quotes its custom_id as
// json.Marshal does, whatever the key holds.
func TestBatchLineQuotesKey(t *testing.T) {
	for _, key := range []string{"3f6c", `k"\`, "<&>", "\u2028\u2029", "\x00\x1f\x7f", "\xff bad", "é"} {
		got, err := appendLine(nil, BatchRequest{Key: key, body: []byte(`{"model":"m"}`)})
		require.NoError(t, err)
		id, err := json.Marshal(key)
		require.NoError(t, err)
		want := lineHead + string(id) + lineBody + `{"model":"m"}` + "}\n"
		require.Equal(t, want, string(got))
	}
}
