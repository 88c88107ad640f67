package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/modelapi"
)

// rewardWire is the body posted to the reward endpoint: vLLM's pooling API
// in its chat form (PoolingChatRequest). No "task" is sent, so the server
// uses the model's default pooling task ("classify" for sequence reward
// models, "token_classify" for token reward models); use_activation false
// asks for the raw reward head output, not a sigmoid of it, which would
// saturate to ties at 1.0 for large rewards.
type rewardWire struct {
	Model          string        `json:"model"`
	Messages       []wireMessage `json:"messages"`
	EncodingFormat string        `json:"encoding_format"`
	UseActivation  bool          `json:"use_activation"`
}

// wireMessage is a chat message as sent for scoring. Unlike go-openai's
// encoding it always carries "content" (as "" when empty): an empty reply
// is a reply to score, and chat templates render a missing content as
// "None".
type wireMessage struct {
	Role       string            `json:"role"`
	Content    any               `json:"content"` // string, or the text/image parts
	Name       string            `json:"name,omitempty"`
	ToolCalls  []openai.ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string            `json:"tool_call_id,omitempty"`
}

func wireMessages(msgs []openai.ChatCompletionMessage) []wireMessage {
	out := make([]wireMessage, len(msgs))
	for i, m := range msgs {
		out[i] = wireMessage{Role: m.Role, Content: m.Content, Name: m.Name, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID}
		if len(m.MultiContent) > 0 {
			out[i].Content = m.MultiContent
		}
	}
	return out
}

// poolingWire is vLLM's PoolingResponse.
type poolingWire struct {
	ID    string `json:"id"`
	Model string `json:"model"`
	Data  []struct {
		Index int             `json:"index"`
		Data  json.RawMessage `json:"data"`
	} `json:"data"`
	Usage struct {
		PromptTokens int `json:"prompt_tokens"`
	} `json:"usage"`
}

// ParseRewardResponse reads a pooling API reply holding one scalar reward:
// data must have exactly one item whose data is either [score] (a sequence
// reward model: one label) or one [score] per token (a token reward model:
// the last token's score is the reward of the whole reply). Anything else,
// several labels per input, a null score (how servers encode NaN), an
// empty list or base64 data, is an error saying what was found.
func ParseRewardResponse(body []byte) (modelapi.RewardResponse, error) {
	var w poolingWire
	if err := json.Unmarshal(body, &w); err != nil {
		return modelapi.RewardResponse{}, fmt.Errorf("not a pooling response: %w", err)
	}
	if len(w.Data) != 1 {
		return modelapi.RewardResponse{}, fmt.Errorf("want one result in data, got %d", len(w.Data))
	}
	raw := bytes.TrimSpace(w.Data[0].Data)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return modelapi.RewardResponse{}, errors.New("data[0] has no score (data is missing or null)")
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return modelapi.RewardResponse{}, fmt.Errorf("data[0].data: %w", err)
	}
	score, err := scalarOf(v, true)
	if err != nil {
		return modelapi.RewardResponse{}, fmt.Errorf("data[0].data: %w", err)
	}
	return modelapi.RewardResponse{ID: w.ID, Model: w.Model, Score: score, Usage: modelapi.Usage{PromptTokens: w.Usage.PromptTokens}}, nil
}

// scalarOf reads [x], or (when perToken) a list of per-token [x] or x whose
// last entry is the reward.
func scalarOf(v any, perToken bool) (float64, error) {
	switch x := v.(type) {
	case string:
		return 0, errors.New("data is a string (base64?); the gateway asks for encoding_format float")
	case []any:
		if len(x) == 0 {
			return 0, errors.New("empty list, no score")
		}
		if _, nested := x[len(x)-1].([]any); nested && perToken {
			return scalarOf(x[len(x)-1], false) // per-token scores: the last token's
		}
		if len(x) != 1 {
			return 0, fmt.Errorf("%d values for one input, want one score (a classifier with several labels, not a scalar reward model?)", len(x))
		}
		return scalarOf(x[0], false)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, fmt.Errorf("score %v is not finite", x)
		}
		return x, nil
	case nil:
		return 0, errors.New("score is null (NaN or infinite on the server)")
	}
	return 0, fmt.Errorf("score is %T, want a number", v)
}

// Kind returns the kind of a model: ModelReward for the reward_models of
// its provider, ModelChat otherwise (also for unknown providers, which
// fail when called).
func (g *Gateway) Kind(model string) modelapi.ModelKind {
	pname, m, err := ParseModel(model)
	if err != nil {
		return modelapi.ModelChat
	}
	p, ok := g.providers[pname]
	if !ok {
		return modelapi.ModelChat
	}
	return p.cfg.KindOf(m)
}

// Reward scores a conversation with a scalar reward model, through the
// same limiter, retry policy, error classes, cache and accounting as
// Complete. The wire format is vLLM's pooling API (see rewardWire and
// docs/gateway.md). Every error is an *Error; a 2xx reply without one
// finite score is ClassServer (retryable, like a malformed completion).
func (g *Gateway) Reward(ctx context.Context, req modelapi.RewardRequest) (modelapi.RewardResponse, error) {
	resp, err := g.reward(ctx, req)
	g.observe(req.Model, resp.Usage, err)
	return resp, err
}

