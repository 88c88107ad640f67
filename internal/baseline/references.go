package baseline

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/refkey"
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
// an implementation from their datasets; key is refkey.Conversation(messages) of the prompt as
// the benchmark sends it.
type References interface {
	Lookup(key string) (Reference, bool)
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
	r.AddKey(refkey.Conversation(msgs), ref)
}

// AddReward records ref as the reward reference of the conversation msgs
// (the turns before the reply to score).
func (r *MemoryReferences) AddReward(msgs []openai.ChatCompletionMessage, ref Reference) {
	r.AddKey(refkey.Reward(msgs), ref)
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
	// Reward marks a reward reference (refkey.Reward of messages or prompt).
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
//	{"key": "<refkey.Conversation(messages)>", "reference": {...}}
//	{"reward": true, "messages": [...], "reference": {...}}   the reward reference (refkey.Reward)
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
		return refkey.Reward(msgs), nil
	}
	return refkey.Conversation(msgs), nil
}
