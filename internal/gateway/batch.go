package gateway

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/limits"
	"github.com/benchline/benchline/internal/modelapi"
)

// BatchConfig is a provider's files-and-batches API (OpenAI's Batch API and
// the same protocol at other providers and gateways): how batch runs
// (`benchline eval --batch`) send its requests. Zero fields take the
// defaults in brackets.
type BatchConfig struct {
	// Enabled says the endpoint serves /files and /batches.
	Enabled bool `yaml:"enabled" json:"enabled"`
	// MaxRequests bounds the requests of one batch file [50000, OpenAI's].
	MaxRequests int `yaml:"max_requests" json:"max_requests,omitempty"`
	// MaxBytes bounds one batch file's size [200000000, OpenAI's 200 MB].
	MaxBytes int64 `yaml:"max_bytes" json:"max_bytes,omitempty"`
	// CompletionWindow is sent with every batch ["24h", the only value
	// OpenAI accepts]; the baseline server accepts any Go duration.
	CompletionWindow string `yaml:"completion_window" json:"completion_window,omitempty"`
	// PollInterval is the time between two status polls of a batch [30s].
	PollInterval time.Duration `yaml:"poll_interval" json:"poll_interval,omitempty"`
	// Margin is how long past its completion window a batch is waited for
	// before it is cancelled and its unanswered requests fail [1h, or the
	// window when it is shorter].
	Margin time.Duration `yaml:"margin" json:"margin,omitempty"`
	// Discount is the share of the interactive price a batch answer costs
	// [0.5]; Prices, when set, replace the interactive prices instead.
	Discount float64 `yaml:"discount" json:"discount,omitempty"`
	Prices   *Prices `yaml:"prices" json:"prices,omitempty"`
	// Retries is how many more batches a request that failed in a batch
	// (error-file line with a retryable status, expired, cancelled) is
	// sent in before it fails [1]; -1: none.
	Retries int `yaml:"retries" json:"retries,omitempty"`
	// Fallback "interactive" sends the requests whose batch attempts are
	// over as ordinary calls; "" (default) records them as infrastructure
	// errors.
	Fallback string `yaml:"fallback" json:"fallback,omitempty"`
	// MaxResultBytes bounds one downloaded output or error file [4 x
	// MaxBytes].
	MaxResultBytes int64 `yaml:"max_result_bytes" json:"max_result_bytes,omitempty"`
}

// Batch defaults (see BatchConfig).
const (
	DefaultBatchMaxRequests = 50000
	DefaultBatchMaxBytes    = 200_000_000
	DefaultBatchWindow      = "24h"
	DefaultBatchPoll        = 30 * time.Second
	DefaultBatchMargin      = time.Hour
	DefaultBatchDiscount    = 0.5
)

// FallbackInteractive is BatchConfig.Fallback's one non-default value.
const FallbackInteractive = "interactive"

func (b *BatchConfig) validate() error {
	b.MaxRequests = cmp.Or(b.MaxRequests, DefaultBatchMaxRequests)
	b.MaxBytes = cmp.Or(b.MaxBytes, DefaultBatchMaxBytes)
	b.CompletionWindow = cmp.Or(b.CompletionWindow, DefaultBatchWindow)
	b.PollInterval = cmp.Or(b.PollInterval, DefaultBatchPoll)
	b.Discount = cmp.Or(b.Discount, DefaultBatchDiscount)
	b.Retries = cmp.Or(b.Retries, 1)
	b.MaxResultBytes = cmp.Or(b.MaxResultBytes, 4*b.MaxBytes)
	w, err := time.ParseDuration(b.CompletionWindow)
	switch {
	case err != nil || w <= 0:
		return fmt.Errorf("completion_window %q must be a positive duration such as 24h", b.CompletionWindow)
	case b.MaxRequests < 0 || b.MaxBytes < 0 || b.MaxResultBytes < 0:
		return errors.New("max_requests, max_bytes and max_result_bytes must not be negative")
	case b.PollInterval < 0 || b.Margin < 0:
		return errors.New("poll_interval and margin must not be negative")
	case b.Discount < 0 || b.Discount > 1:
		return fmt.Errorf("discount %v must be within [0, 1]", b.Discount)
	case b.Prices != nil && (b.Prices.InputPerMTok < 0 || b.Prices.OutputPerMTok < 0):
		return errors.New("prices must not be negative")
	case b.Retries < -1:
		return errors.New("retries must be -1 (none) or more")
	case b.Fallback != "" && b.Fallback != FallbackInteractive:
		return fmt.Errorf("fallback %q must be empty or %q", b.Fallback, FallbackInteractive)
	}
	b.Margin = cmp.Or(b.Margin, min(DefaultBatchMargin, w))
	return nil
}

// Window is the completion window as a duration.
func (b BatchConfig) Window() time.Duration {
	w, _ := time.ParseDuration(b.CompletionWindow)
	return w
}

// Bound is how long after its creation a batch is waited for: the window
// plus the margin.
func (b BatchConfig) Bound() time.Duration { return b.Window() + b.Margin }