func (g *Gateway) reward(ctx context.Context, req modelapi.RewardRequest) (modelapi.RewardResponse, error) {
	p, pname, model, gerr := g.resolve(req.Model)
	if gerr != nil {
		return modelapi.RewardResponse{}, gerr
	}
	if p.cfg.KindOf(model) != modelapi.ModelReward {
		return modelapi.RewardResponse{}, &Error{Class: ClassNotFound, Model: req.Model, Message: fmt.Sprintf(
			"not a reward model: list it under reward_models of provider %q", pname)}
	}
	if len(req.Messages) == 0 {
		return modelapi.RewardResponse{}, &Error{Class: ClassBadRequest, Model: req.Model, Message: "a reward request needs the conversation to score"}
	}
	body, err := json.Marshal(rewardWire{Model: model, Messages: wireMessages(req.Messages), EncodingFormat: "float"})
	if err != nil {
		return modelapi.RewardResponse{}, &Error{Class: ClassBadRequest, Model: req.Model, Message: "encode request: " + err.Error()}
	}
	var key string
	if !req.NoCache {
		key = rewardCacheKey(pname, body)
		if e, ok := g.lookup(ctx, key); ok && e.Reward != nil {
			if g.log.Enabled(ctx, slog.LevelDebug) {
				g.log.DebugContext(ctx, "gateway call", "model", req.Model, "cache_hit", true)
			}
			resp := *e.Reward
			resp.Usage.CacheHit = true
			resp.Usage.Attempts = 0
			return resp, nil
		}
	}
	est := messageChars(req.Messages) / 4
	var resp modelapi.RewardResponse
	n, gerr := g.retrying(ctx, req.Model, func() (modelapi.Usage, *Error) {
		var e *Error
		resp, e = g.rewardAttempt(ctx, p, req.Model, body, est)
		return resp.Usage, e
	})
	if gerr != nil {
		return modelapi.RewardResponse{}, gerr
	}
	resp.Usage.Attempts = n
	if !req.NoCache {
		r := resp
		g.store(ctx, Entry{Key: key, Created: time.Now().UTC(), Reward: &r})
	}
	return resp, nil
}

// rewardCacheKey is the hex sha256 of the exact body sent and the provider,
// apart from chat completion keys.
func rewardCacheKey(provider string, body []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "benchline-reward-v1\x00%s\x00", provider)
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// rewardAttempt makes one HTTP attempt under the provider's limiter.
func (g *Gateway) rewardAttempt(ctx context.Context, p *provider, name string, body []byte, est int) (modelapi.RewardResponse, *Error) {
	var raw []byte
	var status int
	lat, _, gerr := g.limited(ctx, p, name, est, func(actx context.Context, info *attemptInfo) *Error {
		var err error
		raw, status, err = post(actx, p.http, p.cfg.RewardEndpoint(), body)
		switch {
		case err != nil:
			return classify(err, info, ctx, name, g.redactor())
		case status < 200 || status > 299:
			return httpError(status, raw, info, name, g.redactor())
		}
		return nil
	})
	if gerr != nil {
		return modelapi.RewardResponse{}, gerr
	}
	resp, err := ParseRewardResponse(raw)
	if err != nil {
		return modelapi.RewardResponse{}, &Error{Class: ClassServer, Model: name, Status: status,
			Message: "malformed reward response: " + scrub(err.Error(), g.redactor(), 300)}
	}
	pname, model, _ := ParseModel(name)
	g.checkUsage(ctx, pname, resp.Usage.PromptTokens, 0)
	resp.Usage.CostUSD = p.cfg.PricesFor(model).Cost(resp.Usage.PromptTokens, 0)
	resp.Usage.Latency = lat
	return resp, nil
}

// post sends body and reads the reply (at most 16 MiB).
func post(ctx context.Context, c *http.Client, url string, body []byte) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	return raw, resp.StatusCode, err
}

// httpError classes a non-2xx reply from its status and the message in its
// body: OpenAI's {"error": {"message", "type", "code"}}, vLLM's older
// {"object": "error", "message", "type", "code"}, or FastAPI's {"detail"}.
func httpError(status int, body []byte, info *attemptInfo, model string, red *Redactor) *Error {
	e := &Error{Model: model, Status: status}
	e.setRetryAfter(info)
	var b struct {
		Error *struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		} `json:"error"`
		Message string `json:"message"`
		Type    string `json:"type"`
		Detail  any    `json:"detail"`
	}
	text := strings.TrimSpace(string(body))
	if json.Unmarshal(body, &b) == nil {
		switch {
		case b.Error != nil:
			text = fmt.Sprintf("%s (type %q, code %q)", b.Error.Message, b.Error.Type, fmt.Sprint(b.Error.Code))
		case b.Message != "":
			text = fmt.Sprintf("%s (type %q)", b.Message, b.Type)
		case b.Detail != nil:
			text = fmt.Sprint(b.Detail)
		}
	}
	e.Class = classifyStatus(status, text)
	e.Message = scrub(text, red, 300)
	return e
}
