package workflows

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
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

func TestShardGroup(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name           string
		perShard, goal time.Duration
		left, conc     int
		want           int
	}{
		{"no measurement yet", 0, 5 * s, 400, 8, 1},
		{"grouping off", s, -1, 400, 8, 1},
		{"fast shards fill the target", s, 5 * s, 400, 8, 5},
		{"a fraction rounds down", 2 * s, 5 * s, 400, 8, 2},
		{"slow shards run alone", 30 * s, 5 * s, 400, 8, 1},
		{"very fast shards stop at the cap", time.Millisecond, 5 * s, 10000, 8, maxShardGroup},
		{"the tail shares what is left", 100 * time.Millisecond, 5 * s, 24, 8, 3},
		{"fewer left than slots", 100 * time.Millisecond, 5 * s, 5, 8, 1},
		{"one slot may take what is left", 100 * time.Millisecond, 5 * s, 30, 1, 30},
		{"no slots", s, 5 * s, 30, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ShardGroup(tc.perShard, tc.goal, tc.left, tc.conc); got != tc.want {
				t.Fatalf("ShardGroup(%v, %v, %d, %d) = %d, want %d", tc.perShard, tc.goal, tc.left, tc.conc, got, tc.want)
			}
		})
	}
}

// TestEvaluateModelGroupsFastShards: after the first shards report how
// long they took, the workflow hands later activities consecutive groups
// of shards; every shard runs exactly once, the counts add up, and the
// last activities shrink to share what is left. A target below 0 keeps
// one shard per activity.
func TestEvaluateModelGroupsFastShards(t *testing.T) {
	for _, tc := range []struct {
		name      string
		target    time.Duration
		maxGroup  int
		wantCalls int
	}{
		{"grouped", 4 * time.Second, 4, 0},
		{"off", -1, 1, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			var e *activities.Eval
			const shards = 40
			env.OnActivity(e.PlanRun, mock.Anything, mock.Anything).Return(activities.PlanRunResult{RunID: "r1", Samples: shards * 10, Shards: shards}, nil)
			var mu sync.Mutex
			ran := make([]int, shards)
			var calls, biggest int
			var sizes []int
			// The activity that starts at the highest shard is the last one
			// launched; the mock may run activities out of launch order.
			lastStart, lastSize := -1, 0
			env.OnActivity(e.RunShard, mock.Anything, mock.Anything).Return(
				func(_ context.Context, in activities.RunShardInput) (activities.ShardResult, error) {
					n := max(in.Shards, 1)
					mu.Lock()
					defer mu.Unlock()
					calls++
					biggest = max(biggest, n)
					sizes = append(sizes, n)
					if in.Shard >= lastStart {
						lastStart, lastSize = in.Shard, n
					}
					for i := range n {
						ran[in.Shard+i]++
					}
					return activities.ShardResult{Shard: in.Shard, Samples: int64(10 * n), Seconds: float64(n), Shards: n}, nil
				})
			env.OnActivity(e.Aggregate, mock.Anything, mock.Anything).Return(aggregate.Summary{Samples: shards * 10}, nil)
			env.OnActivity(e.CleanupRun, mock.Anything, mock.Anything).Return(activities.CleanupRunResult{}, nil)
			env.ExecuteWorkflow(EvaluateModel, EvaluateModelInput{MaxConcurrentShards: 2, ShardTarget: tc.target})
			require.NoError(t, env.GetWorkflowError())
			for i, n := range ran {
				require.Equal(t, 1, n, "shard %d ran %d times", i, n)
			}
			require.Equal(t, tc.maxGroup, biggest, "group sizes %v", sizes)
			if tc.wantCalls > 0 {
				require.Equal(t, tc.wantCalls, calls)
			} else {
				require.Less(t, calls, shards/2, "group sizes %v", sizes)
				require.Equal(t, 1, lastSize, "the last activity launched: group sizes %v", sizes)
			}
			var p Progress
			v, err := env.QueryWorkflow(ProgressQuery)
			require.NoError(t, err)
			require.NoError(t, v.Get(&p))
			require.Equal(t, shards, p.ShardsDone)
			require.Equal(t, int64(shards*10), p.SamplesDone)
		})
	}
}

