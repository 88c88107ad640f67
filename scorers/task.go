// Package scorers defines what a benchmark provides to the evaluation engine
// (the Task contract) and holds each benchmark's deterministic scorer in
// scorers/<name>. A Task turns dataset rows into samples, asks the model
// under test (and judges, sandboxes, simulated users) through the gateway,
// and scores the answer.
package scorers

import (
	"context"
	"encoding/json"
	"errors"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/modelapi"
)

// ErrBadSample marks a sample whose row cannot be evaluated (it breaks the
// task's schema): the engine records it with error class "bad_sample",
// names it, and does not score it. Tasks wrap it with the sample id.
var ErrBadSample = errors.New("bad sample")

// Sample is one item to evaluate. Row is the task's own decoded row type.
type Sample struct {
	ID       string
	Category string
	Row      any
}

// Completer is the model gateway as tasks see it.
type Completer interface {
	Complete(ctx context.Context, req modelapi.Request) (modelapi.Response, error)
}

// Rewarder is the gateway's scalar reward call, an optional capability of
// Env.Models (found by type assertion): tasks that can evaluate reward
// models use it when Env.ModelKind is modelapi.ModelReward.
type Rewarder interface {
	Reward(ctx context.Context, req modelapi.RewardRequest) (modelapi.RewardResponse, error)
}

// Env is what a task may use to evaluate one sample.
type Env struct {
	Models Completer
	// Model is the model under test, "<provider>/<model>".
	Model string
	// ModelKind says how the model under test is called: chat completions
	// (modelapi.ModelChat or "") or scores from a scalar reward model
	// (modelapi.ModelReward, through Models' Rewarder). A task that cannot
	// evaluate a reward model calls Complete, which refuses it.
	ModelKind modelapi.ModelKind
	// Params are the generation parameters of the run.
	Params modelapi.Params
	// Seed, when set, is sent with every request.
	Seed *int
	// Judges are the judge models of the run, by role (e.g. "judge").
	Judges map[string]string
	// NoCache bypasses the response cache.
	NoCache bool
}

// Request builds a gateway request for the model under test.
func (e Env) Request(msgs []openai.ChatCompletionMessage, tools []openai.Tool) modelapi.Request {
	return modelapi.Request{Model: e.Model, Messages: msgs, Tools: tools, Params: e.Params, Seed: e.Seed, NoCache: e.NoCache}
}

// RewardRequest builds a reward request for the model under test.
func (e Env) RewardRequest(msgs []openai.ChatCompletionMessage) modelapi.RewardRequest {
	return modelapi.RewardRequest{Model: e.Model, Messages: msgs, NoCache: e.NoCache}
}

// Outcome is the result of one sample.
//
// A sample the model got wrong, or whose reply does not parse, is an
// Outcome with its metrics (usually 0) and a ModelError saying why; it is
// scored. An infrastructure failure (gateway retries exhausted, sandbox
// broken) is returned as an error instead: the engine retries it and, if it
// persists, reports the sample as failed for infrastructure reasons, never
// as wrong.
type Outcome struct {
	Response string
	// Metrics are named scores, usually in [0, 1]; every sample of a task
	// reports the same names.
	Metrics map[string]float64
	// ModelError classifies a model failure ("unparseable", "bad_request"...);
	// empty when the model answered.
	ModelError string
	ModelMsg   string
	// Details is benchmark-specific, stored as JSON.
	Details any
	// Usage sums every call made for this sample.
	Usage modelapi.Totals
	// PromptHash identifies the prompt sent (for grouping and dedup).
	PromptHash string
}

// Task is one benchmark's evaluation.
type Task interface {
	// Dataset is the dataset the task evaluates.
	Dataset() string
	// Version changes whenever scoring changes; it is recorded in the plan.
	Version() string
	// Metrics names the metrics every Outcome reports, the first being the
	// headline metric.
	Metrics() []string
	// ReadSamples streams rows [start, start+n) of one dataset file.
	ReadSamples(ctx context.Context, store blob.Store, key string, start, n int64, fn func(Sample) error) error
	// Evaluate asks the model and scores the answer.
	Evaluate(ctx context.Context, env Env, s Sample) (Outcome, error)
}

// DeferredScorer is an optional capability: a task whose scoring runs apart
// from generation, on its own task queue (sandboxes scale apart from model
// calls). Its Evaluate only generates (leaving Metrics empty); the engine
// then runs Score for every generated sample on a worker of ScoreQueue.
type DeferredScorer interface {
	ScoreQueue() string
	// Score fills the metrics of an outcome Evaluate produced. An error is
	// an infrastructure failure (retried, then reported, never scored).
	Score(ctx context.Context, s Sample, o Outcome) (Outcome, error)
}

// Reference is what a baseline model answers for one prompt.
type Reference struct {
	Messages []openai.ChatCompletionMessage `json:"messages"`
	// Reward marks a reward reference: the answer the baseline reward
	// models compare replies to Messages with (refkey.Reward), not a
	// chat answer.
	Reward bool `json:"reward,omitempty"`
	// ToolsHash is refkey.ToolsHash of the tools offered with the
	// prompt, for benchmarks that ask the same question with different
	// tools (the baseline server then matches on both).
	ToolsHash string     `json:"tools_hash,omitempty"`
	Content   string     `json:"content,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
}

// ToolCall is one function call of a reference answer.
type ToolCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ReferenceProvider is an optional capability: a task that knows the
// reference answer of a sample, so the baseline/reference model can answer
// it. The prompt must be exactly what Evaluate sends.
type ReferenceProvider interface {
	Reference(s Sample) (Reference, bool)
}

// MultiReferenceProvider is an optional capability of a ReferenceProvider
// whose Evaluate sends several prompts for one sample (IFEvalCode asks each
// question in English and in Chinese). References returns the reference of
// every prompt Evaluate sends; the engine then writes all of them instead
// of Reference's one.
type MultiReferenceProvider interface {
	ReferenceProvider
	References(s Sample) []Reference
}

// ReferencesOf returns the references of a sample: every one of a
// MultiReferenceProvider, else Reference's one (or none).
func ReferencesOf(p ReferenceProvider, s Sample) []Reference {
	if m, ok := p.(MultiReferenceProvider); ok {
		return m.References(s)
	}
	if r, ok := p.Reference(s); ok {
		return []Reference{r}
	}
	return nil
}
