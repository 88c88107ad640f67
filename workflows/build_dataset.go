// Package workflows holds benchline's Temporal workflows. Workflow code is
// deterministic: it passes object keys, plans and small summaries between
// activities, never rows or completions.
package workflows

import (
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
	// Generated sums the generation units of a builder that calls models
	// (datasets.Generator): outputs written, calls skipped, and usage
	// (model calls, answers from the cache). Zero for other builders.
	Generated GenerationTotals `json:",omitzero"`
	// Stats are the builder's counts about the build (datasets.Plan.Stats,
	// e.g. items a validation rejected, by reason).
	Stats map[string]int64 `json:",omitempty"`
	// Variant is true for a build with content parameters: latest was not
	// moved (datasets.Plan.Variant). Tag is the tag it was given (--as).
	Variant bool   `json:",omitempty"`
	Tag     string `json:",omitempty"`
	// Latest is what the build did to the dataset's latest pointer: what
	// it named before and after, with their rows (see catalog.LatestMove:
	// latest names the last default build, a reused one included). Zero
	// for a variant.
	Latest catalog.LatestMove `json:",omitzero"`
}

// GenerationTotals sums the datasets.Generated summaries of a build.
type GenerationTotals struct {
	Units     int
	Outputs   int64
	Skipped   int64
	Calls     int64
	CacheHits int64
	CostUSD   float64
}

// BuildDataset plans a build, writes its parts in parallel and publishes the
// version with its manifest written last. A builder that calls models
// (datasets.Generator) plans generation units first: they run in parallel
// (each an activity that saves its outputs to the store and returns a
// summary), then FinishPlan plans the parts from what they saved.
//
// A build that fails or is cancelled after PlanBuild deletes the sources
// its PlanBuild staged and the parts its WritePart activities wrote under
// the unpublished version's data/ (DiscardStaged, in a disconnected
// context) before it ends with its error.
func BuildDataset(ctx workflow.Context, in BuildDatasetInput) (BuildDatasetResult, error) {
	var discard activities.DiscardStagedInput
	res, err := buildDataset(ctx, in, &discard)
	if err != nil && (len(discard.Keys) > 0 || discard.Dataset != "") {
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		dctx = workflow.WithActivityOptions(dctx, cleanupOptions)
		var a *activities.Datasets
		var n int
		log := workflow.GetLogger(ctx)
		if derr := workflow.ExecuteActivity(dctx, a.DiscardStaged, discard).Get(dctx, &n); derr != nil {
			log.Warn("build failed; deleting its staged sources and parts failed", "error", derr)
		} else {
			log.Info("build failed; deleted its staged sources and parts", "objects", n)
		}
	}
	return res, err
}

// discardStagedChange is the workflow.GetVersion change id of deleting a
// failed build's staged sources; discardPartsChange of deleting the parts
// it wrote too.
const (
	discardStagedChange = "discard-staged-on-failure"
	discardPartsChange  = "discard-parts-on-failure"
)