// TestEvaluateModelHintGroupsFirstWave: with a time per shard from the
// model's last run (PlanRunResult.ShardSecondsHint), the first wave is
// already grouped, in equal groups of the shards over the slots (20 over
// 8: eight groups of 2, then the 4 left one by one: 12 activities instead
// of 20); every shard runs once; and Aggregate is handed this run's time
// per sample for the next run. Without a hint the first wave is single
// shards, as before.
func TestEvaluateModelHintGroupsFirstWave(t *testing.T) {
	for _, tc := range []struct {
		name   string
		hint   float64
		groups map[int]int // first shard -> shards in its activity
	}{
		{"hint", 0.4, map[int]int{0: 2, 2: 2, 4: 2, 6: 2, 8: 2, 10: 2, 12: 2, 14: 2, 16: 1, 17: 1, 18: 1, 19: 1}},
		{"no hint", 0, map[int]int{0: 1, 1: 1, 2: 1, 3: 1, 4: 1, 5: 1, 6: 1, 7: 1, 8: 1, 9: 1, 10: 1, 11: 1, 12: 1, 13: 1, 14: 1, 15: 1, 16: 1, 17: 1, 18: 1, 19: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			var e *activities.Eval
			const shards, perShard = 20, 500
			env.OnActivity(e.PlanRun, mock.Anything, mock.Anything).Return(activities.PlanRunResult{
				RunID: "r1", Samples: shards * perShard, Shards: shards, ShardSecondsHint: tc.hint}, nil)
			var mu sync.Mutex
			ran := make([]int, shards)
			groups := map[int]int{}
			env.OnActivity(e.RunShard, mock.Anything, mock.Anything).Return(
				func(_ context.Context, in activities.RunShardInput) (activities.ShardResult, error) {
					n := max(in.Shards, 1)
					mu.Lock()
					defer mu.Unlock()
					groups[in.Shard] = n
					for i := range n {
						ran[in.Shard+i]++
					}
					return activities.ShardResult{Shard: in.Shard, Samples: int64(perShard * n), Seconds: 0.5 * float64(n), Shards: n}, nil
				})
			var agg activities.AggregateInput
			env.OnActivity(e.Aggregate, mock.Anything, mock.Anything).Return(
				func(_ context.Context, in activities.AggregateInput) (aggregate.Summary, error) {
					agg = in
					return aggregate.Summary{Samples: shards * perShard}, nil
				})
			env.OnActivity(e.CleanupRun, mock.Anything, mock.Anything).Return(activities.CleanupRunResult{}, nil)
			env.ExecuteWorkflow(EvaluateModel, EvaluateModelInput{})
			require.NoError(t, env.GetWorkflowError())
			for i, n := range ran {
				require.Equal(t, 1, n, "shard %d ran %d times", i, n)
			}
			require.Equal(t, tc.groups, groups)
			require.Equal(t, shards, agg.ShardsTimed)
			require.InDelta(t, 0.5/perShard, agg.SecondsPerSample, 1e-12)
		})
	}
}

// TestEvaluateModelBatchPlan: a batch plan's shards run one per activity,
// all at once (they wait for their batches), each given twice the batch
// bound plus an hour.
func TestEvaluateModelBatchPlan(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	var e *activities.Eval
	env.OnActivity(e.PlanRun, mock.Anything, mock.Anything).Return(activities.PlanRunResult{RunID: "r1", Samples: 20, Shards: 20,
		ShardSecondsHint: 0.01, Batch: true, BatchBound: 2 * time.Hour}, nil)
	var mu sync.Mutex
	running, most := 0, 0
	env.OnActivity(e.RunShard, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.RunShardInput) (activities.ShardResult, error) {
			info := activity.GetInfo(ctx)
			require.LessOrEqual(t, in.Shards, 1, "batch shards are not grouped")
			require.GreaterOrEqual(t, info.Deadline.Sub(info.StartedTime), 5*time.Hour)
			mu.Lock()
			running++
			most = max(most, running)
			mu.Unlock()
			// Hold until more than the interactive default run at once (or
			// give up after a while, and the check below fails): a loaded
			// machine may not start them all within a fixed sleep.
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				mu.Lock()
				enough := most > 8
				mu.Unlock()
				if enough {
					break
				}
			}
			mu.Lock()
			running--
			mu.Unlock()
			return activities.ShardResult{Shard: in.Shard, Samples: 1, Seconds: 0.001}, nil
		})
	env.OnActivity(e.Aggregate, mock.Anything, mock.Anything).Return(aggregate.Summary{Samples: 20, Batch: true}, nil)
	env.OnActivity(e.CleanupRun, mock.Anything, mock.Anything).Return(activities.CleanupRunResult{}, nil)
	env.ExecuteWorkflow(EvaluateModel, EvaluateModelInput{})
	require.NoError(t, env.GetWorkflowError())
	require.Greater(t, most, 8, "more batch shards at once than the interactive default")
}
