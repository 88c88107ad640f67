package gateway

import (
	"context"
	"os"

	"go.temporal.io/sdk/worker"

	"github.com/benchline/benchline/internal/modelapi"
)

func defaultEnv(k string) (string, bool) { return os.LookupEnv(k) }

// TaskQueue is the task queue of a provider's model-call activities:
// "llm-<provider>". Every worker polling it shares the provider's request
// budget, which the Temporal server enforces across workers.
func TaskQueue(provider string) string { return "llm-" + provider }

// WorkerOptions are the worker options for a provider's task queue:
// TaskQueueActivitiesPerSecond from requests_per_minute (server-enforced
// across all workers of the queue; every worker must set the same value)
// and MaxConcurrentActivityExecutionSize from max_concurrency. Use with one
// model call per activity (Activities.Complete).
func WorkerOptions(p Provider) worker.Options {
	o := worker.Options{MaxConcurrentActivityExecutionSize: max(p.MaxConcurrency, 1)}
	if p.RequestsPerMinute > 0 {
		o.TaskQueueActivitiesPerSecond = p.RequestsPerMinute / 60
	}
	return o
}

// Activities exposes the gateway as a Temporal activity. Register it on
// the provider's worker: w.RegisterActivity(&gateway.Activities{Gateway: g}).
type Activities struct {
	Gateway *Gateway
}

// Complete is one model call as an activity. Failures are converted with
// ToTemporal: permanent classes are non-retryable, rate limits carry the
// server's Retry-After as the next retry delay.
func (a *Activities) Complete(ctx context.Context, req modelapi.Request) (modelapi.Response, error) {
	resp, err := a.Gateway.Complete(ctx, req)
	if err != nil {
		return modelapi.Response{}, ToTemporal(err)
	}
	return resp, nil
}

// Reward is one reward-model call as an activity, with the same error
// conversion as Complete.
func (a *Activities) Reward(ctx context.Context, req modelapi.RewardRequest) (modelapi.RewardResponse, error) {
	resp, err := a.Gateway.Reward(ctx, req)
	if err != nil {
		return modelapi.RewardResponse{}, ToTemporal(err)
	}
	return resp, nil
}
