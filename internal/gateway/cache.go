package gateway

import (
	"bufio"
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/modelapi"
	openai "github.com/sashabaranov/go-openai"
)

// An Entry is one cached answer: a chat completion (Response) or a reward
// model's score (Reward).
type Entry struct {
	Key      string                   `json:"key"`
	Created  time.Time                `json:"created"`
	Response modelapi.Response        `json:"response,omitzero"`
	Reward   *modelapi.RewardResponse `json:"reward,omitempty"`
}

// Cache stores answers by request key. Implementations are safe for
// concurrent use. Get misses on entries older than the cache's TTL.
type Cache interface {
	Get(ctx context.Context, key string) (Entry, bool)
	Put(ctx context.Context, e Entry)
}

// CacheKey is the hex sha256 of the canonical JSON of the exact request the
// gateway sends (model, messages, tools, every sampling parameter, seed, n)
// plus the provider and the sample index. Fixed structs encode in a fixed
// order; the free-form values (tool parameter schemas, tool_choice, the
// response schema) are re-encoded with sorted keys first, so a schema given
// as a Go struct, a map or raw JSON in any key order hashes the same, also
// after a round trip through Temporal's JSON payloads.
func CacheKey(provider string, req openai.ChatCompletionRequest, sampleIndex int) (string, error) {
	key, _, err := cacheKey(provider, req, sampleIndex)
	return key, err
}

// cacheKey is CacheKey, and the JSON it hashes when that is the request's
// JSON as sent (no free-form value was re-encoded): the body a batch file
// line carries (EncodeBatch), encoded once. A request whose tools, tool
// choice or response schema were re-encoded gets nil: the line must carry
// the request as a call sends it, key order and all (a model reads the
// schema's text), not its canonical form.
func cacheKey(provider string, req openai.ChatCompletionRequest, sampleIndex int) (string, []byte, error) {
	var err error
	sent := len(req.Tools) == 0 && req.ToolChoice == nil && (req.ResponseFormat == nil || req.ResponseFormat.JSONSchema == nil || req.ResponseFormat.JSONSchema.Schema == nil)
	if len(req.Tools) > 0 {
		tools := make([]openai.Tool, len(req.Tools))
		for i, t := range req.Tools {
			tools[i] = t
			if t.Function != nil && t.Function.Parameters != nil {
				f := *t.Function
				if f.Parameters, err = canonical(f.Parameters); err != nil {
					return "", nil, err
				}
				tools[i].Function = &f
			}
		}
		req.Tools = tools
	}
	if req.ToolChoice != nil {
		if req.ToolChoice, err = canonical(req.ToolChoice); err != nil {
			return "", nil, err
		}
	}
	if rf := req.ResponseFormat; rf != nil && rf.JSONSchema != nil && rf.JSONSchema.Schema != nil {
		js := *rf.JSONSchema
		if js.Schema, err = canonical(js.Schema); err != nil {
			return "", nil, err
		}
		req.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: rf.Type, JSONSchema: &js}
	}
	body, err := marshalRequest(req)
	if err != nil {
		return "", nil, fmt.Errorf("gateway: encode request: %w", err)
	}
	h := sha256.New()
	// "benchline-cache-v1\x00<provider>\x00<sample index>\x00", then the body.
	head := make([]byte, 0, 64)
	head = append(head, "benchline-cache-v1\x00"...)
	head = append(head, provider...)
	head = append(head, 0)
	head = strconv.AppendInt(head, int64(sampleIndex), 10)
	h.Write(append(head, 0))
	h.Write(body)
	if !sent {
		body = nil
	}
	return hex.EncodeToString(h.Sum(nil)), body, nil
}

// textMessage is openai.ChatCompletionMessage as its MarshalJSON writes a
// message without parts (MultiContent): the same fields, so that a
// message converts to it (a go-openai that changes the message's fields
// does not compile here), with the tags of that encoding.
type textMessage struct {
	Role             string                   `json:"role"`
	Content          string                   `json:"content,omitempty"`
	Refusal          string                   `json:"refusal,omitempty"`
	MultiContent     []openai.ChatMessagePart `json:"-"`
	Name             string                   `json:"name,omitempty"`
	ReasoningContent string                   `json:"reasoning_content,omitempty"`
	FunctionCall     *openai.FunctionCall     `json:"function_call,omitempty"`
	ToolCalls        []openai.ToolCall        `json:"tool_calls,omitempty"`
	ToolCallID       string                   `json:"tool_call_id,omitempty"`
}

// messagesNull is where json.Marshal writes a request's nil messages: the
// second member, after "model", whose string value cannot hold it (a quote
// in a JSON string is escaped).
var messagesNull = []byte(`"messages":null`)