// buildDataset is BuildDataset; once the build is past PlanBuild and not
// reused, it sets *discard to what to delete if it fails: the sources
// PlanBuild staged, the version and its part count.
func buildDataset(ctx workflow.Context, in BuildDatasetInput, discard *activities.DiscardStagedInput) (BuildDatasetResult, error) {
	var a *activities.Datasets
	var planned activities.PlanBuildResult
	planCtx := workflow.WithActivityOptions(ctx, planOptions)
	err := workflow.ExecuteActivity(planCtx, a.PlanBuild,
		activities.PlanBuildInput{Dataset: in.Dataset, Request: in.Request}).Get(ctx, &planned)
	if err != nil {
		return BuildDatasetResult{}, err
	}
	plan := planned.Plan
	res := BuildDatasetResult{Dataset: plan.Dataset, Version: plan.Version, ManifestKey: catalog.ManifestKey(plan.Dataset, plan.Version),
		Variant: plan.Variant, Tag: plan.Tag}
	if planned.Published {
		for _, p := range plan.Parts {
			res.Rows += p.Rows
		}
		res.Files, res.Reused = len(plan.Parts), true
		// The reused version's counts (its manifest's); older histories
		// have none, and then the builder's counts of this source.
		res.Stats = planned.Stats
		if res.Stats == nil {
			res.Stats = plan.Stats
		}
		if planned.Files > 0 { // the manifest's counts (a Generator's plan has no parts yet)
			res.Rows, res.Files = planned.Rows, planned.Files
		}
		res.Latest = planned.Latest
		return res, nil
	}
	// Histories recorded before this have no marker: no cleanup on replay.
	if workflow.GetVersion(ctx, discardStagedChange, workflow.DefaultVersion, 1) >= 1 {
		discard.Keys = planned.Staged
	}
	discardParts := workflow.GetVersion(ctx, discardPartsChange, workflow.DefaultVersion, 1) >= 1
	if discardParts {
		discard.Dataset, discard.Version, discard.Parts = plan.Dataset, plan.Version, len(plan.Parts)
	}

	maxPar := in.MaxParallel
	if maxPar <= 0 {
		maxPar = 4
	}
	if len(plan.Generate) > 0 {
		gens := make([]datasets.Generated, len(plan.Generate))
		genCtx := workflow.WithActivityOptions(ctx, generateOptions)
		unitPlan := plan // each unit's activity gets its own unit only
		unitPlan.Generate = nil
		err := inWindow(ctx, len(plan.Generate), maxPar,
			func(i int) workflow.Future {
				return workflow.ExecuteActivity(genCtx, a.Generate, activities.GenerateInput{Plan: unitPlan, Unit: plan.Generate[i]})
			},
			func(i int, f workflow.Future) error { return f.Get(ctx, &gens[i]) })
		if err != nil {
			return res, err
		}
		for _, g := range gens {
			res.Generated.Units++
			res.Generated.Outputs += g.Outputs
			res.Generated.Skipped += g.Skipped
			res.Generated.Calls += g.Usage.Calls
			res.Generated.CacheHits += g.Usage.CacheHits
			res.Generated.CostUSD += g.Usage.CostUSD
		}
		if err := workflow.ExecuteActivity(planCtx, a.FinishPlan, activities.FinishPlanInput{Plan: plan}).Get(ctx, &plan); err != nil {
			return res, err
		}
	}
	res.Stats = plan.Stats
	if discardParts {
		discard.Parts = len(plan.Parts) // FinishPlan planned them
	}

	files := make([]catalog.File, len(plan.Parts))
	partCtx := workflow.WithActivityOptions(ctx, partOptions)
	err = inWindow(ctx, len(plan.Parts), maxPar,
		func(i int) workflow.Future {
			return workflow.ExecuteActivity(partCtx, a.WritePart, activities.WritePartInput{Plan: plan, Part: i})
		},
		func(i int, f workflow.Future) error { return f.Get(ctx, &files[i]) })
	if err != nil {
		return res, err
	}

	// A PublishResult reads older histories' result (a bare manifest) too.
	var pub activities.PublishResult
	err = workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, publishOptions), a.Publish,
		activities.PublishInput{Plan: plan, Files: files, CreatedAt: workflow.Now(ctx)}).Get(ctx, &pub)
	if err != nil {
		return res, err
	}
	res.Rows, res.Files, res.Latest = pub.Rows, len(pub.Files), pub.Latest
	return res, nil
}

// inWindow runs n activities, at most maxPar at once, in index order:
// start(i) schedules activity i and done(i, f) collects its result. After
// the first error no more are started; the running ones are waited for,
// and the first error is returned.
func inWindow(ctx workflow.Context, n, maxPar int, start func(i int) workflow.Future, done func(i int, f workflow.Future) error) error {
	var firstErr error
	next, running := 0, 0
	sel := workflow.NewSelector(ctx)
	for next < n || running > 0 {
		for running < maxPar && next < n && firstErr == nil {
			i := next
			sel.AddFuture(start(i), func(f workflow.Future) {
				running--
				if err := done(i, f); err != nil && firstErr == nil {
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
	return firstErr
}
