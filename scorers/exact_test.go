package scorers_test

import (
	"context"
	"errors"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/scorers"
)

// replyWith is a Completer that answers every request with reply (or err),
// recording the request.
type replyWith struct {
	reply string
	err   error
	got   modelapi.Request
}

func (c *replyWith) Complete(_ context.Context, req modelapi.Request) (modelapi.Response, error) {
	c.got = req
	return modelapi.Response{Choices: []modelapi.Choice{{Content: c.reply}}, Usage: modelapi.Usage{PromptTokens: 3}}, c.err
}

func TestAskExact(t *testing.T) {
	msgs := []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "2+2?"}}
	boom := errors.New("boom")
	cases := []struct {
		reply string
		err   error
		want  float64
	}{
		{reply: "4", want: 1},
		{reply: " 4\n", want: 1},
		{reply: "4.0", want: 0},
		{reply: "", want: 0},
		{err: boom},
	}
	for _, tc := range cases {
		t.Run(tc.reply, func(t *testing.T) {
			c := &replyWith{reply: tc.reply, err: tc.err}
			out, err := scorers.AskExact(context.Background(), scorers.Env{Models: c, Model: "p/m"}, msgs, "4", "exact")
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("error %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out.Metrics["exact"] != tc.want || out.Response != tc.reply || out.PromptHash == "" || c.got.Model != "p/m" {
				t.Errorf("got %+v (request model %s), want exact %v", out, c.got.Model, tc.want)
			}
		})
	}
}