// marshalRequest is json.Marshal(req), byte for byte (the cache key hashes
// it, and a batch line carries it), a third faster for messages of
// text: they are encoded as textMessage values instead of through
// go-openai's MarshalJSON, which encodes each message, and encoding/json
// then checks and copies what it returned. A request with a message of
// parts is encoded by json.Marshal itself. TestMarshalRequest compares the
// two on every kind of request.
func marshalRequest(req openai.ChatCompletionRequest) ([]byte, error) {
	msgs := make([]textMessage, len(req.Messages))
	for i, m := range req.Messages {
		if len(m.MultiContent) > 0 || m.MultiContent != nil && m.Content != "" {
			return json.Marshal(req)
		}
		msgs[i] = textMessage(m)
	}
	isNil := req.Messages == nil
	req.Messages = nil
	rest, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if isNil {
		return rest, nil
	}
	at := bytes.Index(rest, messagesNull)
	if at < 0 {
		return nil, errors.New(`gateway: encode request: no "messages" member`)
	}
	list, err := json.Marshal(msgs)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(rest)+len(list))
	out = append(out, rest[:at+len(`"messages":`)]...)
	out = append(out, list...)
	return append(out, rest[at+len(messagesNull):]...), nil
}

// canonical re-encodes v with sorted object keys.
func canonical(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("gateway: encode request: %w", err)
	}
	var x any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&x); err != nil {
		return nil, fmt.Errorf("gateway: canonicalize request: %w", err)
	}
	b, err = json.Marshal(x)
	if err != nil {
		return nil, fmt.Errorf("gateway: canonicalize request: %w", err)
	}
	return b, nil
}

// LRU is an in-process cache of at most Size entries with an optional TTL.
type LRU struct {
	size int
	ttl  time.Duration
	now  func() time.Time

	mu    sync.Mutex
	ll    *list.List
	items map[string]*list.Element
}

var _ Cache = (*LRU)(nil)

// NewLRU returns an LRU holding size entries (default 10000); ttl 0 keeps
// entries until evicted.
func NewLRU(size int, ttl time.Duration) *LRU {
	if size <= 0 {
		size = 10000
	}
	return &LRU{size: size, ttl: ttl, now: time.Now, ll: list.New(), items: map[string]*list.Element{}}
}

// Get implements Cache.
func (c *LRU) Get(_ context.Context, key string) (Entry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return Entry{}, false
	}
	e := el.Value.(Entry)
	if expired(e, c.ttl, c.now()) {
		c.ll.Remove(el)
		delete(c.items, key)
		return Entry{}, false
	}
	c.ll.MoveToFront(el)
	return e, true
}

// Put implements Cache.
func (c *LRU) Put(_ context.Context, e Entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[e.Key]; ok {
		el.Value = e
		c.ll.MoveToFront(el)
		return
	}
	c.items[e.Key] = c.ll.PushFront(e)
	for c.ll.Len() > c.size {
		last := c.ll.Back()
		c.ll.Remove(last)
		delete(c.items, last.Value.(Entry).Key)
	}
}

// Len is the number of entries.
func (c *LRU) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}

func expired(e Entry, ttl time.Duration, now time.Time) bool {
	return ttl > 0 && now.Sub(e.Created) > ttl
}

