package scorers

import (
	"context"
	"errors"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/modelapi"
)

// AskExact asks the model under test msgs and scores the reply by exact
// match: metric is 1 when the reply, trimmed of surrounding white space,
// equals want, else 0. The prompt hash is that of the first message.
func AskExact(ctx context.Context, env Env, msgs []openai.ChatCompletionMessage, want, metric string) (Outcome, error) {
	resp, err := env.Models.Complete(ctx, env.Request(msgs, nil))
	if errors.Is(err, modelapi.ErrDeferred) {
		return Outcome{}, err // a batch round: the outcome is not used
	}
	out := Outcome{PromptHash: PromptHash(msgs[0].Content)}
	if err != nil {
		return out, err
	}
	out.Usage.Add(resp.Usage)
	out.Response = resp.Text()
	score := 0.0
	if strings.TrimSpace(out.Response) == want {
		score = 1
	}
	out.Metrics = map[string]float64{metric: score}
	return out, nil
}