// cost is the price of a batch answer's tokens.
func (b BatchConfig) cost(interactive Prices, promptTokens, completionTokens int) float64 {
	if b.Prices != nil {
		return b.Prices.Cost(promptTokens, completionTokens)
	}
	return interactive.Cost(promptTokens, completionTokens) * b.Discount
}

// A BatchRequest is one chat completion deferred to a batch: the exact
// request Complete would have sent, under its cache key (the line's
// custom_id), so that its answer, stored in the cache, is what the same
// Complete finds next time.
//
// A round holds one per deferred sample until its batch file is made, so
// it is kept small: a request Complete deferred carries its JSON (body)
// and its model on the wire (bodyModel), not the request itself.
type BatchRequest struct {
	Key      string `json:"key"`
	Provider string `json:"provider"`
	Model    string `json:"model"` // "<provider>/<model>"
	// Body is the request, encoded into the batch line when there is no
	// body; nil for a request Complete deferred.
	Body   *openai.ChatCompletionRequest `json:"body,omitempty"`
	Oracle string                        `json:"oracle,omitempty"`
	// body is the request's JSON as the cache key hashed it (cacheKey),
	// when Complete deferred it: EncodeBatch writes it as it is. bodyModel
	// is then the request's model (the provider's name for it).
	body      []byte
	bodyModel string
}

// wireModel is the model the request names on the wire.
func (r *BatchRequest) wireModel() string {
	if r.Body != nil {
		return r.Body.Model
	}
	return r.bodyModel
}

// A Collector gathers the requests a pass over samples defers to batches
// (Gateway.Deferring) and holds the requests whose batch attempts are over
// (Fail): Complete returns their failure instead of calling.
type Collector struct {
	collect bool

	mu sync.Mutex
	// reqs are the deferred requests in the order they came, and index
	// their positions by key (a request deferred twice is held once).
	reqs   []BatchRequest
	index  map[string]int
	hint   int // Reserve's: room to make at the next add
	failed map[string]*Error
	call   map[string]bool
	paid   map[string]bool
}

// NewCollector returns a Collector; collect false makes it only answer the
// failed requests (the final, interactive pass of a batch run).
func NewCollector(collect bool) *Collector {
	return &Collector{collect: collect, index: map[string]int{}, failed: map[string]*Error{}, call: map[string]bool{}, paid: map[string]bool{}}
}

// Reserve makes room for n more requests when the next one comes, so
// that adding them does not grow the collector's slice and index (copies
// of large structs, most of Collector.add's time in a batch round
// otherwise). A round that defers nothing allocates nothing.
func (c *Collector) Reserve(n int) {
	c.mu.Lock()
	c.hint = n
	c.mu.Unlock()
}

// Requests returns the deferred requests, sorted by provider and then by
// key (each provider's a run of the slice), and forgets them.
func (c *Collector) Requests() []BatchRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	// Their positions sorted, then the permutation applied in place, along
	// its cycles: each request moves once, and no second slice of them is
	// made (a round holds one request per deferred sample).
	order := make([]int32, len(c.reqs))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		ra, rb := &c.reqs[a], &c.reqs[b]
		return cmp.Or(strings.Compare(ra.Provider, rb.Provider), strings.Compare(ra.Key, rb.Key))
	})
	out := c.reqs
	permute(out, order)
	c.reqs = nil
	clear(c.index)
	return out
}

// permute rearranges s so that s[i] is the element at order[i] before,
// in place; order is a permutation of s's positions, which permute uses
// up (each entry set to -1 once its element is placed).
func permute[T any](s []T, order []int32) {
	for i := range order {
		if order[i] < 0 || int(order[i]) == i {
			order[i] = -1
			continue
		}
		// The cycle through i: s[i] first, to place at its cycle's end.
		first := s[i]
		j := i
		for {
			k := int(order[j])
			order[j] = -1
			if k == i {
				s[j] = first
				break
			}
			s[j] = s[k]
			j = k
		}
	}
}

// Fail makes Complete of the request with key fail with e.
func (c *Collector) Fail(key string, e *Error) {
	c.mu.Lock()
	c.failed[key] = e
	c.mu.Unlock()
}

// Paid marks the request with key as answered by one of the run's
// batches: Complete's cache hit on it counts as a paid call (attempts 1,
// not a cache hit), as the call it replaced would have.
func (c *Collector) Paid(key string) {
	c.mu.Lock()
	c.paid[key] = true
	c.mu.Unlock()
}

func (c *Collector) isPaid(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.paid[key]
}

// Call makes Complete of the request with key a call even when
// collecting (a batch failure's interactive fallback).
func (c *Collector) Call(key string) {
	c.mu.Lock()
	c.call[key] = true
	c.mu.Unlock()
}

// failure returns the recorded failure of key, and whether key is to be
// called.
func (c *Collector) failure(key string) (*Error, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failed[key], c.call[key]
}

// BatchError is the error of a request whose batch tries are over, as a
// record holds it (IsBatchFailure is true of it when class is retryable).
func BatchError(class Class, status int, msg string) *Error {
	return &Error{Class: class, Status: status, Message: msg, batchFailed: class.Retryable()}
}

