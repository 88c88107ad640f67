package workflows

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/benchline/benchline/activities"
	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/modelapi"
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
	move := catalog.LatestMove{From: &catalog.Pointed{Version: "old", Rows: 90}, To: &catalog.Pointed{Version: "abc", Rows: 70}}
	env.OnActivity(a.PlanBuild, mock.Anything, mock.Anything).Return(activities.PlanBuildResult{Plan: plan}, nil).Once()
	seen := map[int]bool{}
	env.OnActivity(a.WritePart, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.WritePartInput) (catalog.File, error) {
			require.False(t, seen[in.Part], "part %d written twice", in.Part)
			seen[in.Part] = true
			return catalog.File{Path: catalog.PartPath(in.Part), Rows: 10}, nil
		}).Times(7)
	env.OnActivity(a.Publish, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.PublishInput) (activities.PublishResult, error) {
			require.Len(t, in.Files, 7)
			for i, f := range in.Files {
				require.Equal(t, catalog.PartPath(i), f.Path, "files must be in part order")
			}
			return activities.PublishResult{Manifest: catalog.Manifest{Rows: 70, Files: in.Files}, Latest: move}, nil
		}).Once()
	env.ExecuteWorkflow(BuildDataset, BuildDatasetInput{Dataset: "d", MaxParallel: 3})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res BuildDatasetResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Equal(t, BuildDatasetResult{Dataset: "d", Version: "abc", Rows: 70, Files: 7, ManifestKey: "datasets/d/vabc/manifest.json", Latest: move}, res)
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

// TestBuildDatasetReusedReportsTheVersionsCounts: a reused build reports
// the reused version's counts (its manifest's stats), not what the
// builder counted of this source, and what PlanBuild did to latest; a
// PlanBuild result without the version's stats (an older history) keeps
// the plan's.
func TestBuildDatasetReusedReportsTheVersionsCounts(t *testing.T) {
	plan := testPlan(2)
	plan.Stats = map[string]int64{"skipped_items: memory (not supported)": 155, "skipped_items: web_search (not supported)": 100}
	move := catalog.LatestMove{From: &catalog.Pointed{Version: "new", Rows: 600}, To: &catalog.Pointed{Version: "abc", Rows: 20}}
	for _, tc := range []struct {
		name  string
		stats map[string]int64
		want  map[string]int64
	}{
		{"the version's", map[string]int64{"skipped_items: memory (not supported)": 155}, map[string]int64{"skipped_items: memory (not supported)": 155}},
		{"older history", nil, plan.Stats},
		{"the version counted nothing", map[string]int64{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			var a *activities.Datasets
			env.OnActivity(a.PlanBuild, mock.Anything, mock.Anything).Return(
				activities.PlanBuildResult{Plan: plan, Published: true, Rows: 20, Files: 2, Stats: tc.stats, Latest: move}, nil)
			env.ExecuteWorkflow(BuildDataset, BuildDatasetInput{Dataset: "d"})
			var res BuildDatasetResult
			require.NoError(t, env.GetWorkflowResult(&res))
			require.True(t, res.Reused)
			require.Equal(t, tc.want, res.Stats)
			require.Equal(t, move, res.Latest)
		})
	}
}

// TestBuildDatasetDiscardsStagedSourcesWhenItFails: a build that fails past
// PlanBuild deletes the sources its PlanBuild staged, and only those, and
// the parts of its version (named with its part count), and still ends
// with the part's error; a build that succeeds deletes nothing.
func TestBuildDatasetDiscardsStagedSourcesWhenItFails(t *testing.T) {
	for _, fail := range []bool{true, false} {
		t.Run(fmt.Sprintf("part fails %v", fail), func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			var a *activities.Datasets
			staged := []string{"staging/sources/aa", "staging/sources/bb"}
			env.OnActivity(a.PlanBuild, mock.Anything, mock.Anything).Return(activities.PlanBuildResult{Plan: testPlan(2), Staged: staged}, nil)
			env.OnActivity(a.WritePart, mock.Anything, mock.Anything).Return(
				func(_ context.Context, in activities.WritePartInput) (catalog.File, error) {
					if fail && in.Part == 1 {
						return catalog.File{}, temporal.NewNonRetryableApplicationError("x.json:3: bad row", activities.ErrTypeInvalidInput, nil)
					}
					return catalog.File{Rows: 10}, nil
				})
			env.OnActivity(a.Publish, mock.Anything, mock.Anything).Return(activities.PublishResult{Manifest: catalog.Manifest{Rows: 20}}, nil)
			var discarded []string
			var version activities.DiscardStagedInput
			env.OnActivity(a.DiscardStaged, mock.Anything, mock.Anything).Return(
				func(_ context.Context, in activities.DiscardStagedInput) (int, error) {
					discarded, version = in.Keys, in
					return len(in.Keys), nil
				})
			env.ExecuteWorkflow(BuildDataset, BuildDatasetInput{Dataset: "d"})
			err := env.GetWorkflowError()
			if !fail {
				require.NoError(t, err)
				require.Nil(t, discarded)
				return
			}
			require.ErrorContains(t, err, "x.json:3")
			require.Equal(t, staged, discarded)
			plan := testPlan(2)
			require.Equal(t, []any{plan.Dataset, plan.Version, 2}, []any{version.Dataset, version.Version, version.Parts})
		})
	}
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

