// Package workflows holds benchline's Temporal workflows. Workflow code is
// deterministic: it passes object keys, plans and small summaries between
// activities, never rows or completions.
package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/benchline/benchline/activities"
	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/catalog"
)

// BuildDatasetInput asks for a dataset version to be built from sources.
type BuildDatasetInput struct {
	Dataset string
	Request datasets.Request
	// MaxParallel bounds the parts written at once [4].
	MaxParallel int
}

// BuildDatasetResult summarises a built (or already published) version.
type BuildDatasetResult struct {
	Dataset     string
	Version     string
	Rows        int64
	Files       int
	ManifestKey string
	// Reused is true when the version was already published and nothing was written.
	Reused bool
}

// Activity options. Parts heartbeat as they write, so a killed worker's part
// is retried on another worker within HeartbeatTimeout.
var (
	planOptions = workflow.ActivityOptions{
		StartToCloseTimeout: time.Hour,
		HeartbeatTimeout:    time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
			NonRetryableErrorTypes: []string{activities.ErrTypeInvalidInput},
		},
	}
	partOptions = workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Hour,
		HeartbeatTimeout:    10 * time.Second,
		RetryPolicy:         planOptions.RetryPolicy,
	}
)

// BuildDataset plans a build, writes its parts in parallel and publishes the
// version with its manifest written last.
func BuildDataset(ctx workflow.Context, in BuildDatasetInput) (BuildDatasetResult, error) {
	var a *activities.Datasets
	var planned activities.PlanBuildResult
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, planOptions), a.PlanBuild,
		activities.PlanBuildInput{Dataset: in.Dataset, Request: in.Request}).Get(ctx, &planned)
	if err != nil {
		return BuildDatasetResult{}, err
	}
	plan := planned.Plan
	res := BuildDatasetResult{Dataset: plan.Dataset, Version: plan.Version, ManifestKey: catalog.ManifestKey(plan.Dataset, plan.Version)}
	if planned.Published {
		for _, p := range plan.Parts {
			res.Rows += p.Rows
		}
		res.Files, res.Reused = len(plan.Parts), true
		return res, nil
	}

	maxPar := in.MaxParallel
	if maxPar <= 0 {
		maxPar = 4
	}
	files := make([]catalog.File, len(plan.Parts))
	partCtx := workflow.WithActivityOptions(ctx, partOptions)
	var firstErr error
	next, running := 0, 0
	sel := workflow.NewSelector(ctx)
	for next < len(plan.Parts) || running > 0 {
		for running < maxPar && next < len(plan.Parts) && firstErr == nil {
			i := next
			f := workflow.ExecuteActivity(partCtx, a.WritePart, activities.WritePartInput{Plan: plan, Part: i})
			sel.AddFuture(f, func(f workflow.Future) {
				running--
				if err := f.Get(ctx, &files[i]); err != nil && firstErr == nil {
					firstErr = err
				}
			})
			next++
			running++
		}
		if running == 0 {
			break
		}
		sel.Select(ctx)
	}
	if firstErr != nil {
		return res, firstErr
	}

	var m catalog.Manifest
	err = workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, planOptions), a.Publish,
		activities.PublishInput{Plan: plan, Files: files, CreatedAt: workflow.Now(ctx)}).Get(ctx, &m)
	if err != nil {
		return res, err
	}
	res.Rows, res.Files = m.Rows, len(m.Files)
	return res, nil
}