func (c *Collector) add(r BatchRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.index[r.Key]; ok {
		return // the same request (the same key), deferred by another sample
	}
	if c.hint > 0 {
		c.reqs = slices.Grow(c.reqs, c.hint)
		if len(c.index) == 0 {
			c.index = make(map[string]int, c.hint)
		}
		c.hint = 0
	}
	c.index[r.Key] = len(c.reqs)
	c.reqs = append(c.reqs, r)
}

type batchView struct {
	coll     *Collector
	deferred *atomic.Int64
	memo     *KeyMemo
}

// Deferring returns a view of g for one sample whose cache misses on
// providers with batches enabled are added to c instead of sent (Complete
// returns an error IsDeferred reports), and a function telling whether any
// was. Requests c holds as failed fail without a call. m, if not nil, is
// the sample's KeyMemo, kept from one round to the next.
func (g *Gateway) Deferring(c *Collector, m *KeyMemo) (*Gateway, func() bool) {
	v := *g
	n := &atomic.Int64{}
	v.batch = &batchView{coll: c, deferred: n, memo: m}
	return &v, func() bool { return n.Load() > 0 }
}

// A KeyMemo holds the cache keys of one sample's requests in a batch run,
// so that the next round, which runs the sample's task again and makes the
// same requests (the answers are now cached), does not encode and hash
// each again: a request equal to a remembered one (sameRequest) takes its
// key. Equal requests build the same request on the wire, hence the same
// key; a request that is not found is keyed as always. It remembers a copy
// of each request (snapshot), only of requests it can copy whole. The zero
// value is ready to use; it is safe for concurrent use (a task may make
// its calls at once).
type KeyMemo struct {
	mu      sync.Mutex
	entries []memoEntry
}

type memoEntry struct {
	req modelapi.Request
	key string
}

// find returns the remembered key of req, if any.
func (m *KeyMemo) find(req *modelapi.Request) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.entries {
		if sameRequest(&m.entries[i].req, req) {
			return m.entries[i].key, true
		}
	}
	return "", false
}

// add remembers req's key, if req is one the memo can hold a copy of.
func (m *KeyMemo) add(req modelapi.Request, key string) {
	snap, ok := snapshot(req)
	if !ok {
		return
	}
	m.mu.Lock()
	m.entries = append(m.entries, memoEntry{req: snap, key: key})
	m.mu.Unlock()
}

// snapshot returns a copy of req that a task's later changes to its own
// values (a message slice reused for the next question, say) cannot
// reach, and whether req is one it can copy: messages of text only
// (strings), no tools, tool choice or response format (free-form values
// a task could change in place). Other requests are keyed every round.
func snapshot(req modelapi.Request) (modelapi.Request, bool) {
	if len(req.Tools) > 0 || req.Params.ToolChoice != nil || req.Params.ResponseFormat != nil {
		return req, false
	}
	for _, m := range req.Messages {
		if len(m.MultiContent) > 0 || len(m.ToolCalls) > 0 || m.FunctionCall != nil {
			return req, false
		}
	}
	req.Messages = slices.Clone(req.Messages)
	req.Params.Stop = slices.Clone(req.Params.Stop)
	if t := req.Params.Temperature; t != nil {
		v := *t
		req.Params.Temperature = &v
	}
	if s := req.Seed; s != nil {
		v := *s
		req.Seed = &v
	}
	return req, true
}

// sameRequest reports whether a and b are the same request: every field
// equal (reflect.DeepEqual), but for an empty and a nil slice, which send
// the same JSON. The messages, the bulk of a request, are compared field
// by field, their strings (shared by a task's rounds) first;
// TestSameRequestFields fails when go-openai adds a message field this
// does not compare.
func sameRequest(a, b *modelapi.Request) bool {
	if a.Model != b.Model || a.SampleIndex != b.SampleIndex || a.NoCache != b.NoCache || a.Oracle != b.Oracle ||
		len(a.Messages) != len(b.Messages) || (a.Seed == nil) != (b.Seed == nil) || (a.Seed != nil && *a.Seed != *b.Seed) {
		return false
	}
	for i := range a.Messages {
		if !sameMessage(&a.Messages[i], &b.Messages[i]) {
			return false
		}
	}
	return sameSlice(a.Tools, b.Tools) && reflect.DeepEqual(&a.Params, &b.Params)
}

func sameMessage(a, b *openai.ChatCompletionMessage) bool {
	return a.Role == b.Role && a.Content == b.Content && a.Refusal == b.Refusal && a.Name == b.Name &&
		a.ReasoningContent == b.ReasoningContent && a.ToolCallID == b.ToolCallID &&
		sameSlice(a.MultiContent, b.MultiContent) && sameSlice(a.ToolCalls, b.ToolCalls) &&
		(a.FunctionCall == nil) == (b.FunctionCall == nil) && (a.FunctionCall == nil || *a.FunctionCall == *b.FunctionCall)
}

// sameSlice is reflect.DeepEqual, an empty slice equal to a nil one.
func sameSlice[S ~[]E, E any](a, b S) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

// memoized returns the view's remembered key of req, if any.
func (g *Gateway) memoized(req *modelapi.Request) (string, bool) {
	if g.batch == nil || g.batch.memo == nil {
		return "", false
	}
	return g.batch.memo.find(req)
}

