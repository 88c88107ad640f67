// Package activities holds benchline's Temporal activities: methods on
// structs of dependencies, thin over the packages that do the work.
package activities

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/gateway"
	"github.com/benchline/benchline/internal/limits"
	"github.com/benchline/benchline/internal/names"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/source"
)

// ErrTypeInvalidInput is the application error type of bad input (a file
// that does not parse, a row that breaks a rule); it is never retried.
const ErrTypeInvalidInput = "InvalidInput"

// ErrTypeAuth is the application error type of refused or missing
// credentials (the object store's 401, 403, bad signature or key id); it
// is never retried.
const ErrTypeAuth = "Auth"

// ErrTypeStoreFull is the application error type of a write the object
// store refused because it is full or over a quota (blob.ErrFull); it is
// never retried: space comes back when someone frees it, not within a
// workflow's minutes of retries, and every retry would write more.
const ErrTypeStoreFull = "StoreFull"

// Datasets are the dataset-building activities.
type Datasets struct {
	Store      blob.Store
	Benchmarks *benchmark.Registry
	OpenS3     source.S3Opener
	// Gateway is the model gateway for builders that call models
	// (datasets.Generator); nil on workers without one, where such builds
	// fail at their first unit.
	Gateway *gateway.Gateway
	// CacheTTL ignores cached answers older than this [0: forever].
	CacheTTL time.Duration
}

func (a *Datasets) env() datasets.Env { return datasets.Env{Store: a.Store, OpenS3: a.OpenS3} }

// PlanBuildInput asks to plan a build.
type PlanBuildInput struct {
	Dataset string
	Request datasets.Request
}

// PlanBuildResult is the validated plan and whether its version is already
// published (in which case nothing needs writing, and Rows and Files are
// the published version's).
type PlanBuildResult struct {
	Plan      datasets.Plan
	Published bool
	Rows      int64
	Files     int
	// Staged are the keys of the staged sources this PlanBuild wrote (not
	// those another build had staged first): the workflow deletes them if
	// the build fails later (DiscardStaged). Empty in older histories.
	Staged []string `json:",omitempty"`
	// Stats are the published version's counts (its manifest's, e.g.
	// what its build skipped) when Published: the plan's Stats count what
	// this source would have skipped, which may differ (a folder with
	// more unsupported files gives the same version). Nil in older
	// histories. Not omitempty: a version that counted nothing sends {},
	// which a nil (an older history) must stay distinct from.
	Stats map[string]int64
	// Latest is what a reused default build did to latest: what it named
	// before and after (see catalog.LatestMove). Zero for a variant, for
	// a new version (Publish moves latest then) and in older histories.
	Latest catalog.LatestMove `json:",omitzero"`
}

// PlanBuild stages and validates the sources and derives the version.
func (a *Datasets) PlanBuild(ctx context.Context, in PlanBuildInput) (PlanBuildResult, error) {
	b, err := a.Benchmarks.Builder(in.Dataset)
	if in.Request.Task {
		b, err = a.Benchmarks.DynamicBuilder(in.Dataset)
	}
	if err != nil {
		return PlanBuildResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInvalidInput, err)
	}
	if in.Request.As != "" {
		if err := catalog.ValidTag(in.Request.As); err != nil {
			return PlanBuildResult{}, invalid(fmt.Errorf("--as: %w", err))
		}
	}
	staged := &stagingLog{Store: a.Store}
	stop := heartbeatEvery(ctx, 5*time.Second, func() any { return staged.progress() })
	env := a.env()
	env.Store = staged
	plan, err := b.Plan(ctx, env, in.Request)
	stop()
	if err == nil {
		err = datasets.CheckNotEmpty(plan, in.Request.Source)
	}
	if err != nil {
		err = classify(datasets.LocalizeError(err, in.Request.Source))
		if !isNonRetryable(err) {
			return PlanBuildResult{}, err // a retry reuses what was staged
		}
		// The build is over: remove the staged sources this attempt wrote.
		return PlanBuildResult{}, staged.discard(ctx, err)
	}
	plan.Variant, plan.Tag = datasets.IsVariant(in.Request, plan), in.Request.As
	m, err := catalog.ReadManifest(ctx, a.Store, plan.Dataset, plan.Version)
	if errors.Is(err, catalog.ErrNoDataset) {
		return PlanBuildResult{Plan: plan, Staged: staged.written()}, nil
	}
	if err != nil {
		return PlanBuildResult{}, err
	}
	// Already published: the version stays as it is, but a tag given now
	// is set, and a default build moves latest to it (latest names the
	// last default build, even one that reuses an older version; the
	// move is returned for the build's output to say).
	mv, err := catalog.PointMove(ctx, a.Store, m, !plan.Variant, plan.Tag)
	if err != nil {
		return PlanBuildResult{}, err
	}
	stats := m.Stats
	if stats == nil {
		stats = map[string]int64{} // the version counted nothing: not the plan's counts
	}
	return PlanBuildResult{Plan: plan, Published: true, Rows: m.Rows, Files: len(m.Files), Stats: stats, Latest: mv}, nil
}

