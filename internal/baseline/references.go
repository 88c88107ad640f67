package baseline

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	openai "github.com/sashabaranov/go-openai"
)

// A Reference is the answer a dataset expects for one prompt: reply text,
// tool calls, or both. baseline/reference replies with it verbatim and
// baseline/noisy-<p> corrupts it.
type Reference struct {
	Content   string     `json:"content,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
}

// A ToolCall is one function call of a reference answer. Arguments is a JSON
// object.
type ToolCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// References finds the reference answer for a conversation. Benchmarks fill
// an implementation from their datasets; key is Key(messages) of the prompt as
// the benchmark sends it.
type References interface {
	Lookup(key string) (Reference, bool)
}

// Key is the normalized hash of a conversation used to look up references:
// sha256 over the role, whitespace-collapsed text, tool calls and tool call
// ids of every message except system and developer messages, so a reference
// survives changes to the system prompt and to incidental whitespace.
func Key(msgs []openai.ChatCompletionMessage) string {
	h := sha256.New()
	for _, m := range msgs {
		if m.Role == openai.ChatMessageRoleSystem || m.Role == openai.ChatMessageRoleDeveloper {
			continue
		}
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00", m.Role, normalize(messageText(m)), m.ToolCallID)
		for _, tc := range m.ToolCalls {
			fmt.Fprintf(h, "call\x00%s\x00%s\x00", tc.Function.Name, normalizeJSON(tc.Function.Arguments))
		}
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// RewardKey is the key of a reward reference: the answer reward models
// compare replies with, for the conversation msgs (the turns before the
// reply, as Key normalizes them). It is apart from Key so that a reward
// reference never answers a chat request, nor the other way round.
func RewardKey(msgs []openai.ChatCompletionMessage) string {
	sum := sha256.Sum256([]byte("reward\x00" + Key(msgs)))
	return hex.EncodeToString(sum[:])
}

// ToolsHash identifies the tools offered with a request: their full
// definitions (names, descriptions, schemas), order-independent.
func ToolsHash(tools []openai.Tool) string {
	defs := make([]string, 0, len(tools))
	for _, t := range tools {
		b, _ := json.Marshal(t) // map keys are sorted, so equal tools encode equally
		defs = append(defs, string(b))
	}
	sort.Strings(defs)
	sum := sha256.Sum256([]byte(strings.Join(defs, "\x00")))
	return hex.EncodeToString(sum[:])
}

// ToolsKey is Key of the conversation together with ToolsHash of the tools
// offered: benchmarks whose items share a question but differ in their
// tools (BFCL's live categories do) key their references this way.
func ToolsKey(msgs []openai.ChatCompletionMessage, toolsHash string) string {
	sum := sha256.Sum256([]byte(Key(msgs) + "\x00tools\x00" + toolsHash))
	return hex.EncodeToString(sum[:])
}

// LastUserKey is Key of the last user message alone: the fallback lookup
// when the full conversation has no reference (e.g. a benchmark that keys
// references by question while the engine adds earlier turns).
func LastUserKey(msgs []openai.ChatCompletionMessage) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == openai.ChatMessageRoleUser {
			return Key(msgs[i : i+1])
		}
	}
	return ""
}

func messageText(m openai.ChatCompletionMessage) string {
	if len(m.MultiContent) == 0 {
		return m.Content
	}
	var b strings.Builder
	for _, p := range m.MultiContent {
		if p.Type == openai.ChatMessagePartTypeText {
			b.WriteString(p.Text)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func normalize(s string) string { return strings.Join(strings.Fields(s), " ") }

// normalizeJSON re-encodes a JSON value with sorted keys; invalid JSON is
// returned as is.
func normalizeJSON(s string) string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// MemoryReferences is an in-memory References safe for concurrent use.
type MemoryReferences struct {
	mu sync.RWMutex
	m  map[string]Reference
}

var _ References = (*MemoryReferences)(nil)

// NewMemoryReferences returns an empty index.
func NewMemoryReferences() *MemoryReferences {
	return &MemoryReferences{m: make(map[string]Reference)}
}

// Add records ref as the answer to msgs.
func (r *MemoryReferences) Add(msgs []openai.ChatCompletionMessage, ref Reference) {
	r.AddKey(Key(msgs), ref)
}

// AddReward records ref as the reward reference of the conversation msgs
// (the turns before the reply to score).
func (r *MemoryReferences) AddReward(msgs []openai.ChatCompletionMessage, ref Reference) {
	r.AddKey(RewardKey(msgs), ref)
}

// AddKey records ref under a precomputed key.
func (r *MemoryReferences) AddKey(key string, ref Reference) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m[key] = ref
}

// Lookup implements References.
func (r *MemoryReferences) Lookup(key string) (Reference, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	ref, ok := r.m[key]
	return ref, ok
}

// Len is the number of references held.
func (r *MemoryReferences) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.m)
}

// referenceLine is one line of a references JSONL file. Exactly one of
// Messages, Prompt and Key identifies the conversation.
type referenceLine struct {
	// Reward marks a reward reference (RewardKey of messages or prompt).
	Reward    bool                           `json:"reward,omitempty"`
	Key       string                         `json:"key,omitempty"`
	Prompt    string                         `json:"prompt,omitempty"`
	Messages  []openai.ChatCompletionMessage `json:"messages,omitempty"`
	Reference Reference                      `json:"reference"`
}

// LoadJSONL reads references, one JSON object a line:
//
//	{"messages": [{"role": "user", "content": "..."}], "reference": {"content": "..."}}
//	{"prompt": "single user message", "reference": {"tool_calls": [{"name": "f", "arguments": {"x": 1}}]}}
//	{"key": "<Key(messages)>", "reference": {...}}
//	{"reward": true, "messages": [...], "reference": {...}}   the reward reference (RewardKey)
//
// Blank lines are skipped.
func LoadJSONL(r io.Reader) (*MemoryReferences, error) {
	refs := NewMemoryReferences()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var l referenceLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			return nil, fmt.Errorf("baseline: references line %d: %w", n, err)
		}
		key, err := l.key()
		if err != nil {
			return nil, fmt.Errorf("baseline: references line %d: %w", n, err)
		}
		refs.AddKey(key, l.Reference)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("baseline: read references: %w", err)
	}
	return refs, nil
}

func (l referenceLine) key() (string, error) {
	set := 0
	for _, ok := range []bool{l.Key != "", l.Prompt != "", len(l.Messages) > 0} {
		if ok {
			set++
		}
	}
	if set != 1 {
		return "", errors.New("exactly one of key, prompt and messages must be set")
	}
	msgs := l.Messages
	switch {
	case l.Key != "":
		return l.Key, nil
	case l.Prompt != "":
		msgs = []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: l.Prompt}}
	}
	if l.Reward {
		return RewardKey(msgs), nil
	}
	return Key(msgs), nil
}