// memoize remembers req's key in the view's memo, if it has one.
func (g *Gateway) memoize(req modelapi.Request, key string) {
	if g.batch != nil && g.batch.memo != nil {
		g.batch.memo.add(req, key)
	}
}

// deferredMessage marks the error of a deferred request.
const deferredMessage = "deferred to a batch"

// IsDeferred reports whether err is a request deferred to a batch:
// errors.Is(err, modelapi.ErrDeferred) (see Error.Is).
func IsDeferred(err error) bool { return errors.Is(err, modelapi.ErrDeferred) }

// IsBatchFailure reports whether err is a request whose batch attempts
// ended without an answer (expired, cancelled, failed line, not completed
// within the bound): not worth retrying in the same run.
func IsBatchFailure(err error) bool {
	var ge *Error
	return errors.As(err, &ge) && ge.batchFailed
}

// viaBatch handles a cache miss of a batch run: the request's recorded
// failure, a deferral, or (nil, false) to call interactively.
func (g *Gateway) viaBatch(p *provider, pname, key, oracle string, req modelapi.Request, oreq openai.ChatCompletionRequest, body []byte) (*Error, bool) {
	if g.batch == nil || !p.cfg.BatchEnabled() || req.NoCache {
		return nil, false
	}
	e, call := g.batch.coll.failure(key)
	if e != nil {
		e2 := *e
		e2.Model = req.Model
		return &e2, true
	}
	if call || !g.batch.coll.collect {
		return nil, false
	}
	r := BatchRequest{Key: key, Provider: pname, Model: req.Model, Oracle: oracle, body: body, bodyModel: oreq.Model}
	if body == nil {
		r.Body = &oreq
	}
	g.batch.coll.add(r)
	g.batch.deferred.Add(1)
	return &Error{Class: ClassCanceled, Model: req.Model, Message: deferredMessage, deferred: true}, true
}

// BatchConfigOf returns the batch settings of the provider of model
// ("<provider>/<model>"), and whether it has batches enabled.
func (g *Gateway) BatchConfigOf(model string) (BatchConfig, bool) {
	p, _, _, err := g.resolve(model)
	if err != nil || !p.cfg.BatchEnabled() {
		return BatchConfig{}, false
	}
	return *p.cfg.Batch, true
}

// batchLine is one line of a batch input file. benchline_oracle carries
// the oracle reply to the baseline server (as the header does for a call);
// it is set for no other provider.
type batchLine struct {
	CustomID string                       `json:"custom_id"`
	Method   string                       `json:"method"`
	URL      openai.BatchEndpoint         `json:"url"`
	Body     openai.ChatCompletionRequest `json:"body"`
	Oracle   string                       `json:"benchline_oracle,omitempty"`
}

// EncodeBatch encodes reqs as batch input files (JSONL, one request per
// line, custom_id its key) of at most maxReqs requests and maxBytes bytes
// each, in order. A single request larger than maxBytes is an error.
func EncodeBatch(reqs []BatchRequest, maxReqs int, maxBytes int64) ([][]byte, error) {
	var files [][]byte
	size := 0 // the lines' bytes, about, for one allocation
	for i := range reqs {
		size += len(reqs[i].body) + len(reqs[i].Key) + len(reqs[i].Oracle)*4/3 + 128
	}
	cur := make([]byte, 0, min(int64(size), maxBytes+1))
	n := 0
	for _, r := range reqs {
		start := len(cur)
		var err error
		if cur, err = appendLine(cur, r); err != nil {
			return nil, err
		}
		if size := len(cur) - start; int64(size) > maxBytes {
			return nil, fmt.Errorf("gateway: batch line %s of %d bytes exceeds max_bytes %d", r.Key, size, maxBytes)
		}
		if n > 0 && (n >= maxReqs || int64(len(cur)) > maxBytes) {
			// The line starts the next file.
			line := cur[start:]
			files = append(files, cur[:start:start])
			cur, n = append(make([]byte, 0, 2*len(line)), line...), 0
		}
		n++
	}
	if n > 0 {
		files = append(files, cur)
	}
	return files, nil
}

// appendLine appends r as a batch file line, with its newline, to dst. A
// request Complete deferred carries its body's JSON from the cache key:
// the line is then put together around it, with the bytes json.Marshal of
// its batchLine would give (the field order of batchLine, custom_id
// escaped as json.Marshal escapes it; the body is compact JSON already).
func appendLine(dst []byte, r BatchRequest) ([]byte, error) {
	var oracle string
	if r.Oracle != "" {
		oracle = base64.StdEncoding.EncodeToString([]byte(r.Oracle))
	}
	if r.body == nil {
		var body openai.ChatCompletionRequest
		if r.Body != nil {
			body = *r.Body
		}
		b, err := json.Marshal(batchLine{CustomID: r.Key, Method: http.MethodPost, URL: openai.BatchEndpointChatCompletions, Body: body, Oracle: oracle})
		if err != nil {
			return dst, fmt.Errorf("gateway: encode batch line %s: %w", r.Key, err)
		}
		return append(append(dst, b...), '\n'), nil
	}
	dst = append(dst, lineHead...)
	dst = appendJSONString(dst, r.Key) // as json.Marshal quotes it
	dst = append(dst, lineBody...)
	dst = append(dst, r.body...)
	if oracle != "" {
		dst = append(dst, `,"benchline_oracle":"`...)
		dst = append(dst, oracle...) // base64: nothing to escape
		dst = append(dst, '"')
	}
	return append(dst, '}', '\n'), nil
}