// stagingLog is a store that notes the staged sources (datasets.StagedKey)
// written through it, so a build that fails for good can delete them.
// Sources some other build staged first are not written again, so they are
// not noted and never deleted.
type stagingLog struct {
	blob.Store
	mu   sync.Mutex
	keys []string
	// tried are the staged keys a Put began, written or not: their
	// unfinished uploads are aborted when the build fails for good.
	tried []string
	// seen and bytes count the source files staged (or found staged) so
	// far and the bytes written: PlanBuild's heartbeat progress.
	seen, bytes atomic.Int64
}

// PlanProgress is PlanBuild's heartbeat detail: how far staging has got.
type PlanProgress struct {
	Sources int64 // source files staged or found already staged
	Bytes   int64 // bytes staged by this attempt
}

func (s *stagingLog) progress() PlanProgress {
	return PlanProgress{Sources: s.seen.Load(), Bytes: s.bytes.Load()}
}

// Head counts the staged sources looked up (every one Stage stages).
func (s *stagingLog) Head(ctx context.Context, key string) (blob.Info, error) {
	if strings.HasPrefix(key, datasets.StagedKey("")) {
		s.seen.Add(1)
	}
	return s.Store.Head(ctx, key)
}

func (s *stagingLog) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	if strings.HasPrefix(key, datasets.StagedKey("")) {
		s.mu.Lock()
		s.tried = append(s.tried, key)
		s.mu.Unlock()
	}
	err := s.Store.Put(ctx, key, r, size)
	if err == nil && strings.HasPrefix(key, datasets.StagedKey("")) {
		s.bytes.Add(max(size, 0))
		s.mu.Lock()
		s.keys = append(s.keys, key)
		s.mu.Unlock()
	}
	return err
}

// written returns the keys of the staged sources written through s.
func (s *stagingLog) written() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.keys)
}

// DiscardStagedInput lists staged sources to delete and, when Dataset is
// set, the unpublished version whose written parts to delete.
type DiscardStagedInput struct {
	Keys []string
	// Dataset and Version name the version the failed build was writing,
	// Parts its plan's part count (empty in older histories).
	Dataset string `json:",omitempty"`
	Version string `json:",omitempty"`
	Parts   int    `json:",omitempty"`
}

// DiscardStaged deletes the staged sources a build wrote (PlanBuildResult.
// Staged) after the build failed or was cancelled past PlanBuild, so a
// failed build leaves nothing under staging/sources/. It deletes only keys
// under staging/sources/; deleting what is gone is not an error, so a retry
// is harmless. With in.Dataset set, it also deletes the parts the build's
// WritePart activities wrote under the version's data/ and aborts their
// unfinished uploads, unless the version is published (its manifest
// exists): a build that fails at its fifth part (a full store) leaves no
// orphaned parts. It returns how many keys it deleted or was given.
func (a *Datasets) DiscardStaged(ctx context.Context, in DiscardStagedInput) (int, error) {
	for _, k := range in.Keys {
		if !strings.HasPrefix(k, datasets.StagedKey("")) {
			return 0, invalid(fmt.Errorf("discard staged: %s is not a staged source", k))
		}
		if err := a.Store.Delete(ctx, k); err != nil && !errors.Is(err, blob.ErrNotFound) {
			return 0, err
		}
		if _, err := blob.AbortUploads(ctx, a.Store, k); err != nil {
			return 0, err
		}
	}
	if in.Dataset == "" {
		return len(in.Keys), nil
	}
	n, err := a.discardParts(ctx, in.Dataset, in.Version, in.Parts)
	return len(in.Keys) + n, err
}

