package baseline

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/refkey"
	"github.com/benchline/benchline/internal/toolcall"
)

// poolingRequest is the chat form of vLLM's pooling request
// (PoolingChatRequest), the fields the baseline reads. The completion form
// ("input") is refused: reward models score conversations.
type poolingRequest struct {
	Model          string                         `json:"model"`
	Messages       []openai.ChatCompletionMessage `json:"messages"`
	Input          json.RawMessage                `json:"input,omitempty"`
	Task           string                         `json:"task,omitempty"`
	EncodingFormat string                         `json:"encoding_format,omitempty"`
	UseActivation  *bool                          `json:"use_activation,omitempty"`
}

// The pooling reply as vLLM sends it (PoolingResponse).
type (
	poolingResponse struct {
		ID      string        `json:"id"`
		Object  string        `json:"object"`
		Created int64         `json:"created"`
		Model   string        `json:"model"`
		Data    []poolingData `json:"data"`
		Usage   wireUsage     `json:"usage"`
	}
	poolingData struct {
		Index  int       `json:"index"`
		Object string    `json:"object"`
		Data   []float64 `json:"data"`
	}
)

// pooling serves POST /pooling for the reward baselines: one conversation
// ending in the assistant reply to score, one score back.
func (s *Server) pooling(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	var req poolingRequest
	if !s.decode(w, r, &req) {
		return
	}
	b, _ := json.Marshal(req)
	rd := digest(sha256.Sum256(b))
	if s.injectFault(w, r, rd) {
		return
	}
	m, err := ParseModel(req.Model)
	if err != nil {
		s.fail(w, http.StatusNotFound, "invalid_request_error", "model_not_found", err.Error())
		return
	}
	bad := func(msg string) { s.fail(w, http.StatusBadRequest, "invalid_request_error", "", "baseline: "+msg) }
	switch {
	case !m.IsReward():
		s.fail(w, http.StatusNotFound, "invalid_request_error", "model_not_found",
			fmt.Sprintf("baseline: %s is not a reward model (reward models: reward-reference, reward-noisy-<p>, reward-length)", m.ID()))
		return
	case len(req.Input) > 0:
		bad("reward models score conversations: send messages, not input")
		return
	case len(req.Messages) == 0:
		bad("messages must not be empty")
		return
	case req.Messages[len(req.Messages)-1].Role != openai.ChatMessageRoleAssistant:
		bad("the last message must be the assistant reply to score")
		return
	case req.Task != "" && req.Task != "classify":
		bad(fmt.Sprintf("task %q: reward baselines serve classify (one score per conversation)", req.Task))
		return
	case req.EncodingFormat != "" && req.EncodingFormat != "float":
		bad(fmt.Sprintf("encoding_format %q: only float is supported", req.EncodingFormat))
		return
	}
	pt := promptTokens(&openai.ChatCompletionRequest{Messages: req.Messages})
	if pt > s.opts.MaxContextTokens {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", "context_length_exceeded",
			fmt.Sprintf("baseline: this model's maximum context length is %d tokens, the messages have %d", s.opts.MaxContextTokens, pt))
		return
	}
	score := s.reward(m, req.Messages, rd)
	resp := poolingResponse{
		ID: "pool-baseline-" + rd.short(), Object: "list", Model: "baseline/" + m.ID(),
		Data:  []poolingData{{Index: 0, Object: "pooling", Data: []float64{score}}},
		Usage: wireUsage{PromptTokens: pt, TotalTokens: pt},
	}
	s.answered.Add(1)
	s.opts.Logger.Debug("baseline reward", "model", resp.Model, "id", resp.ID, "attempt", w.Header().Get("X-Benchline-Attempt"))
	writeJSON(w, http.StatusOK, resp)
}

// reward scores the last message of msgs (an assistant reply) for model m.
func (s *Server) reward(m Model, msgs []openai.ChatCompletionMessage, rd digest) float64 {
	reply := msgs[len(msgs)-1]
	if m.Kind == KindRewardLength {
		n := len(refkey.Text(reply))
		for _, tc := range reply.ToolCalls {
			n += len(tc.Function.Name) + len(tc.Function.Arguments)
		}
		return float64(n)
	}
	score := 0.0
	if ref, ok := s.rewardReference(msgs[:len(msgs)-1]); ok {
		score = Agreement(refCalls(ref), replyCalls(reply))
	}
	if m.Kind == KindRewardNoisy && hashOf(rd, s.opts.Seed, "reward-noisy").uniform() < m.P {
		score = hashOf(rd, s.opts.Seed, "reward-draw").uniform()
	}
	return score
}