// The fixed parts of a batch line (batchLine's fields in order).
const (
	lineHead = `{"custom_id":`
	lineBody = `,"method":"POST","url":"` + string(openai.BatchEndpointChatCompletions) + `","body":`
)

// BatchManifest is what a batch-mode shard keeps of a batch file it
// creates (runs.BatchFileKey): each request's custom_id and body model, as
// lines DecodeBatch reads ({"custom_id":K,"body":{"model":M}}), a fifth of
// the file's bytes. That is all a retried activity needs of a batch an
// earlier attempt created (which requests it answers, and their models);
// one it may not have created is created again only from requests built
// again (batchShard.submit).
func BatchManifest(reqs []BatchRequest) ([]byte, error) {
	out := make([]byte, 0, len(reqs)*(len(`{"custom_id":"","body":{"model":""}}`)+80))
	for _, r := range reqs {
		var err error
		out = append(out, `{"custom_id":`...)
		if out, err = jsontext.AppendQuote(out, r.Key); err != nil {
			return nil, fmt.Errorf("gateway: batch manifest line %s: %w", r.Key, err)
		}
		out = append(out, `,"body":{"model":`...)
		if out, err = jsontext.AppendQuote(out, r.wireModel()); err != nil {
			return nil, fmt.Errorf("gateway: batch manifest line %s: model: %w", r.Key, err)
		}
		out = append(out, "}}\n"...)
	}
	return out, nil
}

// DecodeBatch reads back the requests of an EncodeBatch file of provider
// pname, or their keys and models from a BatchManifest (a retried
// activity resuming a batch from what it stored).
func DecodeBatch(pname string, file []byte) ([]BatchRequest, error) {
	var out []BatchRequest
	sc := bufio.NewScanner(strings.NewReader(string(file)))
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	n := 0
	for sc.Scan() {
		n++
		var l batchLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("gateway: batch file line %d: %w", n, err)
		}
		r := BatchRequest{Key: l.CustomID, Provider: pname, Model: pname + "/" + l.Body.Model, Body: &l.Body}
		if l.Oracle != "" {
			o, err := base64.StdEncoding.DecodeString(l.Oracle)
			if err != nil {
				return nil, fmt.Errorf("gateway: batch file line %d: oracle: %w", n, err)
			}
			r.Oracle = string(o)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("gateway: batch file after line %d: %w", n, err)
	}
	return out, nil
}

// BatchContentKey is the idempotency key of a batch input file: the hex
// sha256 of its bytes. The same requests give the same file, so the same
// key: a batch found under it (in the caller's record or in the provider's
// list, by metadata) is never created again.
func BatchContentKey(file []byte) string {
	h := sha256.Sum256(file)
	return hex.EncodeToString(h[:])
}

// batchKeyMeta is the metadata field holding a batch's content key.
const batchKeyMeta = "benchline_key"

// BatchStatus is what a poll says of a batch.
type BatchStatus struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	OutputFileID string `json:"output_file_id,omitempty"`
	ErrorFileID  string `json:"error_file_id,omitempty"`
	Total        int    `json:"total"`
	Completed    int    `json:"completed"`
	Failed       int    `json:"failed"`
	CreatedAt    int64  `json:"created_at"`
}

// Terminal reports whether the batch will change no more.
func (s BatchStatus) Terminal() bool {
	switch s.Status {
	case "completed", "failed", "expired", "cancelled":
		return true
	}
	return false
}

func statusOf(b openai.Batch) BatchStatus {
	s := BatchStatus{ID: b.ID, Status: b.Status, Total: b.RequestCounts.Total, Completed: b.RequestCounts.Completed,
		Failed: b.RequestCounts.Failed, CreatedAt: int64(b.CreatedAt)}
	if b.OutputFileID != nil {
		s.OutputFileID = *b.OutputFileID
	}
	if b.ErrorFileID != nil {
		s.ErrorFileID = *b.ErrorFileID
	}
	return s
}

// batchCall makes one call of the files/batches API of provider pname
// under its per-attempt timeout, classified like a chat completion's.
func (g *Gateway) batchCall(ctx context.Context, pname string, call func(ctx context.Context, c *openai.Client) error) *Error {
	p, ok := g.providers[pname]
	if !ok {
		return &Error{Class: ClassNotFound, Model: pname, Message: fmt.Sprintf("unknown provider %q", pname)}
	}
	if !p.cfg.BatchEnabled() {
		return &Error{Class: ClassBadRequest, Model: pname, Message: "provider has no batch API enabled (batch: enabled: true in the providers file)"}
	}
	info := &attemptInfo{maxRetryAfter: p.cfg.MaxRetryAfter}
	actx, cancel := context.WithTimeout(context.WithValue(ctx, infoKey{}, info), p.cfg.Timeout)
	defer cancel()
	if err := call(actx, p.client); err != nil {
		return classify(err, info, ctx, pname+"/batches", g.redactor())
	}
	return nil
}