// discardParts deletes the parts of an unpublished version (those listed
// under its data/, and the unfinished uploads of its parts 0..parts-1) and
// returns how many objects it deleted. A published version is left alone.
func (a *Datasets) discardParts(ctx context.Context, dataset, version string, parts int) (int, error) {
	if _, _, err := names.ParseRef(dataset + "@" + version); err != nil || version == "" {
		return 0, invalid(fmt.Errorf("discard parts of %s@%s: %w", dataset, version, cmp.Or(err, names.ErrInvalid)))
	}
	if ok, err := blob.Exists(ctx, a.Store, catalog.ManifestKey(dataset, version)); err != nil || ok {
		return 0, err
	}
	prefix := catalog.Dir(dataset, version) + "data/"
	infos, err := a.Store.List(ctx, prefix)
	if err != nil {
		return 0, err
	}
	for _, info := range infos {
		if err := a.Store.Delete(ctx, info.Key); err != nil && !errors.Is(err, blob.ErrNotFound) {
			return 0, err
		}
	}
	// Uploads left by a killed worker (MinIO matches whole keys only).
	for i := range parts {
		if _, err := blob.AbortUploads(ctx, a.Store, catalog.PartKey(dataset, version, i)); err != nil {
			return 0, err
		}
	}
	return len(infos), nil
}

// discard deletes the noted staged sources and returns cause; a deletion
// that fails is logged, not returned: the build's own error is the one
// the user needs.
func (s *stagingLog) discard(ctx context.Context, cause error) error {
	s.mu.Lock()
	keys, tried := s.keys, s.tried
	s.mu.Unlock()
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	for _, k := range keys {
		if err := s.Store.Delete(dctx, k); err != nil && activity.IsActivity(ctx) {
			activity.GetLogger(ctx).Warn("discard staged source", "key", k, "error", err)
		}
	}
	// Uploads of these keys left unfinished (by an attempt whose worker
	// was killed mid-upload) would hold their parts for ever.
	for _, k := range tried {
		if _, err := blob.AbortUploads(dctx, s.Store, k); err != nil && activity.IsActivity(ctx) {
			activity.GetLogger(ctx).Warn("abort unfinished uploads", "key", k, "error", err)
		}
	}
	return cause
}

// isNonRetryable reports whether err is an application error Temporal
// does not retry.
func isNonRetryable(err error) bool {
	var ae *temporal.ApplicationError
	return errors.As(err, &ae) && ae.NonRetryable()
}

// GenerateInput is one generation unit of a plan. Plan.Generate may be left
// out (the workflow sends only Unit, so a plan of many units does not
// travel to every unit's activity).
type GenerateInput struct {
	Plan datasets.Plan
	Unit datasets.Part
}

// Generate runs one unit of a Generator's model calls (see
// datasets.Generator). A unit already done returns its saved summary. The
// builder calls models through the gateway bound to the unit's cache
// segment, which flushes every 256 answers or 1 s and at the end (even on
// failure), so a retried unit pays again only for calls in flight or not
// flushed when the last attempt died. The activity heartbeats the calls
// done every 2 s.
//
// Errors: bad input and a worker without a gateway fail the build at once;
// so do gateway errors no retry can fix (auth, quota, unknown model), with
// the builder's message naming the item and model. Other gateway errors,
// after the gateway's own retries, are returned for Temporal to retry the
// unit (the workflow bounds the attempts). Generate must be called in an
// activity context.
func (a *Datasets) Generate(ctx context.Context, in GenerateInput) (datasets.Generated, error) {
	b, err := a.Benchmarks.BuilderOf(in.Plan.Dataset, in.Plan.Schema)
	if err != nil {
		return datasets.Generated{}, invalid(err)
	}
	g, ok := b.(datasets.Generator)
	if !ok {
		return datasets.Generated{}, invalid(fmt.Errorf("activities: builder %s calls no models", in.Plan.Dataset))
	}
	u := in.Unit
	if u.Label == "" {
		return datasets.Generated{}, invalid(fmt.Errorf("activities: unit %d of %s has no label", u.Index, in.Plan.Dataset))
	}
	if done, ok, err := datasets.LoadGenerated(ctx, a.Store, in.Plan.Dataset, u); err != nil || ok {
		return done, err
	}
	if a.Gateway == nil {
		return datasets.Generated{}, invalid(fmt.Errorf("activities: %s samples from models, and this worker has no model gateway", in.Plan.Dataset))
	}
	seg, err := gateway.OpenSegment(ctx, a.Store, datasets.GeneratedCachePrefix(in.Plan.Dataset, u), gateway.SegmentOptions{TTL: a.CacheTTL})
	if err != nil {
		return datasets.Generated{}, err
	}
	env := a.env()
	env.Models = a.Gateway.WithCache(seg)
	var done atomic.Int64
	stop := heartbeatEvery(ctx, 2*time.Second, func() any { return done.Load() })
	res, err := g.Generate(ctx, env, in.Plan, u, func(n int64) {
		done.Store(n)
		activity.RecordHeartbeat(ctx, n) // the SDK throttles what it sends
	})
	stop()
	if ferr := seg.Flush(context.WithoutCancel(ctx)); err == nil && ferr != nil {
		return datasets.Generated{}, ferr
	}
	if err != nil {
		return datasets.Generated{}, classifyModel(err)
	}
	return res, nil
}

