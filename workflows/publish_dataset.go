package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/benchline/benchline/activities"
	"github.com/benchline/benchline/internal/catalog"
)

// PublishDatasetInput asks for a dataset version to be published as a
// release (internal/release) at a destination.
type PublishDatasetInput struct {
	// Ref is NAME, NAME@latest or NAME@VERSION.
	Ref string
	// Dest is s3://bucket/prefix or an absolute directory on the workers.
	Dest string
	// MaxParallel bounds the files copied at once [4].
	MaxParallel int
	// Run, when set, publishes that finished evaluation run's per-sample
	// results (its result shards) as the details dataset
	// release.DetailsName(dataset, model), version the run id; Ref is
	// then ignored.
	Run string `json:",omitempty"`
}

// PublishDatasetResult says where the release is.
type PublishDatasetResult struct {
	Dataset string
	Version string
	Release string // URI of the release (s3://… or a directory)
	Files   int
	Rows    int64
	// Reused is true when the release was already there with the same
	// files: nothing was copied or written (latest may still have moved).
	Reused bool
	// LatestMoved is true when the destination's latest named another
	// version (or none) before this publish.
	LatestMoved bool
	// Latest is what the destination's latest named before and after
	// (catalog.LatestMove); zero for a variant.
	Latest catalog.LatestMove `json:",omitzero"`
}

// PublishDataset copies a dataset version to a release location: it plans
// the layout, copies every file (at most MaxParallel at once), each
// verified by sha256 after the copy, then writes the card and moves the
// destination's latest last. If a copy fails for good, what was staged is
// deleted and latest is left as it was, so no half release is visible.
func PublishDataset(ctx workflow.Context, in PublishDatasetInput) (PublishDatasetResult, error) {
	var a *activities.Publish
	shortCtx := workflow.WithActivityOptions(ctx, releaseOptions)
	var plan activities.PlanPublishResult
	err := workflow.ExecuteActivity(shortCtx, a.PlanPublish, activities.PlanPublishInput{Ref: in.Ref, Dest: in.Dest, Run: in.Run}).Get(ctx, &plan)
	if err != nil {
		return PublishDatasetResult{}, err
	}
	l := plan.Layout
	res := PublishDatasetResult{Dataset: l.Dataset, Version: l.Version}
	if !plan.Published {
		maxPar := in.MaxParallel
		if maxPar <= 0 {
			maxPar = 4
		}
		copyCtx := workflow.WithActivityOptions(ctx, copyOptions)
		err := inWindow(ctx, len(l.Files), maxPar,
			func(i int) workflow.Future {
				return workflow.ExecuteActivity(copyCtx, a.CopyReleaseFile, activities.CopyReleaseFileInput{
					Dest: plan.Dest, Dataset: l.Dataset, Version: l.Version, SrcDir: l.SrcDir, File: l.Files[i]})
			},
			func(_ int, f workflow.Future) error { return f.Get(ctx, nil) })
		if err != nil {
			// Delete what was staged; the copy's error is the one to report.
			_ = workflow.ExecuteActivity(shortCtx, a.AbortPublish, activities.AbortPublishInput{Dest: plan.Dest, Layout: l}).Get(ctx, nil)
			return res, err
		}
	}
	var fin activities.FinishPublishResult
	err = workflow.ExecuteActivity(shortCtx, a.FinishPublish, activities.FinishPublishInput{
		Dest: plan.Dest, Layout: l, Published: plan.Published}).Get(ctx, &fin)
	if err != nil {
		return res, err
	}
	res.Release, res.Files, res.Rows, res.Reused, res.LatestMoved, res.Latest = fin.Release, fin.Files, fin.Rows, fin.Reused, fin.LatestMoved, fin.Latest
	return res, nil
}