// FindBatch looks in the provider's batch list (newest first, at most
// maxListed batches) for one created with content key key: the batch a
// caller created before it could record its id.
func (g *Gateway) FindBatch(ctx context.Context, pname, key string) (BatchStatus, bool, error) {
	const page, maxListed = 100, 2000
	var after *string
	for listed := 0; listed < maxListed; {
		var resp openai.ListBatchResponse
		limit := page
		if e := g.batchCall(ctx, pname, func(ctx context.Context, c *openai.Client) (err error) {
			resp, err = c.ListBatch(ctx, after, &limit)
			return err
		}); e != nil {
			return BatchStatus{}, false, e
		}
		for _, b := range resp.Data {
			if v, _ := b.Metadata[batchKeyMeta].(string); v == key {
				return statusOf(b), true, nil
			}
		}
		listed += len(resp.Data)
		if !resp.HasMore || len(resp.Data) == 0 {
			break
		}
		last := resp.LastID
		after = &last
	}
	return BatchStatus{}, false, nil
}

// CreateBatch uploads file (an EncodeBatch file) and creates a batch of it
// with key (its content key, BatchContentKey, or one derived from it) in
// the metadata. Callers record the returned id
// before waiting, and look for an existing batch (FindBatch) before
// creating one again after a crash.
func (g *Gateway) CreateBatch(ctx context.Context, pname, key string, file []byte) (BatchStatus, error) {
	cfg := g.providers[pname]
	if cfg == nil || !cfg.cfg.BatchEnabled() {
		return BatchStatus{}, &Error{Class: ClassBadRequest, Model: pname, Message: "provider has no batch API enabled"}
	}
	var f openai.File
	if e := g.batchCall(ctx, pname, func(ctx context.Context, c *openai.Client) (err error) {
		f, err = c.CreateFileBytes(ctx, openai.FileBytesRequest{Name: "benchline-" + key[:min(16, len(key))] + ".jsonl", Bytes: file, Purpose: openai.PurposeBatch})
		return err
	}); e != nil {
		return BatchStatus{}, e
	}
	var b openai.BatchResponse
	if e := g.batchCall(ctx, pname, func(ctx context.Context, c *openai.Client) (err error) {
		b, err = c.CreateBatch(ctx, openai.CreateBatchRequest{InputFileID: f.ID, Endpoint: openai.BatchEndpointChatCompletions,
			CompletionWindow: cfg.cfg.Batch.CompletionWindow, Metadata: map[string]any{batchKeyMeta: key}})
		return err
	}); e != nil {
		return BatchStatus{}, e
	}
	return statusOf(b.Batch), nil
}

// PollBatch returns a batch's status.
func (g *Gateway) PollBatch(ctx context.Context, pname, id string) (BatchStatus, error) {
	var b openai.BatchResponse
	if e := g.batchCall(ctx, pname, func(ctx context.Context, c *openai.Client) (err error) {
		b, err = c.RetrieveBatch(ctx, id)
		return err
	}); e != nil {
		return BatchStatus{}, e
	}
	return statusOf(b.Batch), nil
}

// CancelBatch asks the provider to cancel a batch.
func (g *Gateway) CancelBatch(ctx context.Context, pname, id string) error {
	if e := g.batchCall(ctx, pname, func(ctx context.Context, c *openai.Client) error {
		_, err := c.CancelBatch(ctx, id)
		return err
	}); e != nil {
		return e
	}
	return nil
}

// BatchOutcome is what a finished batch gave its requests: answers to
// cache, and failures by key (each an *Error of the class a call with that
// outcome would have had; batch-level failures are retryable).
type BatchOutcome struct {
	Entries []Entry
	Failed  map[string]*Error
}

