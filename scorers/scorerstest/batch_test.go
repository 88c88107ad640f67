package scorerstest

import (
	"context"
	"errors"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/modelapi"
)

type echo struct{}

func (echo) Complete(_ context.Context, req modelapi.Request) (modelapi.Response, error) {
	return Reply(req.Messages[0].Content, nil)
}

func ask(b *Batch, text string) (string, error) {
	resp, err := b.Complete(context.Background(), modelapi.Request{Model: "m/x", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: text}}})
	return resp.Text(), err
}

func TestBatchRounds(t *testing.T) {
	// Two independent questions, then one built from their answers: two
	// rounds when the pass carries on past the first deferral.
	b := &Batch{Models: echo{}}
	got := CheckRounds(t, b, 2, func() (string, error) {
		a, errA := ask(b, "a")
		c, errC := ask(b, "c")
		if err := errors.Join(errA, errC); err != nil {
			return "", err
		}
		return ask(b, a+c)
	})
	if got != "ac" {
		t.Errorf("got %q", got)
	}
	// A pass that deferred a request but returned no deferral is caught.
	b = &Batch{Models: echo{}}
	_, _, err := Rounds(b, 5, func() (string, error) {
		_, _ = ask(b, "a")
		return "made up", nil
	})
	if err == nil || !strings.Contains(err.Error(), "not the deferral") {
		t.Errorf("err = %v", err)
	}
	// One that never stops deferring ends at the limit.
	b = &Batch{Models: echo{}}
	n := 0
	_, rounds, err := Rounds(b, 3, func() (string, error) {
		n++
		return ask(b, strings.Repeat("x", n))
	})
	if err == nil || rounds != 3 {
		t.Errorf("%d rounds, err %v: want the limit", rounds, err)
	}
}
