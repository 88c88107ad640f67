// Package activities holds benchline's Temporal activities: methods on
// structs of dependencies, thin over the packages that do the work.
package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/source"
)

// ErrTypeInvalidInput is the application error type of bad input (a file
// that does not parse, a row that breaks a rule); it is never retried.
const ErrTypeInvalidInput = "InvalidInput"

// Datasets are the dataset-building activities.
type Datasets struct {
	Store    blob.Store
	Builders *datasets.Registry
	OpenS3   source.S3Opener
}

func (a *Datasets) env() datasets.Env { return datasets.Env{Store: a.Store, OpenS3: a.OpenS3} }

// PlanBuildInput asks to plan a build.
type PlanBuildInput struct {
	Dataset string
	Request datasets.Request
}

// PlanBuildResult is the validated plan and whether its version is already
// published (in which case nothing needs writing).
type PlanBuildResult struct {
	Plan      datasets.Plan
	Published bool
}

// PlanBuild stages and validates the sources and derives the version.
func (a *Datasets) PlanBuild(ctx context.Context, in PlanBuildInput) (PlanBuildResult, error) {
	b, err := a.Builders.Get(in.Dataset)
	if err != nil {
		return PlanBuildResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInvalidInput, err)
	}
	stop := heartbeatEvery(ctx, 5*time.Second)
	plan, err := b.Plan(ctx, a.env(), in.Request)
	stop()
	if err != nil {
		return PlanBuildResult{}, classify(err)
	}
	published, err := blob.Exists(ctx, a.Store, catalog.ManifestKey(plan.Dataset, plan.Version))
	if err != nil {
		return PlanBuildResult{}, err
	}
	return PlanBuildResult{Plan: plan, Published: published}, nil
}

// WritePartInput names one part of a plan.
type WritePartInput struct {
	Plan datasets.Plan
	Part int
}

// WritePart writes one part to its deterministic key. A retry rewrites the
// same object with the same bytes, so a killed worker leaves no duplicates.
func (a *Datasets) WritePart(ctx context.Context, in WritePartInput) (catalog.File, error) {
	b, err := a.Builders.Get(in.Plan.Dataset)
	if err != nil {
		return catalog.File{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInvalidInput, err)
	}
	if in.Part < 0 || in.Part >= len(in.Plan.Parts) {
		err := fmt.Errorf("activities: part %d out of range (plan has %d)", in.Part, len(in.Plan.Parts))
		return catalog.File{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInvalidInput, err)
	}
	p := in.Plan.Parts[in.Part]
	key := catalog.PartKey(in.Plan.Dataset, in.Plan.Version, p.Index)
	progress := func(rows int64) { activity.RecordHeartbeat(ctx, rows) }
	info, err := b.WritePart(ctx, a.env(), in.Plan, p, key, progress)
	if err != nil {
		return catalog.File{}, classify(err)
	}
	if info.Rows != p.Rows {
		err := fmt.Errorf("activities: part %d (%s) wrote %d rows, plan expected %d", p.Index, p.Label, info.Rows, p.Rows)
		return catalog.File{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInvalidInput, err)
	}
	return catalog.File{Path: catalog.PartPath(p.Index), Rows: info.Rows, Bytes: info.Bytes, SHA256: info.SHA256}, nil
}

// PublishInput is a finished build to publish.
type PublishInput struct {
	Plan      datasets.Plan
	Files     []catalog.File
	CreatedAt time.Time
}

// Publish checks the written files and writes the card, the manifest and the
// latest pointer, in that order. A version already published is left as it is.
func (a *Datasets) Publish(ctx context.Context, in PublishInput) (catalog.Manifest, error) {
	b, err := a.Builders.Get(in.Plan.Dataset)
	if err != nil {
		return catalog.Manifest{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInvalidInput, err)
	}
	if m, err := catalog.ReadManifest(ctx, a.Store, in.Plan.Dataset, in.Plan.Version); err == nil {
		return m, nil
	}
	m := catalog.Manifest{
		Name: in.Plan.Dataset, Version: in.Plan.Version, Schema: in.Plan.Schema, BuilderVersion: in.Plan.BuilderVersion,
		Params: in.Plan.Params, Sources: in.Plan.Sources, Files: in.Files, CreatedAt: in.CreatedAt.UTC(),
	}
	for _, f := range in.Files {
		m.Rows += f.Rows
	}
	if err := catalog.Verify(ctx, a.Store, m); err != nil {
		return catalog.Manifest{}, err
	}
	if err := catalog.Publish(ctx, a.Store, m, b.Card(m)); err != nil {
		return catalog.Manifest{}, err
	}
	return m, nil
}

// classify turns bad input into a non-retryable failure; anything else is
// retried by Temporal.
func classify(err error) error {
	var ie *datasets.InputError
	if errors.As(err, &ie) {
		return temporal.NewNonRetryableApplicationError(ie.Error(), ErrTypeInvalidInput, err)
	}
	return err
}

// heartbeatEvery heartbeats until stop is called, for steps that cannot
// report progress themselves.
func heartbeatEvery(ctx context.Context, d time.Duration) (stop func()) {
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			case <-done:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return func() { close(done) }
}
