// Package modelapi holds the plain data a model call is made of: the
// request and response of a chat completion (Request, Response, Params),
// of a scalar reward model (RewardRequest, RewardResponse), their
// accounting (Usage, Totals) and the kind of a model (ModelKind).
//
// It is a leaf: it imports only go-openai's message types, so the packages
// that describe or record model calls (tasks, run plans, workflows) do not
// link the gateway, its HTTP client, cache or object store. The gateway
// (internal/gateway) sends these values; Temporal payloads and result rows
// carry them as JSON, so their JSON encoding is part of recorded histories
// and must not change.
package modelapi

import (
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Params are the sampling parameters of a request. Zero values are not sent.
type Params struct {
	// Temperature, when set, is sent even when 0 (as the smallest positive
	// float32, because go-openai omits a zero temperature).
	Temperature      *float32 `json:"temperature,omitempty"`
	TopP             float32  `json:"top_p,omitempty"`
	MaxTokens        int      `json:"max_tokens,omitempty"`
	Stop             []string `json:"stop,omitempty"`
	PresencePenalty  float32  `json:"presence_penalty,omitempty"`
	FrequencyPenalty float32  `json:"frequency_penalty,omitempty"`
	// N asks for N choices in one call (where the endpoint supports it).
	N               int    `json:"n,omitempty"`
	ReasoningEffort string `json:"reasoning_effort,omitempty"`
	// ToolChoice is "auto", "none", "required" or an openai.ToolChoice.
	ToolChoice any `json:"tool_choice,omitempty"`
	// ResponseFormat asks for JSON (json_object) or schema-valid JSON
	// (json_schema).
	ResponseFormat *openai.ChatCompletionResponseFormat `json:"response_format,omitempty"`
}

// Request is one model call.
type Request struct {
	// Model is "<provider>/<model>", e.g. "openai/gpt-4o-mini".
	Model    string                         `json:"model"`
	Messages []openai.ChatCompletionMessage `json:"messages"`
	Tools    []openai.Tool                  `json:"tools,omitempty"`
	Params   Params                         `json:"params"`
	Seed     *int                           `json:"seed,omitempty"`
	// SampleIndex tells apart repeated samples of the same request (pass@k
	// with n = 1 calls): each index is cached separately.
	SampleIndex int `json:"sample_index,omitempty"`
	// NoCache neither reads nor writes the cache.
	NoCache bool `json:"no_cache,omitempty"`
	// Oracle, when set, is the reply a deterministic oracle of the task
	// would give to this request (a judge's verdict computed by a lexical
	// rule, say), as the reply's text. The gateway sends it only to the
	// baseline provider, as the OracleHeader header, whose judge models
	// answer from it; real providers never receive it. It is part of the
	// response cache key only when it is sent.
	Oracle string `json:"oracle,omitempty"`
}

// OracleHeader is the HTTP request header that carries Request.Oracle to
// the baseline provider, base64-encoded (standard encoding, padded). A
// header, not a body field, because the body is what a real provider
// would read: nothing of the oracle can reach one by mistake.
const OracleHeader = "X-Benchline-Oracle"

// EndOfConversation is what a simulated user replies to end a dialogue:
// a benchmark's user-simulator prompt asks for it, the baseline simulated
// users (baseline/user-<k>) send it, and a simulated user's reply that
// contains it ends the conversation.
const EndOfConversation = "[END]"

// MaxOracleBytes bounds Request.Oracle; the gateway refuses a longer one
// as a bad request (HTTP servers limit header sizes, the baseline's to
// 1 MiB).
const MaxOracleBytes = 256 << 10

// Choice is one generated answer.
type Choice struct {
	Content          string            `json:"content,omitempty"`
	ToolCalls        []openai.ToolCall `json:"tool_calls,omitempty"`
	Refusal          string            `json:"refusal,omitempty"`
	ReasoningContent string            `json:"reasoning_content,omitempty"`
	FinishReason     string            `json:"finish_reason,omitempty"`
}

// Response is the answer to a Request.
type Response struct {
	ID string `json:"id,omitempty"`
	// Model is the model id the endpoint reported.
	Model   string   `json:"model,omitempty"`
	Choices []Choice `json:"choices"`
	Usage   Usage    `json:"usage"`
}

// Text is the content of the first choice.
func (r Response) Text() string {
	if len(r.Choices) == 0 {
		return ""
	}
	return r.Choices[0].Content
}

// Usage is the accounting of one call.
//
// Tokens, CostUSD and Latency describe the answer as the provider produced
// it, the same whether this call paid for it or read it from the cache, so a
// run's totals do not change when a worker crashes and a retry reads
// answers back from the cache. CacheHit says this call made no HTTP request;
// Attempts counts the HTTP attempts this call made (0 on a hit).
type Usage struct {
	PromptTokens     int           `json:"prompt_tokens"`
	CompletionTokens int           `json:"completion_tokens"`
	CostUSD          float64       `json:"cost_usd"`
	Latency          time.Duration `json:"latency_ns"`
	Attempts         int           `json:"attempts"`
	CacheHit         bool          `json:"cache_hit"`
}

// Totals sums Usage over a run.
type Totals struct {
	Calls            int64         `json:"calls"`
	CacheHits        int64         `json:"cache_hits"`
	Attempts         int64         `json:"attempts"`
	PromptTokens     int64         `json:"prompt_tokens"`
	CompletionTokens int64         `json:"completion_tokens"`
	CostUSD          float64       `json:"cost_usd"`  // cost of every answer
	SpentUSD         float64       `json:"spent_usd"` // cost of answers not read from cache
	Latency          time.Duration `json:"latency_ns"`
}

// Add counts one call.
func (t *Totals) Add(u Usage) {
	t.Calls++
	t.Attempts += int64(u.Attempts)
	t.PromptTokens += int64(u.PromptTokens)
	t.CompletionTokens += int64(u.CompletionTokens)
	t.CostUSD += u.CostUSD
	t.Latency += u.Latency
	if u.CacheHit {
		t.CacheHits++
	} else {
		t.SpentUSD += u.CostUSD
	}
}

// Merge adds o into t.
func (t *Totals) Merge(o Totals) {
	t.Calls += o.Calls
	t.CacheHits += o.CacheHits
	t.Attempts += o.Attempts
	t.PromptTokens += o.PromptTokens
	t.CompletionTokens += o.CompletionTokens
	t.CostUSD += o.CostUSD
	t.SpentUSD += o.SpentUSD
	t.Latency += o.Latency
}

// RewardRequest asks a scalar reward model to score a conversation that
// ends with the assistant reply being judged.
type RewardRequest struct {
	// Model is "<provider>/<model>"; the model must be one of the
	// provider's reward_models.
	Model string `json:"model"`
	// Messages is the conversation, the reply to score last (an assistant
	// message with content and/or tool calls).
	Messages []openai.ChatCompletionMessage `json:"messages"`
	// NoCache neither reads nor writes the cache.
	NoCache bool `json:"no_cache,omitempty"`
}

// RewardResponse is a reward model's score of one conversation.
type RewardResponse struct {
	ID string `json:"id,omitempty"`
	// Model is the model id the endpoint reported.
	Model string `json:"model,omitempty"`
	// Score is the reward: higher is better, on the model's own scale
	// (raw logits for vLLM sequence-classification reward models).
	Score float64 `json:"score"`
	// Usage counts the prompt tokens (a reward call generates none).
	Usage Usage `json:"usage"`
}

// ModelKind says how a model is called.
type ModelKind string

// Model kinds.
const (
	// ModelChat models answer chat completions (the gateway's Complete).
	// The zero ModelKind means chat too.
	ModelChat ModelKind = "chat"
	// ModelReward models are scalar reward models: they score a
	// conversation ending in an assistant reply (the gateway's Reward).
	ModelReward ModelKind = "reward"
)
