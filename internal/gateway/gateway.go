// Package gateway is benchline's one client for every OpenAI-compatible
// model endpoint (OpenAI, vLLM, Ollama, company gateways, the built-in
// baselines). It adds what a 100,000-sample run needs on top of go-openai:
// per-provider adaptive concurrency and request/token budgets, classified
// errors that say whether to retry (and when), a response cache keyed by the
// exact request, and per-call accounting of tokens, cost, latency and
// attempts. API keys are read from the environment at call time and never
// appear in errors, logs or results.
//
// By default Complete makes one HTTP attempt: retries belong to Temporal,
// which gets the provider's Retry-After through ToTemporal. RetryPolicy
// enables retries inside the call for shard activities that make many calls.
// See docs/gateway.md.
package gateway

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/limits"
	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/internal/secret"
)

// RetryPolicy retries retryable failures inside Complete. The default (zero
// value) is one attempt: a failure goes back to Temporal.
type RetryPolicy struct {
	// MaxAttempts counts HTTP attempts; 0 or 1 means no retry.
	MaxAttempts int
	// InitialBackoff before the second attempt; default 500ms.
	InitialBackoff time.Duration
	// MaxBackoff caps a backoff; default 30s. A longer Retry-After is
	// still honoured.
	MaxBackoff time.Duration
	// Multiplier grows the backoff; default 2.
	Multiplier float64
	// MaxElapsed stops retrying when the next attempt would start later
	// than this after the first; 0 means only the context bounds it.
	MaxElapsed time.Duration
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	p.MaxAttempts = max(p.MaxAttempts, 1)
	if p.InitialBackoff <= 0 {
		p.InitialBackoff = 500 * time.Millisecond
	}
	if p.MaxBackoff <= 0 {
		p.MaxBackoff = 30 * time.Second
	}
	if p.Multiplier < 1 {
		p.Multiplier = 2
	}
	return p
}

// backoff before attempt n+1 (n ≥ 1), jittered to [b/2, b], and never less
// than the server's Retry-After.
func (p RetryPolicy) backoff(n int, retryAfter time.Duration) time.Duration {
	b := float64(p.InitialBackoff) * math.Pow(p.Multiplier, float64(n-1))
	b = math.Min(b, float64(p.MaxBackoff))
	d := time.Duration(b/2 + rand.Float64()*b/2)
	return max(d, retryAfter)
}

// Options configures a Gateway.
type Options struct {
	// Config holds the providers; required (see LoadConfig).
	Config *Config
	// Env reads API keys at call time; default os.LookupEnv.
	Env Env
	// Cache is the process-wide answer cache; default NewLRU(10000, CacheTTL).
	Cache Cache
	// CacheTTL is the LRU's TTL when Cache is nil.
	CacheTTL time.Duration
	// Retry is the in-call retry policy; default one attempt.
	Retry RetryPolicy
	// WorkerShare divides every provider's request and token limits: set it
	// to the number of worker processes when the budget is not also
	// enforced by a per-provider task queue. Default 1.
	WorkerShare int
	// Logger receives one debug record per call and a warning per failed
	// attempt; default discards. Records never hold keys or prompts.
	Logger *slog.Logger
	// Transport is the HTTP transport; default a tuned http.Transport.
	Transport http.RoundTripper
	// Observer is told of every call and limiter wait (metrics); nil: none.
	Observer Observer
}

// Observer receives what the gateway measures. Its methods are called on
// the calling goroutine, so they must be cheap and safe for concurrent use
// (metrics.Metrics implements it).
type Observer interface {
	// ModelCall is called once per Complete or Reward call, with status
	// "ok", "cache_hit" or the failure's class (ClassOf(err).String()),
	// and the answer's usage.
	ModelCall(provider, model, status string, u modelapi.Usage)
	// LimiterWait is called once per HTTP attempt with the time it waited
	// for its provider's limiter.
	LimiterWait(provider string, d time.Duration)
}

