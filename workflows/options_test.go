package workflows

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/benchline/benchline/activities"
	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/release"
)

// TestActivityOptionSetsAreBounded walks every activity option set of the
// workflows: each retries a bounded number of times (or says why not),
// never retries bad input, and gives long activities a heartbeat timeout,
// so that nothing a workflow schedules can retry or wait forever.
func TestActivityOptionSetsAreBounded(t *testing.T) {
	sets := ActivityOptionSets()
	if len(sets) == 0 {
		t.Fatal("no activity option sets listed")
	}
	seen := map[string]string{}
	for _, s := range sets {
		t.Run(s.Name, func(t *testing.T) {
			o := s.Options
			for _, a := range s.Activities {
				if prev, dup := seen[a]; dup {
					t.Errorf("activity %s is listed in sets %s and %s", a, prev, s.Name)
				}
				seen[a] = s.Name
			}
			if o.StartToCloseTimeout <= 0 {
				t.Error("no StartToCloseTimeout")
			}
			if o.ScheduleToCloseTimeout <= 0 {
				t.Error("no ScheduleToCloseTimeout: an activity no worker picks up waits forever")
			}
			rp := o.RetryPolicy
			if rp == nil {
				t.Fatal("no retry policy: Temporal's default retries without limit")
			}
			if rp.MaximumAttempts <= 0 && s.Unbounded == "" {
				t.Errorf("MaximumAttempts = %d (unlimited) and no documented reason", rp.MaximumAttempts)
			}
			if s.Unbounded != "" && o.HeartbeatTimeout <= 0 {
				t.Errorf("unbounded attempts (%s) without a heartbeat to prove the activity alive", s.Unbounded)
			}
			if !slices.Contains(rp.NonRetryableErrorTypes, activities.ErrTypeInvalidInput) {
				t.Errorf("%s is retried: NonRetryableErrorTypes = %v", activities.ErrTypeInvalidInput, rp.NonRetryableErrorTypes)
			}
			if s.Long && o.HeartbeatTimeout <= 0 {
				t.Error("a long activity without a HeartbeatTimeout: a dead worker is noticed only at StartToCloseTimeout")
			}
			if rp.BackoffCoefficient < 1 || rp.InitialInterval <= 0 || rp.MaximumInterval < rp.InitialInterval {
				t.Errorf("no backoff: initial %v, coefficient %v, maximum %v", rp.InitialInterval, rp.BackoffCoefficient, rp.MaximumInterval)
			}
		})
	}
	for _, a := range []string{"PlanBuild", "Generate", "FinishPlan", "WritePart", "Publish", "PlanRun", "RunShard", "ScoreShard", "Aggregate",
		"PlanPublish", "CopyReleaseFile", "FinishPublish", "AbortPublish", "ResolveBoard", "WaitRun", "WriteBoard", "CleanupRun", "DiscardStaged"} {
		if _, ok := seen[a]; !ok {
			t.Errorf("activity %s is in no listed option set", a)
		}
	}
}