// SegmentOptions configures a Segment.
type SegmentOptions struct {
	// TTL ignores entries older than this; 0 keeps them forever.
	TTL time.Duration
	// FlushEvery flushes automatically once this many answers are pending
	// [256], and FlushInterval once the oldest pending answer is this old
	// [1s]. Together they bound what a crash can lose (and pay again): at
	// most FlushEvery answers or FlushInterval's worth, whichever is less.
	// A fast endpoint then costs about one PUT per second per shard, not one
	// per handful of answers; a slow, costly one still gets each answer
	// saved within about a second.
	FlushEvery    int
	FlushInterval time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Segment is a cache of one unit of work (a shard of an evaluation) kept in
// the object store as a few append-only JSONL objects:
//
//	<prefix>/part-000000.jsonl, part-000001.jsonl, …
//
// OpenSegment lists and reads every part once; Get is then in memory; Put
// buffers and Flush writes the buffered answers as the next part with
// PutIfAbsent, so two attempts of the same shard racing never overwrite each
// other. The hot path costs one PUT per FlushEvery answers or FlushInterval,
// whichever comes first, instead of a GET and a PUT per sample.
//
// Prefix should be derived from what determines the requests (dataset
// version, shard, model, generation settings), not from a run id, so that a
// re-run of the same evaluation, and a retried activity, read the answers
// again.
type Segment struct {
	store  blob.Store
	prefix string
	opts   SegmentOptions

	mu       sync.Mutex
	entries  map[string]Entry
	pending  []Entry
	since    time.Time // when the oldest pending answer was put
	next     int       // next part number
	loaded   int       // entries read at open
	errFlush error

	flushMu sync.Mutex // serializes writers of parts
}

var _ Cache = (*Segment)(nil)

// OpenSegment reads the segment at prefix (which may not exist yet).
func OpenSegment(ctx context.Context, store blob.Store, prefix string, opts SegmentOptions) (*Segment, error) {
	if opts.FlushEvery <= 0 {
		opts.FlushEvery = 256
	}
	if opts.FlushInterval <= 0 {
		opts.FlushInterval = time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Segment{store: store, prefix: strings.TrimRight(prefix, "/"), opts: opts, entries: map[string]Entry{}}
	infos, err := store.List(ctx, s.prefix+"/part-")
	if err != nil {
		return nil, fmt.Errorf("gateway: open cache segment %s: %w", s.prefix, err)
	}
	now := opts.Now()
	for _, info := range infos {
		var n int
		if _, err := fmt.Sscanf(info.Key[len(s.prefix)+1:], "part-%06d.jsonl", &n); err != nil {
			continue
		}
		s.next = max(s.next, n+1)
		b, err := blob.GetBytes(ctx, store, info.Key)
		if err != nil {
			return nil, fmt.Errorf("gateway: open cache segment %s: %w", s.prefix, err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var e Entry
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Key == "" {
				continue // a torn or foreign line costs one repeated call, not the run
			}
			if !expired(e, opts.TTL, now) {
				s.entries[e.Key] = e
			}
		}
	}
	s.loaded = len(s.entries)
	return s, nil
}

// Get implements Cache.
func (s *Segment) Get(_ context.Context, key string) (Entry, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[key]
	if ok && expired(e, s.opts.TTL, s.opts.Now()) {
		return Entry{}, false
	}
	return e, ok
}

// Put implements Cache. It flushes when FlushEvery answers are pending or
// the oldest has waited FlushInterval; a flush error is kept and returned by
// the next Flush.
func (s *Segment) Put(ctx context.Context, e Entry) {
	s.mu.Lock()
	if _, ok := s.entries[e.Key]; ok {
		s.mu.Unlock()
		return
	}
	s.entries[e.Key] = e
	now := s.opts.Now()
	if len(s.pending) == 0 {
		s.since = now
	}
	s.pending = append(s.pending, e)
	full := len(s.pending) >= s.opts.FlushEvery || now.Sub(s.since) >= s.opts.FlushInterval
	s.mu.Unlock()
	if full {
		if err := s.Flush(ctx); err != nil {
			s.mu.Lock()
			s.errFlush = err
			s.mu.Unlock()
		}
	}
}

// PutAll adds entries as Put does, without Put's automatic flushes: the
// caller flushes them as one part (a batch's answers, which are cached all
// at once; Put's FlushEvery would write them as many small parts).
func (s *Segment) PutAll(entries []Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Room for them all at once (a batch's answers: thousands).
	if len(s.entries) == 0 {
		s.entries = make(map[string]Entry, len(entries))
	}
	s.pending = slices.Grow(s.pending, len(entries))
	for _, e := range entries {
		if _, ok := s.entries[e.Key]; ok {
			continue
		}
		s.entries[e.Key] = e
		if len(s.pending) == 0 {
			s.since = s.opts.Now()
		}
		s.pending = append(s.pending, e)
	}
}

// Flush writes pending answers as a new part. Call it at checkpoints and at
// the end of the shard.
func (s *Segment) Flush(ctx context.Context) error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	s.mu.Lock()
	batch, prev := s.pending, s.errFlush
	s.pending, s.errFlush = nil, nil
	s.mu.Unlock()
	if len(batch) == 0 {
		return prev
	}
	buf := make([]byte, 0, len(batch)*384) // about an answer's line
	for i := range batch {
		var err error
		if buf, err = appendEntry(buf, &batch[i]); err != nil {
			return fmt.Errorf("gateway: encode cache entry: %w", err)
		}
	}
	for range 100 {
		key := fmt.Sprintf("%s/part-%06d.jsonl", s.prefix, s.next)
		err := s.store.PutIfAbsent(ctx, key, bytes.NewReader(buf), int64(len(buf)))
		if err == nil {
			s.next++
			return nil
		}
		if !errors.Is(err, blob.ErrExists) {
			s.mu.Lock()
			if len(s.pending) == 0 {
				s.since = s.opts.Now()
			}
			s.pending = append(batch, s.pending...) // keep them for the next flush
			s.mu.Unlock()
			return fmt.Errorf("gateway: flush cache segment %s: %w", s.prefix, err)
		}
		s.next++ // another attempt of this shard wrote that part: take the next
	}
	return fmt.Errorf("gateway: flush cache segment %s: no free part number", s.prefix)
}

// Loaded is the number of entries read at open.
func (s *Segment) Loaded() int { return s.loaded }

// Pending is the number of answers not yet flushed.
func (s *Segment) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending)
}