// rewardReference finds the answer the conversation expects: its reward
// reference (refkey.Reward), else the chat reference of the same conversation.
func (s *Server) rewardReference(prefix []openai.ChatCompletionMessage) (Reference, bool) {
	if s.opts.References == nil {
		return Reference{}, false
	}
	if ref, ok := s.opts.References.Lookup(refkey.Reward(prefix)); ok {
		return ref, true
	}
	return s.lookup(prefix, nil)
}

// replyCalls are the tool calls of an assistant reply: its tool_calls,
// else the calls written in its text (Hermes <tool_call> blocks, JSON or
// BFCL's Python syntax). A reply with none, or with malformed ones, makes
// no call.
func replyCalls(m openai.ChatCompletionMessage) []toolcall.Call {
	if len(m.ToolCalls) > 0 {
		var calls []toolcall.Call
		for _, tc := range m.ToolCalls {
			c, err := toolcall.FromOpenAI(tc.Function.Name, tc.Function.Arguments)
			if err != nil {
				return nil
			}
			calls = append(calls, c)
		}
		return calls
	}
	calls, _, err := toolcall.Parse(refkey.Text(m))
	if err != nil {
		return nil
	}
	return calls
}

// refCalls are the calls of a reference answer: its tool calls, else the
// calls written in its content.
func refCalls(ref Reference) []toolcall.Call {
	if len(ref.ToolCalls) == 0 {
		return replyCalls(openai.ChatCompletionMessage{Content: ref.Content})
	}
	var calls []toolcall.Call
	for _, tc := range ref.ToolCalls {
		c, err := toolcall.FromOpenAI(tc.Name, string(tc.Arguments))
		if err != nil {
			return nil
		}
		calls = append(calls, c)
	}
	return calls
}

// Agreement is the rule-based agreement in [0, 1] of a reply's calls with
// the reference calls:
//
//	1                                   neither makes a call
//	0                                   only one of them makes calls
//	sum of matched CallAgreements / max(len(ref), len(reply))   otherwise
//
// Calls are matched greedily, highest CallAgreement first, each used once,
// so a missing or an extra call lowers the score. It is 1 exactly when the
// reply makes the reference's calls with the same arguments, in any order.
func Agreement(ref, reply []toolcall.Call) float64 {
	switch {
	case len(ref) == 0 && len(reply) == 0:
		return 1
	case len(ref) == 0 || len(reply) == 0:
		return 0
	}
	type cell struct {
		r, c int
		a    float64
	}
	cells := make([]cell, 0, len(ref)*len(reply))
	for i, rc := range ref {
		for j, c := range reply {
			cells = append(cells, cell{i, j, CallAgreement(rc, c)})
		}
	}
	slices.SortStableFunc(cells, func(x, y cell) int {
		switch {
		case x.a > y.a:
			return -1
		case x.a < y.a:
			return 1
		}
		return 0
	})
	usedR, usedC := make([]bool, len(ref)), make([]bool, len(reply))
	sum := 0.0
	for _, x := range cells {
		if usedR[x.r] || usedC[x.c] {
			continue
		}
		usedR[x.r], usedC[x.c] = true, true
		sum += x.a
	}
	return sum / float64(max(len(ref), len(reply)))
}

// CallAgreement compares one call with one reference call: 0 for another
// function, else 0.25 + 0.75 × (arguments with equal values / arguments in
// either call). Values are equal when they are the same JSON value of the
// same type: 5 and 5.0, or "5" and 5, differ; key order does not matter.
func CallAgreement(ref, c toolcall.Call) float64 {
	if ref.Name != c.Name {
		return 0
	}
	union, same := ref.Args.Len(), 0
	for _, k := range c.Args.Keys() {
		rv, ok := ref.Args.Get(k)
		if !ok {
			union++
			continue
		}
		cv, _ := c.Args.Get(k)
		if reflect.DeepEqual(toolcall.Plain(rv), toolcall.Plain(cv)) {
			same++
		}
	}
	if union == 0 {
		return 1
	}
	return 0.25 + 0.75*float64(same)/float64(union)
}
