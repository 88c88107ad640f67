package workflows

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/benchline/benchline/activities"
	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/runs"
)

// refreshEnv runs RefreshLeaderboard over cells, with child runs answering
// by run id from children (an error, or calls and cache hits).
type childRun struct {
	calls, hits int64
	err         error
}

func runRefresh(t *testing.T, cells []activities.BoardCell, children map[string]childRun) (RefreshLeaderboardResult, *activities.WriteBoardInput, []string, error) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	var a *activities.Leaderboard
	env.OnActivity(a.ResolveBoard, mock.Anything, mock.Anything).Return(cells, nil)
	var wrote *activities.WriteBoardInput
	env.OnActivity(a.WriteBoard, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.WriteBoardInput) (activities.WriteBoardResult, error) {
			wrote = &in
			var failed []leaderboard.FailedCell
			for _, c := range in.Cells {
				if c.Error != "" {
					failed = append(failed, leaderboard.FailedCell{Dataset: c.Dataset, Model: c.Model, RunID: c.RunID, Error: c.Error})
				}
			}
			return activities.WriteBoardResult{Failed: failed, SiteKey: leaderboard.SiteKey(in.Board.Name, in.Stamp)}, nil
		})
	var waited []string
	env.OnActivity(a.WaitRun, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.WaitRunInput) error {
			waited = append(waited, in.RunID)
			return nil
		})
	env.OnWorkflow(EvaluateModel, mock.Anything, mock.Anything).Return(
		func(ctx workflow.Context, in EvaluateModelInput) (EvaluateModelResult, error) {
			id := workflow.GetInfo(ctx).WorkflowExecution.ID
			c := children[id]
			if c.err != nil {
				return EvaluateModelResult{}, c.err
			}
			return EvaluateModelResult{RunID: strings.TrimPrefix(id, "eval-"), Summary: aggregate.Summary{Calls: c.calls, CacheHits: c.hits}}, nil
		})
	env.ExecuteWorkflow(RefreshLeaderboard, RefreshLeaderboardInput{Board: leaderboard.Board{Name: "b"}, MaxConcurrentRuns: 2})
	require.True(t, env.IsWorkflowCompleted())
	var res RefreshLeaderboardResult
	err := env.GetWorkflowError()
	if err == nil {
		require.NoError(t, env.GetWorkflowResult(&res))
	}
	return res, wrote, waited, err
}

func cell(ds, model, run string, finished bool) activities.BoardCell {
	return activities.BoardCell{Dataset: ds, Version: "v1", Model: model, RunID: run, Finished: finished,
		Request: runs.Request{Dataset: ds + "@v1", Model: model}}
}