// FinishPlanInput is a plan whose generation units are all done.
type FinishPlanInput struct {
	Plan datasets.Plan
}

// FinishPlan has a Generator plan the parts from its generated units. The
// plan it returns has no units left (Generate is nil): the part and publish
// activities do not need them.
func (a *Datasets) FinishPlan(ctx context.Context, in FinishPlanInput) (datasets.Plan, error) {
	b, err := a.Benchmarks.BuilderOf(in.Plan.Dataset, in.Plan.Schema)
	if err != nil {
		return datasets.Plan{}, invalid(err)
	}
	g, ok := b.(datasets.Generator)
	if !ok {
		return datasets.Plan{}, invalid(fmt.Errorf("activities: builder %s calls no models", in.Plan.Dataset))
	}
	stop := heartbeatEvery(ctx, 5*time.Second, nil)
	plan, err := g.Finish(ctx, a.env(), in.Plan)
	stop()
	if err != nil {
		return datasets.Plan{}, classify(err)
	}
	if plan.Version != in.Plan.Version {
		err := fmt.Errorf("activities: %s: Finish changed the version from %s to %s", in.Plan.Dataset, in.Plan.Version, plan.Version)
		return datasets.Plan{}, invalid(err)
	}
	plan.Generate = nil
	if err := datasets.CheckNotEmpty(plan, "generated units of "+plan.Dataset+"@"+plan.Version); err != nil {
		return datasets.Plan{}, classify(err)
	}
	return plan, nil
}

// WritePartInput names one part of a plan.
type WritePartInput struct {
	Plan datasets.Plan
	Part int
}

// WritePart writes one part to its deterministic key. A retry rewrites the
// same object with the same bytes, so a killed worker leaves no duplicates.
func (a *Datasets) WritePart(ctx context.Context, in WritePartInput) (catalog.File, error) {
	b, err := a.Benchmarks.BuilderOf(in.Plan.Dataset, in.Plan.Schema)
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
	return catalog.File{Path: catalog.PartPath(p.Index), Rows: info.Rows, Bytes: info.Bytes, SHA256: info.SHA256, Label: p.Label}, nil
}

// PublishInput is a finished build to publish.
type PublishInput struct {
	Plan      datasets.Plan
	Files     []catalog.File
	CreatedAt time.Time
}

// PublishResult is the published version's manifest (its fields, as the
// activity returned before it said more) and what publishing it did to
// latest.
type PublishResult struct {
	catalog.Manifest
	// Latest is what latest named before and after (zero for a variant,
	// and in older histories).
	Latest catalog.LatestMove `json:"latest_move,omitzero"`
}

