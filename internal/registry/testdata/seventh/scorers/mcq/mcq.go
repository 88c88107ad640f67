// Package mcq evaluates multiple-choice questions: the model answers with
// a choice's letter, scored 1 when it is the right one.
package mcq

import (
	"context"
	"errors"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
)

// Item is one question: its text, its choices (lettered A, B, ...) and
// the right letter.
type Item struct {
	ID       string   `parquet:"id" json:"id"`
	Question string   `parquet:"question" json:"question"`
	Choices  []string `parquet:"choices,list" json:"choices"`
	Answer   string   `parquet:"answer" json:"answer"`
}

// ItemTable is the dataset's table, declared with its row type.
var ItemTable = schemas.Declare[Item]("mcq_item", 1)

// Task asks each question and scores the letter of the reply.
type Task struct{}

func (Task) Dataset() string   { return "mcq" }
func (Task) Version() string   { return "1" }
func (Task) Metrics() []string { return []string{"accuracy"} }

func (Task) ReadSamples(ctx context.Context, store blob.Store, key string, start, n int64, fn func(scorers.Sample) error) error {
	return scorers.ReadRows(ctx, store, key, start, n, func(r *Item) string { return r.ID }, func(*Item) string { return "" }, fn)
}

// Messages is the prompt of an item.
func Messages(it *Item) []openai.ChatCompletionMessage {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", it.Question)
	for i, c := range it.Choices {
		fmt.Fprintf(&b, "%c) %s\n", 'A'+i, c)
	}
	b.WriteString("\nReply with the letter of the right choice only.")
	return []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: b.String()}}
}

func (Task) Evaluate(ctx context.Context, env scorers.Env, s scorers.Sample) (scorers.Outcome, error) {
	it, ok := s.Row.(*Item)
	if !ok {
		return scorers.Outcome{}, fmt.Errorf("mcq: sample %s: row %T: %w", s.ID, s.Row, scorers.ErrBadSample)
	}
	msgs := Messages(it)
	out := scorers.Outcome{PromptHash: scorers.PromptHash(msgs[0].Content), Metrics: map[string]float64{"accuracy": 0}}
	resp, err := env.Models.Complete(ctx, env.Request(msgs, nil))
	switch {
	case errors.Is(err, modelapi.ErrModelFailure):
		out.ModelError, out.ModelMsg = "model_failure", modelapi.ReasonOf(err)
		return out, nil
	case err != nil:
		return out, err // infrastructure: retried, never scored
	}
	out.Usage.Add(resp.Usage)
	out.Response = resp.Text()
	letter, ok := Letter(out.Response, len(it.Choices))
	switch {
	case !ok:
		out.ModelError, out.ModelMsg = "unparseable", "no choice letter in the reply"
	case letter == it.Answer:
		out.Metrics["accuracy"] = 1
	}
	return out, nil
}

// Reference is what baseline/reference answers: the right letter.
func (Task) Reference(s scorers.Sample) (scorers.Reference, bool) {
	it, ok := s.Row.(*Item)
	if !ok {
		return scorers.Reference{}, false
	}
	return scorers.Reference{Messages: Messages(it), Content: it.Answer}, true
}

// Letter reads the choice a reply names: its first word, a letter among
// the first n, optionally followed by ")", "." or ":".
func Letter(reply string, n int) (string, bool) {
	f := strings.Fields(reply)
	if len(f) == 0 {
		return "", false
	}
	w := strings.TrimRight(f[0], ").:")
	if len(w) != 1 || w[0] < 'A' || int(w[0]-'A') >= n {
		return "", false
	}
	return w, true
}