// outputLine is a line of a batch output or error file.
type outputLine struct {
	CustomID string `json:"custom_id"`
	Response *struct {
		StatusCode int             `json:"status_code"`
		Body       json.RawMessage `json:"body"`
	} `json:"response"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// answerLine is an output line that holds an answer, decoded in one step
// into just the fields a Response takes (answer): the common line, most of
// a batch run's decoding. Any other line (an error, a status other than
// 200, a body this does not decode) is decoded again as an outputLine.
type answerLine struct {
	CustomID string `json:"custom_id"`
	Response *struct {
		StatusCode int `json:"status_code"`
		Body       struct {
			ID      string `json:"id"`
			Model   string `json:"model"`
			Choices []struct {
				Message struct {
					Content          string            `json:"content"`
					Refusal          string            `json:"refusal"`
					ReasoningContent string            `json:"reasoning_content"`
					ToolCalls        []openai.ToolCall `json:"tool_calls"`
				} `json:"message"`
				FinishReason openai.FinishReason `json:"finish_reason"`
			} `json:"choices"`
			Usage struct {
				PromptTokens     int `json:"prompt_tokens"`
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		} `json:"body"`
	} `json:"response"`
}

// answerOptions make jsonv2 (the Go team's encoding/json/v2, about twice
// as fast here) match names as encoding/json does: case-insensitively,
// delimiters significant. jsonv2 is stricter otherwise (duplicate names,
// invalid UTF-8): what it rejects goes to encoding/json, and what both
// accept they decode alike (FuzzDecodeAnswer).
var answerOptions = jsonv2.JoinOptions(jsonv2.MatchCaseInsensitiveNames(true), jsonv1.MatchCaseSensitiveDelimiter(true))

// decodeAnswer decodes line as an answerLine: its custom_id and answer,
// if it is an answer (status 200) of at most limit bytes.
func decodeAnswer(line []byte, limit int64) (string, openai.ChatCompletionResponse, bool) {
	var a answerLine
	if int64(len(line)) > limit || jsonv2.Unmarshal(line, &a, answerOptions) != nil || a.Response == nil || a.Response.StatusCode != http.StatusOK {
		return "", openai.ChatCompletionResponse{}, false
	}
	return a.CustomID, a.completion(), true
}

// completion is the answer's body as the chat completion answer converts.
func (l *answerLine) completion() openai.ChatCompletionResponse {
	b := &l.Response.Body
	out := openai.ChatCompletionResponse{ID: b.ID, Model: b.Model, Choices: make([]openai.ChatCompletionChoice, len(b.Choices)),
		Usage: openai.Usage{PromptTokens: b.Usage.PromptTokens, CompletionTokens: b.Usage.CompletionTokens}}
	for i, c := range b.Choices {
		out.Choices[i] = openai.ChatCompletionChoice{Index: i, FinishReason: c.FinishReason, Message: openai.ChatCompletionMessage{
			Role: openai.ChatMessageRoleAssistant, Content: c.Message.Content, Refusal: c.Message.Refusal,
			ReasoningContent: c.Message.ReasoningContent, ToolCalls: c.Message.ToolCalls}}
	}
	return out
}

// BatchResults downloads a terminal batch's output and error files and
// sorts every request of reqs (the batch's: each one's model,
// "<provider>/<model>", by its key) into an answer or a failure: a
// request the files do not mention failed with the batch's status
// (expired, cancelled, failed). Lines for other keys are ignored;
// a line that does not decode is an error naming the file and line.
//
// A file over MaxResultBytes is read up to the limit: the answers (and
// error lines) read before it are kept, and the requests whose lines were
// past it fail unanswered, retryable, as an expired batch's do (a new
// batch per the batch settings, then an infrastructure error or a call).
// Failing the whole batch instead would lose the answers read and fail
// every later attempt on the same batch the same way.
func (g *Gateway) BatchResults(ctx context.Context, pname string, st BatchStatus, reqs map[string]string) (BatchOutcome, error) {
	p := g.providers[pname]
	if p == nil || !p.cfg.BatchEnabled() {
		return BatchOutcome{}, &Error{Class: ClassBadRequest, Model: pname, Message: "provider has no batch API enabled"}
	}
	out := BatchOutcome{Failed: map[string]*Error{}, Entries: make([]Entry, 0, len(reqs))}
	seen := make(map[string]bool, len(reqs))
	limit := limits.Get().ReplyBytes
	created := time.Now().UTC()
	var over []string // the files read up to max_result_bytes, and where they stopped
	for _, fid := range []string{st.OutputFileID, st.ErrorFileID} {
		if fid == "" {
			continue
		}
		// take records the answer of the request with key, or its failure.
		take := func(key, model string, body openai.ChatCompletionResponse) {
			if resp, gerr := g.batchAnswer(ctx, p, model, body); gerr != nil {
				out.Failed[key] = gerr
			} else {
				out.Entries = append(out.Entries, Entry{Key: key, Created: created, Response: resp})
			}
		}
		err := g.readBatchFile(ctx, p, fid, func(n int, line []byte) error {
			// The common line first: an answer within the reply limit
			// (the line bounds its body), decoded once.
			if id, body, ok := decodeAnswer(line, limit); ok {
				if model, ok := reqs[id]; ok && !seen[id] {
					seen[id] = true
					take(id, model, body)
				}
				return nil
			}
			var l outputLine
			if err := json.Unmarshal(line, &l); err != nil {
				return &Error{Class: ClassServer, Model: p.name + "/files", Message: fmt.Sprintf("batch file %s line %d does not decode: %v", fid, n, err)}
			}
			key := l.CustomID
			model, ok := reqs[key]
			if !ok || seen[key] {
				return nil
			}
			seen[key] = true
			if l.Response != nil && l.Response.StatusCode == http.StatusOK {
				// Each answer within the reply limit, as a call's is.
				if int64(len(l.Response.Body)) > limit {
					out.Failed[key] = replyTooLarge(&Error{Model: model}, limit, l.Response.Body[:min(headBytes, len(l.Response.Body))], g.redactor())
					return nil
				}
				var body openai.ChatCompletionResponse
				if err := json.Unmarshal(l.Response.Body, &body); err != nil {
					out.Failed[key] = &Error{Class: ClassServer, Model: model, batchFailed: true, Message: "batch output line does not decode: " + err.Error()}
					return nil
				}
				take(key, model, body)
				return nil
			}
			out.Failed[key] = lineError(model, st.ID, l)
			return nil
		})
		var ol *overLimitError
		if errors.As(err, &ol) {
			over = append(over, ol.Error())
			continue
		}
		if err != nil {
			return BatchOutcome{}, err
		}
	}
	for k, model := range reqs {
		switch {
		case seen[k]:
		case len(over) > 0:
			out.Failed[k] = &Error{Class: ClassServer, Model: model, batchFailed: true,
				Message: fmt.Sprintf("batch %s: %s: this request's line was not read", st.ID, strings.Join(over, "; "))}
		default:
			out.Failed[k] = &Error{Class: ClassServer, Model: model, batchFailed: true,
				Message: fmt.Sprintf("batch %s ended %s without answering this request", st.ID, st.Status)}
		}
	}
	return out, nil
}

// lineError is the failure of an error-file line: the class of its HTTP
// status (a 400 is the model's failure, as for a call; a 5xx retryable),
// or of its error code (batch_expired, batch_cancelled: retryable).
func lineError(model, batch string, l outputLine) *Error {
	if l.Response != nil && l.Response.StatusCode != 0 {
		msg := string(l.Response.Body)
		var body struct {
			Error struct {
				Message string `json:"message"`
				Code    any    `json:"code"`
			} `json:"error"`
		}
		if json.Unmarshal(l.Response.Body, &body) == nil && body.Error.Message != "" {
			msg = body.Error.Message
			if c, ok := body.Error.Code.(string); ok && c != "" {
				msg = c + ": " + msg
			}
		}
		c := classifyStatus(l.Response.StatusCode, msg)
		return &Error{Class: c, Model: model, Status: l.Response.StatusCode, batchFailed: c.Retryable(),
			Message: truncateMsg(fmt.Sprintf("batch %s: %s", batch, msg))}
	}
	msg := "failed line"
	if l.Error != nil {
		msg = l.Error.Code + ": " + l.Error.Message
	}
	return &Error{Class: ClassServer, Model: model, batchFailed: true, Message: truncateMsg(fmt.Sprintf("batch %s: %s", batch, msg))}
}

func truncateMsg(s string) string {
	if len(s) > 500 {
		return s[:500]
	}
	return s
}

// batchAnswer converts an output line's answer as a call's answer is
// converted, at the batch price.
func (g *Gateway) batchAnswer(ctx context.Context, p *provider, fullModel string, out openai.ChatCompletionResponse) (modelapi.Response, *Error) {
	resp, gerr := g.answer(ctx, p, fullModel, out, 0, 0)
	if gerr != nil {
		gerr.batchFailed = true
		return modelapi.Response{}, gerr
	}
	_, model, _ := ParseModel(fullModel)
	resp.Usage.CostUSD = p.cfg.Batch.cost(p.cfg.PricesFor(model), out.Usage.PromptTokens, out.Usage.CompletionTokens)
	resp.Usage.Attempts = 1
	return resp, nil
}

// readBatchFile reads a result file line by line, at most MaxResultBytes
// (not the reply limit, which bounds each line's answer: batchLine), each
// line at most 64 MiB. A download that fails part way is an error of the
// download (retryable), never a line that does not decode: the scanner
// hands over the partial last line when its reader fails. A file over
// MaxResultBytes is an *overLimitError once its whole lines up to the
// limit were handed over.
func (g *Gateway) readBatchFile(ctx context.Context, p *provider, fid string, fn func(n int, line []byte) error) error {
	limit := p.cfg.Batch.MaxResultBytes
	info := &attemptInfo{maxBody: limit, maxRetryAfter: p.cfg.MaxRetryAfter}
	// A download may be large: it gets ten attempt timeouts.
	actx, cancel := context.WithTimeout(context.WithValue(ctx, infoKey{}, info), 10*p.cfg.Timeout)
	defer cancel()
	rc, err := p.client.GetFileContent(actx, fid)
	if err != nil {
		return classify(err, info, ctx, p.name+"/files", g.redactor())
	}
	defer rc.Close()
	body := &readErr{r: rc}
	failed := func(n int) error {
		if errors.Is(body.err, errReplyTooLarge) {
			return &overLimitError{file: fid, limit: limit, lines: n}
		}
		e := classify(body.err, info, ctx, p.name+"/files", g.redactor())
		e.Message = fmt.Sprintf("batch file %s: download failed after line %d: %s", fid, n, e.Message)
		return e
	}
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := fn(n, line); err != nil {
			if body.err != nil {
				// The partial last line of a download cut short.
				return failed(n - 1)
			}
			return err
		}
	}
	if body.err != nil {
		return failed(n)
	}
	if err := sc.Err(); err != nil {
		return &Error{Class: ClassServer, Model: p.name + "/files", Message: fmt.Sprintf("batch file %s after line %d: %v", fid, n, err)}
	}
	return nil
}

// overLimitError is readBatchFile's error for a file over
// max_result_bytes: its lines up to the limit were handed over (the last
// whole one is lines), the rest was not read.
type overLimitError struct {
	file  string
	limit int64
	lines int
}

func (e *overLimitError) Error() string {
	return fmt.Sprintf("batch file %s exceeds max_result_bytes %d: read up to line %d", e.file, e.limit, e.lines)
}

// readErr is a reader that keeps its first error other than io.EOF.
type readErr struct {
	r   io.Reader
	err error
}

func (r *readErr) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF && r.err == nil {
		r.err = err
	}
	return n, err
}