// Publish checks the written files and writes the card, the manifest and the
// latest pointer, in that order. A version already published is left as it
// is, but its pointers are written (an attempt that died between the
// manifest and latest left them unmoved).
func (a *Datasets) Publish(ctx context.Context, in PublishInput) (PublishResult, error) {
	b, err := a.Benchmarks.BuilderOf(in.Plan.Dataset, in.Plan.Schema)
	if err != nil {
		return PublishResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInvalidInput, err)
	}
	if m, err := catalog.ReadManifest(ctx, a.Store, in.Plan.Dataset, in.Plan.Version); err == nil {
		mv, err := catalog.PointMove(ctx, a.Store, m, !m.Variant, in.Plan.Tag)
		if err != nil {
			return PublishResult{}, err
		}
		return PublishResult{Manifest: m, Latest: mv}, nil
	}
	m := catalog.Manifest{
		Name: in.Plan.Dataset, Version: in.Plan.Version, Schema: in.Plan.Schema, BuilderVersion: in.Plan.BuilderVersion,
		Params: in.Plan.Params, Sources: in.Plan.Sources, Files: in.Files, CreatedAt: in.CreatedAt.UTC(),
		Stats: in.Plan.Stats, Variant: in.Plan.Variant,
	}
	for _, f := range in.Files {
		m.Rows += f.Rows
	}
	if err := catalog.Verify(ctx, a.Store, m); err != nil {
		return PublishResult{}, classify(err) // parts that do not match what was written will not on a retry
	}
	card := b.Card(m)
	if sc, ok := b.(datasets.StoreCarder); ok {
		if card, err = sc.CardFromStore(ctx, a.Store, m); err != nil {
			return PublishResult{}, err
		}
	}
	mv, err := catalog.PublishMove(ctx, a.Store, m, card, catalog.PublishOptions{Tag: in.Plan.Tag})
	if err != nil {
		return PublishResult{}, err
	}
	return PublishResult{Manifest: m, Latest: mv}, nil
}

// classify sorts a failure by its class (the failure table in
// docs/ARCHITECTURE.md). Failures a retry cannot fix end the workflow at
// once, as non-retryable InvalidInput errors whose message names the file,
// row, URL or name: bad input (*datasets.InputError), a source that is
// missing, refuses or is unusable (source.Permanent), data that does not
// match its manifest or is not the Parquet it should be (catalog.ErrMismatch,
// pq.ErrCorrupt), and an unknown dataset (catalog.ErrNoDataset). Anything
// else (S3 or a source URL down, a 5xx) is returned as it is, for Temporal's
// bounded retries. The object store's own permanent failures end at once
// too: refused credentials as an Auth error, a missing bucket or a request
// the store calls invalid (a key with "..") as InvalidInput (blob.Permanent).
// An error already typed for Temporal is left alone.
func classify(err error) error {
	var ae *temporal.ApplicationError
	var ie *datasets.InputError
	switch {
	case err == nil || errors.As(err, &ae):
		return err
	case errors.Is(err, blob.ErrDenied):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeAuth, err)
	case errors.Is(err, blob.ErrFull):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeStoreFull, err)
	case blob.Permanent(err), errors.Is(err, limits.ErrTooLarge), errors.Is(err, names.ErrInvalid):
		return invalid(err)
	case errors.As(err, &ie):
		return temporal.NewNonRetryableApplicationError(ie.Error(), ErrTypeInvalidInput, err)
	case source.Permanent(err), errors.Is(err, catalog.ErrMismatch), errors.Is(err, pq.ErrCorrupt),
		errors.Is(err, catalog.ErrNoDataset):
		return invalid(err)
	}
	return err
}

// classifyModel is classify for errors that may come from the gateway: a
// permanent gateway error (auth, quota, unknown model) fails the build
// with the builder's message (which names the item and the model), typed
// by its class; a retryable one is retried by Temporal, after the
// provider's Retry-After. The gateway error is not attached as a cause:
// only its scrubbed message enters workflow history.
func classifyModel(err error) error {
	var ge *gateway.Error
	if !errors.As(err, &ge) || ge.Class == gateway.ClassCanceled {
		return classify(err)
	}
	return gateway.ToTemporalWrapped(err)
}

// heartbeatEvery heartbeats until stop is called, for steps that cannot
// report progress themselves; details, when set, gives the heartbeat's
// detail (progress so far).
func heartbeatEvery(ctx context.Context, d time.Duration, details func() any) (stop func()) {
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
				if details != nil {
					activity.RecordHeartbeat(ctx, details())
				} else {
					activity.RecordHeartbeat(ctx)
				}
			case <-done:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return func() { close(done) }
}
