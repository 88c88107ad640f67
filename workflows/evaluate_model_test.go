package workflows

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/benchline/benchline/activities"
	"github.com/benchline/benchline/internal/aggregate"
)

// TestEvaluateModelCleansUp: a cancelled run runs CleanupRun and ends
// cancelled; a failed run cleans up and ends with the shard's error; a
// finished run cleans up after Aggregate; each cleans up once. (The test
// environment resolves a cancelled activity at once, whatever
// WaitForCancellation says, so that the cleanup waits for the shards to stop
// is checked on the real stack, in TestRunStatesCancelAndProgress's history.)
func TestEvaluateModelCleansUp(t *testing.T) {
	for _, tc := range []string{"cancelled", "failed", "finished"} {
		t.Run(tc, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			var e *activities.Eval
			env.OnActivity(e.PlanRun, mock.Anything, mock.Anything).Return(activities.PlanRunResult{RunID: "r1", Samples: 2, Shards: 2}, nil)
			var cleanups atomic.Int32
			env.OnActivity(e.RunShard, mock.Anything, mock.Anything).Return(
				func(ctx context.Context, in activities.RunShardInput) (activities.ShardResult, error) {
					switch tc {
					case "failed":
						if in.Shard == 1 {
							return activities.ShardResult{}, temporal.NewNonRetryableApplicationError("unknown provider", "permanent-not-found", nil)
						}
					case "cancelled":
						<-ctx.Done()
						return activities.ShardResult{}, ctx.Err()
					}
					return activities.ShardResult{Shard: in.Shard, Samples: 1}, nil
				})
			env.OnActivity(e.Aggregate, mock.Anything, mock.Anything).Return(aggregate.Summary{Samples: 2}, nil)
			env.OnActivity(e.CleanupRun, mock.Anything, mock.Anything).Return(
				func(_ context.Context, in activities.CleanupRunInput) (activities.CleanupRunResult, error) {
					require.Equal(t, "r1", in.RunID)
					cleanups.Add(1)
					return activities.CleanupRunResult{Checkpoints: 3}, nil
				})
			if tc == "cancelled" {
				env.RegisterDelayedCallback(env.CancelWorkflow, time.Second)
			}
			env.ExecuteWorkflow(EvaluateModel, EvaluateModelInput{MaxConcurrentShards: 2})
			err := env.GetWorkflowError()
			switch tc {
			case "cancelled":
				require.True(t, temporal.IsCanceledError(err), "err = %v", err)
			case "failed":
				require.ErrorContains(t, err, "unknown provider")
			case "finished":
				require.NoError(t, err)
			}
			require.Equal(t, int32(1), cleanups.Load())
		})
	}
}