func TestRefreshLeaderboard(t *testing.T) {
	t.Run("reuses finished runs and counts the calls the others paid", func(t *testing.T) {
		cells := []activities.BoardCell{cell("d1", "m1", "r1", true), cell("d1", "m2", "r2", false), cell("d2", "m1", "r3", false), cell("d2", "m2", "r4", true)}
		res, wrote, _, err := runRefresh(t, cells, map[string]childRun{"eval-r2": {calls: 10, hits: 3}, "eval-r3": {calls: 5, hits: 5}})
		require.NoError(t, err)
		require.Equal(t, 2, res.RunsStarted)
		require.Equal(t, 2, res.RunsReused)
		require.Equal(t, int64(7), res.ModelCalls)
		require.Regexp(t, `^\d{8}T\d{6}Z$`, res.Stamp)
		require.Equal(t, leaderboard.SiteKey("b", res.Stamp), res.SiteKey)
		require.NotNil(t, wrote)
		require.Len(t, wrote.Cells, 4)
		for i, c := range wrote.Cells {
			require.Equal(t, cells[i].Finished, c.Reused, "cell %d", i)
			require.Empty(t, c.Error)
		}
	})
	t.Run("nothing new: no child, no call", func(t *testing.T) {
		cells := []activities.BoardCell{cell("d1", "m1", "r1", true), cell("d1", "m2", "r2", true)}
		res, wrote, _, err := runRefresh(t, cells, map[string]childRun{"eval-r1": {err: errors.New("must not start")}, "eval-r2": {err: errors.New("must not start")}})
		require.NoError(t, err)
		require.Equal(t, 0, res.RunsStarted)
		require.Equal(t, 2, res.RunsReused)
		require.Zero(t, res.ModelCalls)
		require.NotNil(t, wrote)
	})
	t.Run("a failed run is a failed cell", func(t *testing.T) {
		cells := []activities.BoardCell{cell("d1", "m1", "r1", true), cell("d1", "m2", "r2", false)}
		res, wrote, _, err := runRefresh(t, cells, map[string]childRun{"eval-r2": {err: temporal.NewNonRetryableApplicationError("gateway: auth refused", "permanent-auth", nil)}})
		require.NoError(t, err)
		require.Len(t, res.Failed, 1)
		require.Equal(t, "m2", res.Failed[0].Model)
		require.Contains(t, wrote.Cells[1].Error, "gateway: auth refused")
		require.Equal(t, 1, res.RunsStarted)
	})
	t.Run("every cell failed: nothing written", func(t *testing.T) {
		cells := []activities.BoardCell{cell("d1", "m1", "r1", false), cell("d1", "m2", "r2", false)}
		fail := childRun{err: temporal.NewNonRetryableApplicationError("dataset broken", "InvalidInput", nil)}
		_, wrote, _, err := runRefresh(t, cells, map[string]childRun{"eval-r1": fail, "eval-r2": fail})
		require.Error(t, err)
		require.Contains(t, err.Error(), "every cell failed")
		require.Contains(t, err.Error(), "m1 on d1: dataset broken")
		require.Nil(t, wrote, "WriteBoard ran: latest would have moved")
	})
	t.Run("a run already in progress is waited for, not started", func(t *testing.T) {
		cells := []activities.BoardCell{cell("d1", "m1", "r1", false)}
		res, _, waited, err := runRefresh(t, cells, map[string]childRun{"eval-r1": {err: &temporal.ChildWorkflowExecutionAlreadyStartedError{}}})
		require.NoError(t, err)
		require.Equal(t, []string{"r1"}, waited)
		require.Equal(t, 0, res.RunsStarted)
		require.Equal(t, 1, res.RunsReused)
	})
}

func TestRefreshLeaderboardRefusesABadStamp(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.ExecuteWorkflow(RefreshLeaderboard, RefreshLeaderboardInput{Board: leaderboard.Board{Name: "b"}, Stamp: "../x"})
	require.Error(t, env.GetWorkflowError())
	require.Contains(t, env.GetWorkflowError().Error(), `stamp "../x"`)
}

// TestRefreshLeaderboardProgress: the progress query counts reused,
// running, done and failed runs.
func TestRefreshLeaderboardProgress(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	var a *activities.Leaderboard
	cells := []activities.BoardCell{cell("d1", "m1", "r1", true), cell("d1", "m2", "r2", false), cell("d1", "m3", "r3", false)}
	env.OnActivity(a.ResolveBoard, mock.Anything, mock.Anything).Return(cells, nil)
	env.OnActivity(a.WriteBoard, mock.Anything, mock.Anything).Return(activities.WriteBoardResult{}, nil)
	env.OnWorkflow(EvaluateModel, mock.Anything, mock.Anything).Return(
		func(ctx workflow.Context, in EvaluateModelInput) (EvaluateModelResult, error) {
			if in.Request.Model == "m3" {
				return EvaluateModelResult{}, temporal.NewNonRetryableApplicationError("boom", "x", nil)
			}
			return EvaluateModelResult{}, nil
		})
	env.ExecuteWorkflow(RefreshLeaderboard, RefreshLeaderboardInput{Board: leaderboard.Board{Name: "b"}})
	require.NoError(t, env.GetWorkflowError())
	v, err := env.QueryWorkflow(ProgressQuery)
	require.NoError(t, err)
	var p RefreshProgress
	require.NoError(t, v.Get(&p))
	require.Equal(t, RefreshProgress{Board: "b", Stamp: p.Stamp, Cells: 3, Reused: 1, Running: 0, Done: 2, Failed: 1}, p)
}