type provider struct {
	name    string
	cfg     Provider
	client  *openai.Client
	http    *http.Client // adds the key and records each attempt; shared with client
	limiter *Limiter
}

type core struct {
	providers map[string]*provider
	env       Env
	lru       Cache
	log       *slog.Logger
	obs       Observer

	redMu  sync.Mutex
	red    *Redactor
	redSum [sha256.Size]byte // of the keys red was built for

	noUsage sync.Map // provider name → true once warned that it reports no usage
}

// checkUsage warns, once per provider, when an answer has no token usage
// (every real call has at least one prompt token): its tokens and cost are
// then unknown, and run summaries say so (aggregate.Summary.UsageUnknown).
func (c *core) checkUsage(ctx context.Context, provider string, promptTokens, completionTokens int) {
	if promptTokens != 0 || completionTokens != 0 {
		return
	}
	if _, warned := c.noUsage.LoadOrStore(provider, true); !warned {
		c.log.WarnContext(ctx, "provider reported no token usage: its tokens and cost are unknown, counted as 0", "provider", provider)
	}
}

// redactor returns a Redactor for the keys of every provider, as the
// environment holds them now (keys are read at call time, so they may
// change); it is rebuilt only when they do.
func (c *core) redactor() *Redactor {
	h := sha256.New()
	keys := make([]string, 0, len(c.providers))
	for _, name := range slices.Sorted(maps.Keys(c.providers)) {
		if env := c.providers[name].cfg.APIKeyEnv; env != "" {
			if k := apiKey(c.env, env); !k.IsZero() {
				keys = append(keys, k.Reveal())
				h.Write([]byte(k.Reveal()))
				h.Write([]byte{0})
			}
		}
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	c.redMu.Lock()
	defer c.redMu.Unlock()
	if c.red == nil || sum != c.redSum {
		c.red, c.redSum = NewRedactor(keys...), sum
	}
	return c.red
}

// Gateway sends requests to providers. It is safe for concurrent use; views
// made by WithCache and WithRetry share its limiters and clients.
type Gateway struct {
	*core
	segment Cache // consulted before the LRU; may be nil
	retry   RetryPolicy
	batch   *batchView // a batch run's pass (Deferring); nil: every miss is called
}

// New builds a Gateway.
func New(opts Options) (*Gateway, error) {
	if opts.Config == nil {
		return nil, errors.New("gateway: Options.Config is required")
	}
	if err := opts.Config.Validate(); err != nil {
		return nil, err
	}
	c := &core{providers: map[string]*provider{}, env: opts.Env, lru: opts.Cache, log: opts.Logger, obs: opts.Observer}
	if c.env == nil {
		c.env = defaultEnv
	}
	if c.lru == nil {
		c.lru = NewLRU(0, opts.CacheTTL)
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	for _, name := range opts.Config.Names() {
		p := *opts.Config.Providers[name]
		base := opts.Transport
		if base == nil {
			base = newTransport(p.MaxConcurrency)
		}
		oc := openai.DefaultConfig("") // the key is added per request by authTransport
		oc.BaseURL = p.BaseURL
		at := &authTransport{base: base, env: c.env, keyEnv: p.APIKeyEnv, oracle: name == BaselineProvider}
		for _, s := range []string{p.BaseURL, p.RewardEndpoint()} {
			if u, err := url.Parse(s); err == nil { // Validate checked them
				at.origins = append(at.origins, originOf(u))
			}
		}
		hc := &http.Client{Transport: at, CheckRedirect: checkRedirect(name)}
		oc.HTTPClient = hc
		c.providers[name] = &provider{name: name, cfg: p, client: openai.NewClientWithConfig(oc), http: hc, limiter: NewLimiter(p, opts.WorkerShare)}
	}
	return &Gateway{core: c, retry: opts.Retry.withDefaults()}, nil
}

// WithCache returns a view of g that consults c (e.g. a shard's Segment)
// before the process LRU and stores new answers in both.
func (g *Gateway) WithCache(c Cache) *Gateway {
	v := *g
	v.segment = c
	return &v
}

// WithRetry returns a view of g with another in-call retry policy.
func (g *Gateway) WithRetry(p RetryPolicy) *Gateway {
	v := *g
	v.retry = p.withDefaults()
	return &v
}

// Limiter returns the limiter of a provider, nil if unknown.
func (g *Gateway) Limiter(provider string) *Limiter {
	if p, ok := g.providers[provider]; ok {
		return p.limiter
	}
	return nil
}

// Providers lists the configured providers' names, sorted.
func (g *Gateway) Providers() []string { return slices.Sorted(maps.Keys(g.providers)) }

// observe tells the observer, if any, how a call of model ended.
func (c *core) observe(model string, u modelapi.Usage, err error) {
	if c.obs == nil {
		return
	}
	pname, mname, _ := strings.Cut(model, "/")
	status := "ok"
	switch {
	case err != nil:
		status = ClassOf(err).String()
	case u.CacheHit:
		status = "cache_hit"
	}
	c.obs.ModelCall(pname, mname, status, u)
}

// Complete sends req and returns the answer. Every error is an *Error.
func (g *Gateway) Complete(ctx context.Context, req modelapi.Request) (modelapi.Response, error) {
	resp, err := g.complete(ctx, req)
	g.observe(req.Model, resp.Usage, err)
	return resp, err
}

func (g *Gateway) complete(ctx context.Context, req modelapi.Request) (modelapi.Response, error) {
	p, pname, model, gerr := g.resolve(req.Model)
	if gerr != nil {
		return modelapi.Response{}, gerr
	}
	if p.cfg.KindOf(model) == modelapi.ModelReward {
		return modelapi.Response{}, &Error{Class: ClassNotFound, Model: req.Model, Message: fmt.Sprintf(
			"a reward model (reward_models of provider %q): it scores replies through Reward and has no chat completions", pname)}
	}
	oreq := p.build(model, req)
	oracle, gerr := oracleFor(pname, req)
	if gerr != nil {
		return modelapi.Response{}, gerr
	}
	ctx = withOracle(ctx, oracle)
	var key string
	var body []byte // the request's JSON, for a batch line
	if !req.NoCache {
		var ok bool
		if key, ok = g.memoized(&req); !ok {
			var err error
			if key, body, err = cacheKey(pname, oreq, req.SampleIndex); err != nil {
				return modelapi.Response{}, &Error{Class: ClassBadRequest, Model: req.Model, Message: err.Error()}
			}
			key = oracleCacheKey(key, oracle)
			g.memoize(req, key)
		}
		if e, ok := g.lookup(ctx, key); ok && e.Reward == nil {
			if g.log.Enabled(ctx, slog.LevelDebug) {
				g.log.DebugContext(ctx, "gateway call", "model", req.Model, "cache_hit", true)
			}
			resp := e.Response
			resp.Usage.CacheHit = true
			resp.Usage.Attempts = 0
			if g.batch != nil && g.batch.coll.isPaid(key) {
				// Paid in this run's batch: the call it stands for.
				resp.Usage.CacheHit, resp.Usage.Attempts = false, 1
			}
			return resp, nil
		}
	}
	if gerr, ok := g.viaBatch(p, pname, key, oracle, req, oreq, body); ok {
		return modelapi.Response{}, gerr
	}
	resp, err := g.send(ctx, p, req.Model, oreq)
	if err != nil {
		return modelapi.Response{}, err
	}
	if !req.NoCache {
		g.store(ctx, Entry{Key: key, Created: time.Now().UTC(), Response: resp})
	}
	return resp, nil
}

// resolve finds the provider of "<provider>/<model>".
func (g *Gateway) resolve(name string) (p *provider, pname, model string, gerr *Error) {
	pname, model, err := ParseModel(name)
	if err != nil {
		return nil, "", "", &Error{Class: ClassBadRequest, Model: name, Message: err.Error()}
	}
	p, ok := g.providers[pname]
	if !ok {
		// The process that calls may not be the one that checked the name
		// (a worker started without the CLI's providers file): say which
		// providers this one has and where it got them.
		return nil, "", "", &Error{Class: ClassNotFound, Model: name, Message: fmt.Sprintf(
			"unknown provider %q (this process has %s; a worker reads its providers from BENCHLINE_PROVIDERS or models.providers_file when it starts)",
			pname, strings.Join(g.Providers(), ", "))}
	}
	return p, pname, model, nil
}

// lookup finds a cached entry in the segment, then the LRU.
func (g *Gateway) lookup(ctx context.Context, key string) (Entry, bool) {
	var e Entry
	ok := false
	if g.segment != nil {
		e, ok = g.segment.Get(ctx, key)
	}
	if !ok {
		if e, ok = g.lru.Get(ctx, key); ok && g.segment != nil {
			g.segment.Put(ctx, e) // so a retry of this shard finds it too
		}
	}
	return e, ok
}

// store caches a new answer in the segment (if any) and the LRU.
func (g *Gateway) store(ctx context.Context, e Entry) {
	if g.segment != nil {
		g.segment.Put(ctx, e)
	}
	g.lru.Put(ctx, e)
}

// send makes up to retry.MaxAttempts HTTP attempts.
func (g *Gateway) send(ctx context.Context, p *provider, name string, oreq openai.ChatCompletionRequest) (modelapi.Response, error) {
	est := estimateTokens(oreq)
	var resp modelapi.Response
	n, gerr := g.retrying(ctx, name, func() (modelapi.Usage, *Error) {
		var e *Error
		resp, e = g.attempt(ctx, p, name, oreq, est)
		return resp.Usage, e
	})
	if gerr != nil {
		return modelapi.Response{}, gerr
	}
	resp.Usage.Attempts = n
	return resp, nil
}

// retrying calls once, one HTTP attempt, until it succeeds, fails with a
// permanent class, or the retry policy gives up; it returns the number of
// attempts made. Every failed attempt is logged with its class.
func (g *Gateway) retrying(ctx context.Context, name string, once func() (modelapi.Usage, *Error)) (int, *Error) {
	start := time.Now()
	for attempt := 1; ; attempt++ {
		u, gerr := once()
		if gerr == nil {
			if g.log.Enabled(ctx, slog.LevelDebug) {
				g.log.DebugContext(ctx, "gateway call", "model", name, "attempts", attempt,
					"latency", u.Latency, "prompt_tokens", u.PromptTokens,
					"completion_tokens", u.CompletionTokens, "cache_hit", false)
			}
			return attempt, nil
		}
		gerr.Attempts = attempt
		g.log.WarnContext(ctx, "gateway attempt failed", "model", name, "attempt", attempt,
			"class", gerr.Class.String(), "status", gerr.Status, "retry_after", gerr.RetryAfter)
		if !gerr.Class.Retryable() || attempt >= g.retry.MaxAttempts {
			return attempt, gerr
		}
		wait := g.retry.backoff(attempt, gerr.RetryAfter)
		if g.retry.MaxElapsed > 0 && time.Since(start)+wait > g.retry.MaxElapsed {
			return attempt, gerr
		}
		if err := sleep(ctx, wait); err != nil {
			return attempt, &Error{Class: ClassCanceled, Model: name, Attempts: attempt, Message: err.Error(), cause: err}
		}
	}
}

// estimateTokens is what the token budget charges before the call: four
// characters a prompt token, plus max_tokens per choice (512 when unset).
func estimateTokens(o openai.ChatCompletionRequest) int {
	chars := messageChars(o.Messages) + 200*len(o.Tools)
	//lint:ignore SA1019 max_tokens is what vLLM, Ollama and most compatible servers read (see build)
	out := max(o.MaxTokens, o.MaxCompletionTokens)
	if out == 0 {
		out = 512
	}
	return chars/4 + out*max(o.N, 1)
}

// messageChars is the text size of messages, for token estimates.
func messageChars(msgs []openai.ChatCompletionMessage) int {
	chars := 0
	for _, m := range msgs {
		chars += len(m.Content) + 16
		for _, part := range m.MultiContent {
			chars += len(part.Text)
		}
		for _, tc := range m.ToolCalls {
			chars += len(tc.Function.Name) + len(tc.Function.Arguments)
		}
	}
	return chars
}

type infoKey struct{}

// attempt makes one HTTP attempt under the provider's limiter.
func (g *Gateway) attempt(ctx context.Context, p *provider, name string, oreq openai.ChatCompletionRequest, est int) (modelapi.Response, *Error) {
	var out openai.ChatCompletionResponse
	lat, info, gerr := g.limited(ctx, p, name, est, func(actx context.Context, info *attemptInfo) *Error {
		var err error
		if out, err = p.client.CreateChatCompletion(actx, oreq); err != nil {
			return classify(err, info, ctx, name, g.redactor())
		}
		return nil
	})
	if gerr != nil {
		return modelapi.Response{}, gerr
	}
	return g.answer(ctx, p, name, out, lat, info.status)
}

// answer converts a chat completion of model name into a Response, priced
// at the provider's interactive prices. status is the HTTP status, for
// errors.
func (g *Gateway) answer(ctx context.Context, p *provider, name string, out openai.ChatCompletionResponse, lat time.Duration, status int) (modelapi.Response, *Error) {
	resp := modelapi.Response{ID: out.ID, Model: out.Model, Choices: make([]modelapi.Choice, 0, len(out.Choices))}
	for _, c := range out.Choices {
		resp.Choices = append(resp.Choices, modelapi.Choice{
			Content: c.Message.Content, ToolCalls: c.Message.ToolCalls, Refusal: c.Message.Refusal,
			ReasoningContent: c.Message.ReasoningContent, FinishReason: string(c.FinishReason),
		})
	}
	if len(resp.Choices) == 0 {
		return modelapi.Response{}, &Error{Class: ClassServer, Model: name, Status: status, Message: "response has no choices"}
	}
	pname, model, _ := ParseModel(name)
	g.checkUsage(ctx, pname, out.Usage.PromptTokens, out.Usage.CompletionTokens)
	resp.Usage = modelapi.Usage{
		PromptTokens: out.Usage.PromptTokens, CompletionTokens: out.Usage.CompletionTokens,
		CostUSD: p.cfg.PricesFor(model).Cost(out.Usage.PromptTokens, out.Usage.CompletionTokens),
		Latency: lat,
	}
	return resp, nil
}

// limited makes one attempt, call, under the provider's limiter and its
// per-attempt timeout, and tells the limiter how it went. call returns its
// failure already classified. It returns the attempt's latency and what the
// transport saw of it (status, headers).
func (g *Gateway) limited(ctx context.Context, p *provider, name string, est int, call func(actx context.Context, info *attemptInfo) *Error) (time.Duration, *attemptInfo, *Error) {
	var t0 time.Time
	if g.obs != nil {
		t0 = time.Now()
	}
	if err := p.limiter.Acquire(ctx, est); err != nil {
		return 0, nil, &Error{Class: ClassCanceled, Model: name, Message: err.Error(), cause: err}
	}
	if g.obs != nil {
		g.obs.LimiterWait(p.name, time.Since(t0))
	}
	info := &attemptInfo{maxRetryAfter: p.cfg.MaxRetryAfter}
	actx, cancel := context.WithTimeout(context.WithValue(ctx, infoKey{}, info), p.cfg.Timeout)
	t0 = time.Now()
	gerr := call(actx, info)
	lat := time.Since(t0)
	cancel()
	if gerr != nil {
		o := Neutral
		if gerr.Class.overload() {
			o = Overload
		}
		p.limiter.Release(o, gerr.RetryAfter)
		return lat, info, gerr
	}
	p.limiter.Release(Success, 0)
	return lat, info, nil
}

// build maps a Request to the go-openai request sent on the wire.
func (p *provider) build(model string, r modelapi.Request) openai.ChatCompletionRequest {
	o := openai.ChatCompletionRequest{
		Model: model, Messages: r.Messages, Tools: r.Tools, Seed: r.Seed,
		TopP: r.Params.TopP, Stop: r.Params.Stop,
		PresencePenalty: r.Params.PresencePenalty, FrequencyPenalty: r.Params.FrequencyPenalty,
		N: r.Params.N, ReasoningEffort: r.Params.ReasoningEffort, ToolChoice: r.Params.ToolChoice,
		ResponseFormat: r.Params.ResponseFormat,
	}
	// max_tokens (deprecated by OpenAI in favour of max_completion_tokens) is the field
	// OpenAI-compatible servers (vLLM, Ollama, gateways) read, so it is what we send.
	//lint:ignore SA1019 see above
	o.MaxTokens = r.Params.MaxTokens
	if t := r.Params.Temperature; t != nil {
		o.Temperature = *t
		if *t == 0 {
			o.Temperature = math.SmallestNonzeroFloat32
		}
	}
	if rf := o.ResponseFormat; rf != nil && rf.Type == openai.ChatCompletionResponseFormatTypeJSONSchema && !p.cfg.SupportsJSONSchema() {
		o.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}
		if rf.JSONSchema != nil && rf.JSONSchema.Schema != nil {
			if b, err := rf.JSONSchema.Schema.MarshalJSON(); err == nil {
				msgs := make([]openai.ChatCompletionMessage, 0, len(o.Messages)+1)
				msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem,
					Content: "Reply with one JSON object that validates against this JSON schema:\n" + string(b)})
				o.Messages = append(msgs, o.Messages...)
			}
		}
	}
	return o
}

