package workflows

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/benchline/benchline/activities"
	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/catalog"
)

func testPlan(parts int) datasets.Plan {
	p := datasets.Plan{Dataset: "d", Version: "abc"}
	for i := range parts {
		p.Parts = append(p.Parts, datasets.Part{Index: i, Rows: 10})
	}
	return p
}

func TestBuildDatasetWritesEveryPartThenPublishes(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	var a *activities.Datasets
	plan := testPlan(7)
	env.OnActivity(a.PlanBuild, mock.Anything, mock.Anything).Return(activities.PlanBuildResult{Plan: plan}, nil).Once()
	seen := map[int]bool{}
	env.OnActivity(a.WritePart, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.WritePartInput) (catalog.File, error) {
			require.False(t, seen[in.Part], "part %d written twice", in.Part)
			seen[in.Part] = true
			return catalog.File{Path: catalog.PartPath(in.Part), Rows: 10}, nil
		}).Times(7)
	env.OnActivity(a.Publish, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.PublishInput) (catalog.Manifest, error) {
			require.Len(t, in.Files, 7)
			for i, f := range in.Files {
				require.Equal(t, catalog.PartPath(i), f.Path, "files must be in part order")
			}
			return catalog.Manifest{Rows: 70, Files: in.Files}, nil
		}).Once()
	env.ExecuteWorkflow(BuildDataset, BuildDatasetInput{Dataset: "d", MaxParallel: 3})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res BuildDatasetResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Equal(t, BuildDatasetResult{Dataset: "d", Version: "abc", Rows: 70, Files: 7, ManifestKey: "datasets/d/vabc/manifest.json"}, res)
	env.AssertExpectations(t)
}

func TestBuildDatasetReusesPublishedVersion(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	var a *activities.Datasets
	env.OnActivity(a.PlanBuild, mock.Anything, mock.Anything).Return(activities.PlanBuildResult{Plan: testPlan(2), Published: true}, nil)
	env.ExecuteWorkflow(BuildDataset, BuildDatasetInput{Dataset: "d"})
	var res BuildDatasetResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.True(t, res.Reused)
	require.Equal(t, int64(20), res.Rows)
	env.AssertNotCalled(t, "WritePart", mock.Anything, mock.Anything)
	env.AssertNotCalled(t, "Publish", mock.Anything, mock.Anything)
}

func TestBuildDatasetDoesNotPublishAfterAFailedPart(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	var a *activities.Datasets
	env.OnActivity(a.PlanBuild, mock.Anything, mock.Anything).Return(activities.PlanBuildResult{Plan: testPlan(3)}, nil)
	env.OnActivity(a.WritePart, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.WritePartInput) (catalog.File, error) {
			if in.Part == 1 {
				return catalog.File{}, temporal.NewNonRetryableApplicationError("x.json:3: bad row", activities.ErrTypeInvalidInput, nil)
			}
			return catalog.File{Rows: 10}, nil
		})
	env.ExecuteWorkflow(BuildDataset, BuildDatasetInput{Dataset: "d"})
	err := env.GetWorkflowError()
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr), "err = %v", err)
	require.Equal(t, activities.ErrTypeInvalidInput, appErr.Type())
	require.Contains(t, appErr.Error(), "x.json:3")
	env.AssertNotCalled(t, "Publish", mock.Anything, mock.Anything)
}

func TestBuildDatasetStopsOnBadInputAtPlan(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	var a *activities.Datasets
	env.OnActivity(a.PlanBuild, mock.Anything, mock.Anything).Return(activities.PlanBuildResult{},
		temporal.NewNonRetryableApplicationError("q.json:2: not a JSON object", activities.ErrTypeInvalidInput, nil)).Once()
	env.ExecuteWorkflow(BuildDataset, BuildDatasetInput{Dataset: "d"})
	require.ErrorContains(t, env.GetWorkflowError(), "q.json:2")
	env.AssertExpectations(t)
}
