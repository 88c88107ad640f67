// Package synthetic is the evaluation task of the synthetic dataset: each
// row asks for its reference number, and the metric is exact match. It has
// no benchmark behind it; it measures and tests the engine at any size.
package synthetic

import (
	"context"
	"fmt"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
)

// Task evaluates the synthetic dataset.
type Task struct{}

var _ scorers.Task = Task{}
var _ scorers.ReferenceProvider = Task{}

func (Task) Dataset() string   { return "synthetic" }
func (Task) Version() string   { return "1" }
func (Task) Metrics() []string { return []string{"exact"} }

// ReadSamples implements scorers.Task.
func (Task) ReadSamples(ctx context.Context, store blob.Store, key string, start, n int64, fn func(scorers.Sample) error) error {
	return scorers.ReadRows(ctx, store, key, start, n,
		func(r *schemas.SyntheticRow) string { return r.ID }, func(r *schemas.SyntheticRow) string { return r.Category }, fn)
}

func messages(r *schemas.SyntheticRow) []openai.ChatCompletionMessage {
	return []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser,
		Content: "Item " + r.ID + ". " + r.Prompt + "\nReply with the item's reference number only."}}
}

// Evaluate asks for the reference number and checks it exactly.
func (Task) Evaluate(ctx context.Context, env scorers.Env, s scorers.Sample) (scorers.Outcome, error) {
	r, ok := s.Row.(*schemas.SyntheticRow)
	if !ok {
		return scorers.Outcome{}, fmt.Errorf("synthetic: sample %s: %w: row is %T", s.ID, scorers.ErrBadSample, s.Row)
	}
	return scorers.AskExact(ctx, env, messages(r), r.Reference, "exact")
}

// Reference is the row's reference number.
func (Task) Reference(s scorers.Sample) (scorers.Reference, bool) {
	r, ok := s.Row.(*schemas.SyntheticRow)
	if !ok {
		return scorers.Reference{}, false
	}
	return scorers.Reference{Messages: messages(r), Content: r.Reference}, true
}