// apiKey is the credential the variable name holds in env, empty when it
// is unset.
func apiKey(env Env, name string) secret.Value {
	k, _ := env(name)
	return secret.New(k)
}

// authTransport adds the provider's key, read from the environment at call
// time, and records the status and headers of each attempt for Retry-After.
// The baseline provider's transport (oracle) also sends a request's oracle
// reply; no other provider's ever does. It adds them only to requests for
// the provider's own origins (base_url's and reward_url's): the client's
// checkRedirect refuses a redirect elsewhere, and this is the second guard.
type authTransport struct {
	base    http.RoundTripper
	env     Env
	keyEnv  string
	oracle  bool
	origins []origin
}

func (t *authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if !slices.Contains(t.origins, originOf(r.URL)) {
		return t.send(r)
	}
	if t.keyEnv != "" {
		if key := apiKey(t.env, t.keyEnv); !key.IsZero() {
			r2 := *r
			r2.Header = r.Header.Clone()
			r2.Header.Set("Authorization", "Bearer "+key.Reveal())
			r = &r2
		}
	}
	if o := oracleHeader(r); t.oracle && o != "" {
		r2 := *r
		r2.Header = r.Header.Clone()
		r2.Header.Set(modelapi.OracleHeader, o)
		r = &r2
	}
	return t.send(r)
}

// send makes the request and records and bounds its reply.
func (t *authTransport) send(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	info, _ := r.Context().Value(infoKey{}).(*attemptInfo)
	if info != nil && resp != nil {
		info.status, info.header = resp.StatusCode, resp.Header
	}
	if resp != nil && resp.Body != nil {
		// Every reply, answer or error, is read through the reply limit
		// (a batch result file through its own).
		limit := limits.Get().ReplyBytes
		if info != nil && info.maxBody > 0 {
			limit = info.maxBody
		}
		resp.Body = &cappedBody{ReadCloser: resp.Body, max: limit, info: info}
	}
	return resp, err
}

func newTransport(conc int) *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          0,
		MaxIdleConnsPerHost:   max(conc, 2) * 2,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}