// TestWorkflowsScheduleWithTheListedOptions runs both workflows through
// every activity they schedule (a build with generation units, a run with a
// deferred scorer) and checks each activity ran with the timeouts of the
// option set ActivityOptionSets lists it in: the list the bounds test walks
// is the one the workflows use.
func TestWorkflowsScheduleWithTheListedOptions(t *testing.T) {
	want := map[string]ActivityOptionSet{}
	for _, s := range ActivityOptionSets() {
		for _, a := range s.Activities {
			want[a] = s
		}
	}
	var mu sync.Mutex
	got := map[string]activity.Info{}
	record := func(ctx context.Context) {
		info := activity.GetInfo(ctx)
		mu.Lock()
		defer mu.Unlock()
		got[info.ActivityType.Name] = info
	}

	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	var d *activities.Datasets
	plan := testPlan(0)
	plan.Generate = []datasets.Part{{Index: 0, Label: "u0", Rows: 1}}
	env.OnActivity(d.PlanBuild, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, _ activities.PlanBuildInput) (activities.PlanBuildResult, error) {
			record(ctx)
			return activities.PlanBuildResult{Plan: plan}, nil
		})
	env.OnActivity(d.Generate, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, _ activities.GenerateInput) (datasets.Generated, error) {
			record(ctx)
			return datasets.Generated{}, nil
		})
	env.OnActivity(d.FinishPlan, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.FinishPlanInput) (datasets.Plan, error) {
			record(ctx)
			return testPlan(1), nil
		})
	env.OnActivity(d.WritePart, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.WritePartInput) (catalog.File, error) {
			record(ctx)
			return catalog.File{Path: catalog.PartPath(in.Part), Rows: 10}, nil
		})
	env.OnActivity(d.Publish, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.PublishInput) (activities.PublishResult, error) {
			record(ctx)
			return activities.PublishResult{Manifest: catalog.Manifest{Rows: 10, Files: in.Files}}, nil
		})
	env.ExecuteWorkflow(BuildDataset, BuildDatasetInput{Dataset: "d"})
	require.NoError(t, env.GetWorkflowError())
	// A build failing past PlanBuild deletes what PlanBuild staged.
	env = s.NewTestWorkflowEnvironment()
	env.OnActivity(d.PlanBuild, mock.Anything, mock.Anything).Return(activities.PlanBuildResult{Plan: testPlan(1), Staged: []string{"staging/sources/x"}}, nil)
	env.OnActivity(d.WritePart, mock.Anything, mock.Anything).Return(catalog.File{}, temporal.NewNonRetryableApplicationError("bad", activities.ErrTypeInvalidInput, nil))
	env.OnActivity(d.DiscardStaged, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.DiscardStagedInput) (int, error) {
			record(ctx)
			return len(in.Keys), nil
		})
	env.ExecuteWorkflow(BuildDataset, BuildDatasetInput{Dataset: "d"})
	require.Error(t, env.GetWorkflowError())

	env = s.NewTestWorkflowEnvironment()
	var e *activities.Eval
	env.OnActivity(e.PlanRun, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, _ activities.PlanRunInput) (activities.PlanRunResult, error) {
			record(ctx)
			return activities.PlanRunResult{RunID: "r1", Samples: 1, Shards: 1, ScoreQueue: "sandbox"}, nil
		})
	env.OnActivity(e.RunShard, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.RunShardInput) (activities.ShardResult, error) {
			record(ctx)
			return activities.ShardResult{Shard: in.Shard, Samples: 1}, nil
		})
	env.OnActivity(e.ScoreShard, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.ScoreShardInput) (activities.ShardResult, error) {
			record(ctx)
			return activities.ShardResult{Shard: in.Shard, Samples: 1}, nil
		})
	env.OnActivity(e.Aggregate, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, _ activities.AggregateInput) (aggregate.Summary, error) {
			record(ctx)
			return aggregate.Summary{}, nil
		})
	env.ExecuteWorkflow(EvaluateModel, EvaluateModelInput{})
	require.NoError(t, env.GetWorkflowError())
	// A cancelled run cleans up its checkpoints.
	env = s.NewTestWorkflowEnvironment()
	env.OnActivity(e.PlanRun, mock.Anything, mock.Anything).Return(activities.PlanRunResult{RunID: "r1", Samples: 1, Shards: 1}, nil)
	env.OnActivity(e.RunShard, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.RunShardInput) (activities.ShardResult, error) {
			<-ctx.Done()
			return activities.ShardResult{}, ctx.Err()
		})
	env.OnActivity(e.CleanupRun, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, _ activities.CleanupRunInput) (activities.CleanupRunResult, error) {
			record(ctx)
			return activities.CleanupRunResult{}, nil
		})
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Second)
	env.ExecuteWorkflow(EvaluateModel, EvaluateModelInput{})
	require.True(t, temporal.IsCanceledError(env.GetWorkflowError()), "cancelled run: %v", env.GetWorkflowError())

	// A refresh with a cell to reuse and one whose run is already in
	// progress elsewhere (WaitRun).
	env = s.NewTestWorkflowEnvironment()
	var l *activities.Leaderboard
	env.OnActivity(l.ResolveBoard, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, _ activities.ResolveBoardInput) ([]activities.BoardCell, error) {
			record(ctx)
			return []activities.BoardCell{{RunID: "r1", Finished: true}, {RunID: "r2"}}, nil
		})
	env.OnWorkflow(EvaluateModel, mock.Anything, mock.Anything).Return(EvaluateModelResult{}, &temporal.ChildWorkflowExecutionAlreadyStartedError{})
	env.OnActivity(l.WaitRun, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, _ activities.WaitRunInput) error {
			record(ctx)
			return nil
		})
	env.OnActivity(l.WriteBoard, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, _ activities.WriteBoardInput) (activities.WriteBoardResult, error) {
			record(ctx)
			return activities.WriteBoardResult{}, nil
		})
	env.ExecuteWorkflow(RefreshLeaderboard, RefreshLeaderboardInput{})
	require.NoError(t, env.GetWorkflowError())

	// A publish whose second copy fails for good: every publishing activity runs.
	env = s.NewTestWorkflowEnvironment()
	var p *activities.Publish
	env.OnActivity(p.PlanPublish, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, _ activities.PlanPublishInput) (activities.PlanPublishResult, error) {
			record(ctx)
			return activities.PlanPublishResult{Layout: release.Layout{Dataset: "d", Version: "v", Files: make([]release.File, 2)}}, nil
		})
	copies := 0
	env.OnActivity(p.CopyReleaseFile, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, _ activities.CopyReleaseFileInput) error {
			record(ctx)
			if copies++; copies == 2 {
				return temporal.NewNonRetryableApplicationError("corrupt", activities.ErrTypeInvalidInput, nil)
			}
			return nil
		})
	env.OnActivity(p.AbortPublish, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, _ activities.AbortPublishInput) error {
			record(ctx)
			return nil
		})
	env.ExecuteWorkflow(PublishDataset, PublishDatasetInput{Ref: "d@v", Dest: "/tmp/x", MaxParallel: 1})
	require.ErrorContains(t, env.GetWorkflowError(), "corrupt")
	env = s.NewTestWorkflowEnvironment()
	env.OnActivity(p.PlanPublish, mock.Anything, mock.Anything).Return(activities.PlanPublishResult{Published: true}, nil)
	env.OnActivity(p.FinishPublish, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, _ activities.FinishPublishInput) (activities.FinishPublishResult, error) {
			record(ctx)
			return activities.FinishPublishResult{}, nil
		})
	env.ExecuteWorkflow(PublishDataset, PublishDatasetInput{Ref: "d@v", Dest: "/tmp/x"})
	require.NoError(t, env.GetWorkflowError())

	for name, set := range want {
		info, ok := got[name]
		if !ok {
			t.Errorf("%s: not scheduled by either workflow", name)
			continue
		}
		o := set.Options
		if info.StartToCloseTimeout != o.StartToCloseTimeout || info.HeartbeatTimeout != o.HeartbeatTimeout ||
			info.ScheduleToCloseTimeout != o.ScheduleToCloseTimeout {
			t.Errorf("%s ran with start-to-close %v, heartbeat %v, schedule-to-close %v; set %s says %v, %v, %v", name,
				info.StartToCloseTimeout, info.HeartbeatTimeout, info.ScheduleToCloseTimeout,
				set.Name, o.StartToCloseTimeout, o.HeartbeatTimeout, o.ScheduleToCloseTimeout)
		}
	}
}

// TestInfrastructureFailuresAreRetriedThenEndTheWorkflow: an activity that
// keeps failing for a reason retrying might fix (a source URL answering
// 503) is attempted infraAttempts times, then the workflow fails with the
// last attempt's error; one that fails with bad input is attempted once.
func TestInfrastructureFailuresAreRetriedThenEndTheWorkflow(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		attempts int
	}{
		{"infrastructure", errors.New("source: GET http://h/x.json: HTTP 503 Service Unavailable"), infraAttempts},
		{"bad input", temporal.NewNonRetryableApplicationError("x.json:2: not a JSON object", activities.ErrTypeInvalidInput, nil), 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			var a *activities.Datasets
			calls := 0
			env.OnActivity(a.PlanBuild, mock.Anything, mock.Anything).Return(
				func(context.Context, activities.PlanBuildInput) (activities.PlanBuildResult, error) {
					calls++
					return activities.PlanBuildResult{}, tc.err
				})
			env.ExecuteWorkflow(BuildDataset, BuildDatasetInput{Dataset: "d"})
			require.True(t, env.IsWorkflowCompleted())
			err := env.GetWorkflowError()
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.err.Error())
			require.Equal(t, tc.attempts, calls, "attempts of PlanBuild")
		})
	}
}