func generatingPlan(units int) datasets.Plan {
	p := datasets.Plan{Dataset: "d", Version: "gen"}
	for i := range units {
		p.Generate = append(p.Generate, datasets.Part{Index: i, Label: fmt.Sprintf("s/unit-%05d", i), Rows: 100})
	}
	return p
}

func TestBuildDatasetGeneratesUnitsThenFinishesThePlan(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	var a *activities.Datasets
	plan := generatingPlan(5)
	env.OnActivity(a.PlanBuild, mock.Anything, mock.Anything).Return(activities.PlanBuildResult{Plan: plan}, nil).Once()
	generated := map[int]bool{}
	env.OnActivity(a.Generate, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.GenerateInput) (datasets.Generated, error) {
			require.False(t, generated[in.Unit.Index], "unit %d generated twice", in.Unit.Index)
			require.Empty(t, in.Plan.Parts)
			require.Empty(t, in.Plan.Generate, "the whole unit list sent to every unit")
			require.Equal(t, plan.Generate[in.Unit.Index], in.Unit)
			generated[in.Unit.Index] = true
			return datasets.Generated{Unit: in.Unit.Index, Outputs: 40, Skipped: 1, Usage: modelapi.Totals{Calls: 40, CacheHits: 10, CostUSD: 0.5}}, nil
		}).Times(5)
	env.OnActivity(a.FinishPlan, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.FinishPlanInput) (datasets.Plan, error) {
			require.Len(t, generated, 5, "FinishPlan before every unit was generated")
			require.Len(t, in.Plan.Generate, 5)
			p := in.Plan
			p.Parts = []datasets.Part{{Index: 0, Rows: 10}, {Index: 1, Rows: 10}}
			return p, nil
		}).Once()
	env.OnActivity(a.WritePart, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.WritePartInput) (catalog.File, error) {
			require.Len(t, in.Plan.Parts, 2, "parts written from the finished plan")
			return catalog.File{Path: catalog.PartPath(in.Part), Rows: 10}, nil
		}).Times(2)
	env.OnActivity(a.Publish, mock.Anything, mock.Anything).Return(activities.PublishResult{Manifest: catalog.Manifest{Rows: 20, Files: make([]catalog.File, 2)}}, nil).Once()
	env.ExecuteWorkflow(BuildDataset, BuildDatasetInput{Dataset: "d", MaxParallel: 2})
	require.NoError(t, env.GetWorkflowError())
	var res BuildDatasetResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Equal(t, GenerationTotals{Units: 5, Outputs: 200, Skipped: 5, Calls: 200, CacheHits: 50, CostUSD: 2.5}, res.Generated)
	require.Equal(t, int64(20), res.Rows)
	env.AssertExpectations(t)
}

func TestBuildDatasetStopsAfterAFailedUnit(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	var a *activities.Datasets
	env.OnActivity(a.PlanBuild, mock.Anything, mock.Anything).Return(activities.PlanBuildResult{Plan: generatingPlan(4)}, nil)
	env.OnActivity(a.Generate, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.GenerateInput) (datasets.Generated, error) {
			if in.Unit.Index == 1 {
				return datasets.Generated{}, temporal.NewNonRetryableApplicationError("toolpref: item x: model p/m: permanent-auth", "permanent-auth", nil)
			}
			return datasets.Generated{Unit: in.Unit.Index}, nil
		})
	env.ExecuteWorkflow(BuildDataset, BuildDatasetInput{Dataset: "d", MaxParallel: 2})
	require.ErrorContains(t, env.GetWorkflowError(), "item x: model p/m")
	env.AssertNotCalled(t, "FinishPlan", mock.Anything, mock.Anything)
	env.AssertNotCalled(t, "WritePart", mock.Anything, mock.Anything)
	env.AssertNotCalled(t, "Publish", mock.Anything, mock.Anything)
}

func TestBuildDatasetReusesAPublishedGeneratedVersion(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	var a *activities.Datasets
	env.OnActivity(a.PlanBuild, mock.Anything, mock.Anything).Return(
		activities.PlanBuildResult{Plan: generatingPlan(3), Published: true, Rows: 33, Files: 1}, nil)
	env.ExecuteWorkflow(BuildDataset, BuildDatasetInput{Dataset: "d"})
	var res BuildDatasetResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.True(t, res.Reused)
	require.Equal(t, int64(33), res.Rows)
	require.Equal(t, 1, res.Files)
	env.AssertNotCalled(t, "Generate", mock.Anything, mock.Anything)
	env.AssertNotCalled(t, "FinishPlan", mock.Anything, mock.Anything)
}
