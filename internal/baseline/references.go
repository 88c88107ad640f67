package baseline

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/refkey"
	"github.com/benchline/benchline/scorers"
)

// A Reference is the answer a dataset expects for one prompt: reply text,
// tool calls, or both (its Content and ToolCalls; the prompt it answers is
// the key it is found by). baseline/reference replies with it verbatim and
// baseline/noisy-<p> corrupts it. It is the tasks' scorers.Reference: one
// type for what the engine writes and the server reads.
type Reference = scorers.Reference

// A ToolCall is one function call of a reference answer. Arguments is a
// JSON object.
type ToolCall = scorers.ToolCall

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

// referenceLine is one line of a hand-written references file. Exactly one
// of Messages, Prompt and Key identifies the conversation.
type referenceLine struct {
	// Reward marks a reward reference (refkey.Reward of messages or prompt).
	Reward    bool                           `json:"reward,omitempty"`
	Key       string                         `json:"key,omitempty"`
	Prompt    string                         `json:"prompt,omitempty"`
	Messages  []openai.ChatCompletionMessage `json:"messages,omitempty"`
	Reference Reference                      `json:"reference"`
}

// engineLine is one line of a references file in the conversation form
// the evaluation engine wrote before it wrote keys (the JSON of
// scorers.Reference); such files still load.
type engineLine = scorers.Reference

// ErrBadReferences is wrapped by every error about a references file's
// contents.
var ErrBadReferences = errors.New("baseline: bad references")

// LoadJSONL reads references from r (see Load) into a new index.
func LoadJSONL(r io.Reader) (*MemoryReferences, error) {
	refs := NewMemoryReferences()
	if _, err := refs.Load(r, "references"); err != nil {
		return nil, err
	}
	return refs, nil
}

// Load adds the references in r, named name in errors, and returns how
// many lines it read. Each line is one JSON object in one of two forms:
// a conversation with its answer (scorers.Reference's JSON, as the engine
// wrote references before it wrote keys):
//
//	{"messages": [...], "content": "...", "tool_calls": [...], "tools_hash": "...", "reward": false}
//
// or an answer under a key, a prompt or a conversation (the engine writes
// references/<dataset>/<version>/task-<v>.jsonl as keys: activities.ReferenceLine):
//
//	{"messages": [{"role": "user", "content": "..."}], "reference": {"content": "..."}}
//	{"prompt": "single user message", "reference": {"tool_calls": [{"name": "f", "arguments": {"x": 1}}]}}
//	{"key": "<refkey.Conversation(messages)>", "reference": {...}}
//	{"reward": true, "messages": [...], "reference": {...}}   the reward reference (refkey.Reward)
//
// A line with unknown fields, without a conversation, or whose answer has
// neither content nor tool calls is an error naming the line: a file that
// cannot be used fails instead of answering "". Blank lines are skipped.
func (r *MemoryReferences) Load(rd io.Reader, name string) (int, error) {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	n := 0
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if err := r.addLine(line); err != nil {
			return n, fmt.Errorf("%w: %s:%d: %w", ErrBadReferences, name, lineNo, err)
		}
		n++
	}
	if err := sc.Err(); err != nil {
		return n, fmt.Errorf("baseline: read references %s after line %d: %w", name, lineNo, err)
	}
	return n, nil
}

// addLine parses one line in either form and adds it.
func (r *MemoryReferences) addLine(line []byte) error {
	var probe struct {
		Reference json.RawMessage `json:"reference"`
	}
	if err := json.Unmarshal(line, &probe); err != nil {
		return err
	}
	if probe.Reference != nil {
		var l referenceLine
		if err := strictJSON(line, &l); err != nil {
			return err
		}
		key, err := l.key()
		if err != nil {
			return err
		}
		if err := checkReference(l.Reference); err != nil {
			return err
		}
		r.AddKey(key, l.Reference)
		return nil
	}
	var l engineLine
	if err := strictJSON(line, &l); err != nil {
		return err
	}
	if len(l.Messages) == 0 {
		return errors.New("no messages (and no \"reference\": not a references line)")
	}
	ref := Reference{Content: l.Content, ToolCalls: l.ToolCalls}
	if err := checkReference(ref); err != nil {
		return err
	}
	switch {
	case l.Reward:
		r.AddReward(l.Messages, ref)
		return nil
	case l.ToolsHash != "":
		r.AddKey(refkey.WithTools(l.Messages, l.ToolsHash), ref)
	}
	r.Add(l.Messages, ref)
	return nil
}

// strictJSON decodes one JSON value, rejecting unknown fields (addLine's
// probe has already rejected trailing data).
func strictJSON(line []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// check rejects an answer baseline/reference could not give.
func checkReference(ref Reference) error {
	if ref.Content == "" && len(ref.ToolCalls) == 0 {
		return errors.New("the answer has neither content nor tool calls")
	}
	for i, tc := range ref.ToolCalls {
		if tc.Name == "" {
			return fmt.Errorf("tool call %d has no name", i+1)
		}
		var args map[string]any
		if err := json.Unmarshal(tc.Arguments, &args); err != nil || args == nil {
			return fmt.Errorf("tool call %d (%s): arguments must be a JSON object", i+1, tc.Name)
		}
	}
	return nil
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
