package activities

import (
	"bufio"
	"context"
	"encoding/json"
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
	"golang.org/x/sync/errgroup"

	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/gateway"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
)

// Eval are the evaluation activities.
type Eval struct {
	Store   blob.Store
	Gateway *gateway.Gateway
	Tasks   *scorers.Registry
	// SampleConcurrency bounds samples in flight per shard [16]; the
	// gateway's per-provider limiter bounds what reaches each endpoint.
	SampleConcurrency int
	// ChunkSize is samples per chunk within a shard [100]: the unit of
	// progress and the finest checkpoint.
	ChunkSize int
	// CheckpointInterval is the least time between two checkpoints of a
	// shard's results [5s]: a chunk ending this long after the last
	// checkpoint writes the chunks since then as one file. A shard that
	// finishes sooner writes no checkpoint at all, only its result file;
	// the model answers themselves are saved sooner, in the shard's cache
	// segment, so a crash re-pays at most about a second of them.
	CheckpointInterval time.Duration
	// SampleAttempts bounds attempts of a sample on infrastructure errors
	// before it is reported as failed for infrastructure reasons [3].
	SampleAttempts int
	// CacheTTL ignores cached answers older than this [0: forever].
	CacheTTL time.Duration

	plans sync.Map // run id -> runs.Plan
}

// PlanRunInput asks for a run to be planned.
type PlanRunInput struct {
	Request   runs.Request
	CreatedAt time.Time
}

// PlanRunResult is the small summary a workflow keeps of its plan.
type PlanRunResult struct {
	RunID    string
	Dataset  string
	Model    string
	Samples  int64
	Shards   int
	Finished bool // summary.json exists: the run is done
	// ScoreQueue is the task queue of a deferred scorer (e.g. "sandbox"),
	// empty when samples are scored as they are generated.
	ScoreQueue string
}

// PlanRun pins the dataset version, checks it against its manifest, and
// writes runs/<run-id>/plan.json (once: a plan is never rewritten).
func (a *Eval) PlanRun(ctx context.Context, in PlanRunInput) (_ PlanRunResult, err error) {
	defer func() { err = classify(err) }()
	defer heartbeatEvery(ctx, 5*time.Second, nil)() // writing references can take minutes
	req := in.Request
	name, _, _ := strings.Cut(req.Dataset, "@")
	task, err := a.Tasks.Get(name)
	if err != nil {
		return PlanRunResult{}, invalid(err)
	}
	if _, _, err := gateway.ParseModel(req.Model); err != nil {
		return PlanRunResult{}, invalid(err)
	}
	m, err := catalog.Resolve(ctx, a.Store, req.Dataset)
	if err != nil {
		if errors.Is(err, catalog.ErrNoDataset) {
			return PlanRunResult{}, invalid(err)
		}
		return PlanRunResult{}, err
	}
	if err := catalog.VerifyFiles(ctx, a.Store, m); err != nil {
		if errors.Is(err, catalog.ErrMismatch) {
			return PlanRunResult{}, invalid(fmt.Errorf("dataset %s@%s does not match its manifest: %w", m.Name, m.Version, err))
		}
		return PlanRunResult{}, err
	}
	plan := NewPlan(req, m, task, in.CreatedAt)
	b, _ := json.MarshalIndent(plan, "", "  ")
	if err := a.Store.PutIfAbsent(ctx, runs.PlanKey(plan.RunID), strings.NewReader(string(b)+"\n"), int64(len(b)+1)); err != nil && !errors.Is(err, blob.ErrExists) {
		return PlanRunResult{}, err
	}
	if refs, ok := task.(scorers.ReferenceProvider); ok && strings.HasPrefix(req.Model, "baseline/") {
		if err := a.writeReferences(ctx, catalog.Checked(a.Store, m), task, refs, plan); err != nil {
			return PlanRunResult{}, err
		}
	}
	done, err := blob.Exists(ctx, a.Store, runs.SummaryKey(plan.RunID))
	if err != nil {
		return PlanRunResult{}, err
	}
	res := PlanRunResult{RunID: plan.RunID, Dataset: plan.Dataset, Model: plan.Model, Samples: plan.Samples, Shards: plan.Shards, Finished: done}
	if ds, ok := task.(scorers.DeferredScorer); ok {
		res.ScoreQueue = ds.ScoreQueue()
	}
	return res, nil
}

// ReferencesKey is where a dataset version's reference answers are kept for
// the baseline model server (JSON lines of scorers.Reference).
func ReferencesKey(dataset, version, taskVersion string) string {
	return fmt.Sprintf("references/%s/%s/task-%s.jsonl", dataset, version, taskVersion)
}

// writeReferences writes the references of every sample of plan, reading
// the samples from dataset (the store with the version's manifest
// attached, catalog.Checked).
func (a *Eval) writeReferences(ctx context.Context, dataset blob.Store, task scorers.Task, refs scorers.ReferenceProvider, plan runs.Plan) error {
	key := ReferencesKey(plan.Dataset, plan.DatasetVersion, plan.TaskVersion)
	if ok, err := blob.Exists(ctx, a.Store, key); err != nil || ok {
		return err
	}
	// Stream the references into a multipart upload: a million samples'
	// references never sit in memory at once.
	pr, pw := io.Pipe()
	go func() {
		bw := bufio.NewWriterSize(pw, 1<<20)
		enc := json.NewEncoder(bw)
		var err error
		for _, f := range plan.Files {
			err = task.ReadSamples(ctx, dataset, f.Key, 0, f.Rows, func(s scorers.Sample) error {
				for _, r := range scorers.ReferencesOf(refs, s) {
					if err := enc.Encode(r); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				break
			}
		}
		if err == nil {
			err = bw.Flush()
		}
		pw.CloseWithError(err)
	}()
	err := a.Store.Put(ctx, key, pr, -1)
	pr.CloseWithError(err) // unblock the producer if the upload failed
	return err
}

func (a *Eval) plan(ctx context.Context, run string) (runs.Plan, error) {
	if p, ok := a.plans.Load(run); ok {
		return p.(runs.Plan), nil
	}
	var p runs.Plan
	if err := blob.GetJSON(ctx, a.Store, runs.PlanKey(run), &p); err != nil {
		return p, fmt.Errorf("run %s: %w", run, err)
	}
	a.plans.Store(run, p)
	return p, nil
}

// shard loads what a shard activity needs: the run's plan, its task and the
// shard's rows. A plan naming an unknown task or shard is invalid input.
func (a *Eval) shard(ctx context.Context, run string, shard int) (runs.Plan, scorers.Task, runs.Range, error) {
	plan, err := a.plan(ctx, run)
	if err != nil {
		return plan, nil, runs.Range{}, err
	}
	task, err := a.Tasks.Get(plan.Dataset)
	if err != nil {
		return plan, nil, runs.Range{}, invalid(err)
	}
	rng, err := plan.Shard(shard)
	if err != nil {
		return plan, nil, runs.Range{}, invalid(err)
	}
	return plan, task, rng, nil
}

// dataset returns the store to read plan's dataset version from: a.Store
// with the version's manifest attached (catalog.Checked), so a part that is
// not what the manifest says fails the read, naming it.
func (a *Eval) dataset(ctx context.Context, plan runs.Plan) (blob.Store, error) {
	m, err := catalog.ReadManifest(ctx, a.Store, plan.Dataset, plan.DatasetVersion)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", plan.RunID, err)
	}
	return catalog.Checked(a.Store, m), nil
}

// RunShardInput names one shard of a run.
type RunShardInput struct {
	RunID       string
	Shard       int
	RerunErrors bool
}

// ShardResult summarises a finished shard.
type ShardResult struct {
	Shard       int
	Samples     int64
	ModelFailed int64
	InfraFailed int64
	Calls       int64
	CacheHits   int64
	CostUSD     float64
}

func summarize(shard int, rows []schemas.ResultRow) ShardResult {
	r := ShardResult{Shard: shard, Samples: int64(len(rows))}
	for _, row := range rows {
		switch {
		case row.ErrorClass == "":
		case !schemas.Scored(row.ErrorClass):
			r.InfraFailed++
		default:
			r.ModelFailed++
		}
		r.Calls += int64(row.Calls)
		r.CacheHits += int64(row.CacheHits)
		r.CostUSD += row.CostUSD
	}
	return r
}

// RunShard evaluates one shard: every sample through the task (generate,
// then score), checkpointing chunks of results and heartbeating how many
// chunks are safe, so a retry resumes after the last checkpoint. The shard's
// results go to one file at a deterministic key, so a retried or duplicated
// activity yields exactly one row per sample.
func (a *Eval) RunShard(ctx context.Context, in RunShardInput) (_ ShardResult, err error) {
	defer func() { err = classify(err) }()
	plan, task, rng, err := a.shard(ctx, in.RunID, in.Shard)
	if err != nil {
		return ShardResult{}, err
	}
	key := runs.ShardKey(plan.RunID, in.Shard)
	var previous []schemas.ResultRow
	if ok, err := blob.Exists(ctx, a.Store, key); err != nil {
		return ShardResult{}, err
	} else if ok {
		previous, err = pq.ReadAll[schemas.ResultRow](ctx, a.Store, key)
		if err != nil {
			return ShardResult{}, err
		}
		res := summarize(in.Shard, previous)
		if !in.RerunErrors || res.InfraFailed == 0 {
			return res, nil
		}
	}

	seg, err := gateway.OpenSegment(ctx, a.Store, runs.CachePrefix(plan.RunID, in.Shard), gateway.SegmentOptions{TTL: a.CacheTTL})
	if err != nil {
		return ShardResult{}, err
	}
	env := scorers.Env{Models: a.Gateway.WithCache(seg), Model: plan.Model, ModelKind: a.Gateway.Kind(plan.Model),
		Params: plan.Params, Seed: plan.Seed, Judges: plan.Judges, NoCache: plan.NoCache}

	samples := make([]scorers.Sample, 0, rng.Rows)
	dataset, err := a.dataset(ctx, plan)
	if err != nil {
		return ShardResult{}, err
	}
	err = task.ReadSamples(ctx, dataset, plan.Files[rng.File].Key, rng.Start, rng.Rows, func(s scorers.Sample) error {
		samples = append(samples, s)
		return nil
	})
	if err != nil {
		return ShardResult{}, fmt.Errorf("run %s shard %d: read %s rows [%d, %d): %w", plan.RunID, in.Shard, plan.Files[rng.File].Key, rng.Start, rng.Start+rng.Rows, err)
	}
	if int64(len(samples)) != rng.Rows {
		return ShardResult{}, invalid(fmt.Errorf("run %s shard %d: %s gave %d samples for rows [%d, %d)", plan.RunID, in.Shard, plan.Files[rng.File].Key, len(samples), rng.Start, rng.Start+rng.Rows))
	}

	rows := make([]schemas.ResultRow, len(samples))
	todo := make([]bool, len(samples))
	if previous != nil { // --rerun-errors: keep what succeeded, redo infrastructure failures
		for i, r := range previous {
			rows[i] = r
			todo[i] = r.ErrorClass == schemas.ErrorClassInfrastructure
		}
	} else {
		for i := range todo {
			todo[i] = true
		}
	}

	chunk := a.chunkSize()
	nChunks := (len(samples) + chunk - 1) / chunk
	var prog shardProgress
	if previous == nil && activity.HasHeartbeatDetails(ctx) {
		if err := activity.GetHeartbeatDetails(ctx, &prog); err != nil || !prog.valid(nChunks) {
			prog = shardProgress{} // an older or foreign format: redo the shard from its cache
		}
	}
	for i, start := range prog.Starts { // resume: load the checkpoints
		end := prog.Done
		if i+1 < len(prog.Starts) {
			end = prog.Starts[i+1]
		}
		lo, hi := start*chunk, min(end*chunk, len(samples))
		done, err := pq.ReadAll[schemas.ResultRow](ctx, a.Store, runs.ChunkKey(plan.RunID, in.Shard, start))
		if err == nil && len(done) != hi-lo {
			err = fmt.Errorf("%d rows, want %d", len(done), hi-lo)
		}
		if err != nil {
			return ShardResult{}, fmt.Errorf("run %s shard %d: resume from checkpoint %s: %w", plan.RunID, in.Shard, runs.ChunkKey(plan.RunID, in.Shard, start), err)
		}
		copy(rows[lo:hi], done)
	}
	// Heartbeat on a ticker too, carrying the progress, so a slow chunk (a
	// slow model) does not look like a dead worker.
	var progMu sync.Mutex
	snapshot := func() any {
		progMu.Lock()
		defer progMu.Unlock()
		return prog.clone()
	}
	stopBeat := heartbeatEvery(ctx, 2*time.Second, snapshot)
	defer stopBeat()
	lastCheckpoint := time.Now()
	for c := prog.Done; c < nChunks; c++ {
		lo, hi := c*chunk, min((c+1)*chunk, len(samples))
		var idx []int
		for i := lo; i < hi; i++ {
			if todo[i] {
				idx = append(idx, i)
			}
		}
		err := eachIndex(ctx, idx, a.sampleConcurrency(), func(gctx context.Context, i int) error {
			row, err := a.evaluate(gctx, task, env, samples[i])
			if err != nil {
				return err
			}
			row.RunID, row.Shard, row.SampleIndex = plan.RunID, int32(in.Shard), rng.First+int64(i)
			rows[i] = row
			return nil
		})
		if err != nil {
			_ = seg.Flush(context.WithoutCancel(ctx))
			return ShardResult{}, err
		}
		if previous != nil || c+1 == nChunks || time.Since(lastCheckpoint) < a.checkpointInterval() {
			continue
		}
		// Checkpoint the chunks since the last checkpoint as one file.
		if err := seg.Flush(ctx); err != nil {
			return ShardResult{}, err
		}
		from := prog.Done
		if err := writeRows(ctx, a.Store, runs.ChunkKey(plan.RunID, in.Shard, from), rows[from*chunk:hi]); err != nil {
			return ShardResult{}, err
		}
		progMu.Lock()
		prog.Starts = append(prog.Starts, from)
		prog.Done = c + 1
		progMu.Unlock()
		activity.RecordHeartbeat(ctx, snapshot())
		lastCheckpoint = time.Now()
	}
	if err := seg.Flush(ctx); err != nil {
		return ShardResult{}, err
	}
	if err := writeRows(ctx, a.Store, key, rows); err != nil {
		return ShardResult{}, err
	}
	for _, start := range prog.Starts {
		_ = a.Store.Delete(ctx, runs.ChunkKey(plan.RunID, in.Shard, start))
	}
	return summarize(in.Shard, rows), nil
}

// eachIndex calls fn for every index in idx, from at most conc goroutines
// that each take the next index until none is left; the first error
// cancels the others' context and is returned. Long-lived workers, not a
// goroutine per sample: a sample's JSON decoding grows its goroutine's
// stack to tens of KB, and a fresh goroutine per sample paid that growth
// (runtime.copystack) every time, about 15% of the worker's CPU against a
// fast endpoint.
func eachIndex(ctx context.Context, idx []int, conc int, fn func(context.Context, int) error) error {
	g, gctx := errgroup.WithContext(ctx)
	var next atomic.Int64
	for range min(conc, len(idx)) {
		g.Go(func() error {
			for {
				k := int(next.Add(1) - 1)
				if k >= len(idx) || gctx.Err() != nil {
					return nil
				}
				if err := fn(gctx, idx[k]); err != nil {
					return err
				}
			}
		})
	}
	return g.Wait()
}

// shardProgress is RunShard's heartbeat: the first Done chunks of the shard
// are in checkpoint files, one per entry of Starts (the file starting at
// chunk Starts[i] runs to Starts[i+1], the last one to Done).
type shardProgress struct {
	Done   int   `json:"done"`
	Starts []int `json:"starts,omitempty"`
}

func (p shardProgress) clone() shardProgress {
	p.Starts = slices.Clone(p.Starts)
	return p
}

// valid reports whether p describes checkpoints of a shard of n chunks.
func (p shardProgress) valid(n int) bool {
	if p.Done < 0 || p.Done > n || (p.Done > 0) != (len(p.Starts) > 0) {
		return false
	}
	for i, s := range p.Starts {
		if s < 0 || s >= p.Done || (i == 0 && s != 0) || (i > 0 && s <= p.Starts[i-1]) {
			return false
		}
	}
	return true
}

func (a *Eval) checkpointInterval() time.Duration {
	if a.CheckpointInterval > 0 {
		return a.CheckpointInterval
	}
	return 5 * time.Second
}

func (a *Eval) chunkSize() int {
	if a.ChunkSize > 0 {
		return a.ChunkSize
	}
	return 100
}

func (a *Eval) sampleConcurrency() int {
	if a.SampleConcurrency > 0 {
		return a.SampleConcurrency
	}
	return 16
}

// evaluate runs one sample. It returns an error only when the activity
// itself must stop (cancellation); every other outcome is a row.
func (a *Eval) evaluate(ctx context.Context, task scorers.Task, env scorers.Env, s scorers.Sample) (schemas.ResultRow, error) {
	row := schemas.ResultRow{SampleID: s.ID, Category: s.Category, Model: env.Model}
	attempts := max(a.SampleAttempts, 1)
	if a.SampleAttempts == 0 {
		attempts = 3
	}
	var lastErr error
	for attempt := 1; attempt <= attempts; attempt++ {
		out, err := task.Evaluate(ctx, env, s)
		if err == nil {
			fillRow(&row, out)
			return row, nil
		}
		if ctx.Err() != nil {
			return row, ctx.Err()
		}
		if errors.Is(err, scorers.ErrBadSample) {
			row.ErrorClass = schemas.ErrorClassBadSample
			row.ErrorMessage = truncate(err.Error(), 500)
			return row, nil
		}
		if gateway.IsModelFailure(err) {
			// The request itself failed for this sample (context too long,
			// bad request): a scored model failure with every metric 0.
			row.Metrics = map[string]float64{}
			for _, m := range task.Metrics() {
				row.Metrics[m] = 0
			}
			row.ErrorClass = gateway.ClassOf(err).String()
			row.ErrorMessage = truncate(err.Error(), 500)
			return row, nil
		}
		if c := gateway.ClassOf(err); !c.Retryable() && c != gateway.ClassCanceled {
			// Auth, quota, unknown model: no sample can succeed; stop the run.
			return row, gateway.ToTemporal(err)
		}
		lastErr = err
		wait := time.Duration(attempt) * time.Second
		var ge *gateway.Error
		if errors.As(err, &ge) && ge.RetryAfter > wait {
			wait = ge.RetryAfter
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return row, ctx.Err()
		}
	}
	row.ErrorClass = schemas.ErrorClassInfrastructure
	row.ErrorMessage = truncate(lastErr.Error(), 500)
	return row, nil
}

// needsScore reports whether a row was generated but not yet scored by a
// deferred scorer (infrastructure failures and model failures are final).
func needsScore(r schemas.ResultRow) bool { return r.ErrorClass == "" && len(r.Metrics) == 0 }

// ScoreShardInput names a generated shard to score.
type ScoreShardInput struct {
	RunID string
	Shard int
}

// ScoreShard runs a deferred scorer (e.g. sandboxed code checks) over a
// generated shard, on the scorer's own task queue, and rewrites the shard
// file with the metrics. Rows the file already holds scored are kept, so a
// rerun only does what is left. The file is rewritten once, at the end: a
// retry after a crash scores the shard's rows again (sandbox runs only; the
// model answers are in the file). Heartbeats carry the rows scored.
func (a *Eval) ScoreShard(ctx context.Context, in ScoreShardInput) (ShardResult, error) {
	plan, task, rng, err := a.shard(ctx, in.RunID, in.Shard)
	if err != nil {
		return ShardResult{}, err
	}
	ds, ok := task.(scorers.DeferredScorer)
	if !ok {
		return ShardResult{}, invalid(fmt.Errorf("task %s has no deferred scorer", plan.Dataset))
	}
	key := runs.ShardKey(plan.RunID, in.Shard)
	rows, err := pq.ReadAll[schemas.ResultRow](ctx, a.Store, key)
	if err != nil {
		return ShardResult{}, classify(err)
	}
	todo := 0
	for _, r := range rows {
		if needsScore(r) {
			todo++
		}
	}
	if todo == 0 {
		return summarize(in.Shard, rows), nil
	}
	samples := make([]scorers.Sample, 0, rng.Rows)
	dataset, err := a.dataset(ctx, plan)
	if err != nil {
		return ShardResult{}, classify(err)
	}
	if err := task.ReadSamples(ctx, dataset, plan.Files[rng.File].Key, rng.Start, rng.Rows, func(s scorers.Sample) error {
		samples = append(samples, s)
		return nil
	}); err != nil {
		return ShardResult{}, classify(err)
	}
	if len(samples) != len(rows) {
		return ShardResult{}, invalid(fmt.Errorf("run %s shard %d: %d results for %d samples", plan.RunID, in.Shard, len(rows), len(samples)))
	}
	var idx []int
	for i := range rows {
		if needsScore(rows[i]) {
			idx = append(idx, i)
		}
	}
	var mu sync.Mutex
	done := 0
	err = eachIndex(ctx, idx, a.sampleConcurrency(), func(gctx context.Context, i int) error {
		out := outcomeOf(rows[i])
		var scored scorers.Outcome
		var serr error
		for attempt := 1; attempt <= max(a.SampleAttempts, 3); attempt++ {
			scored, serr = ds.Score(gctx, samples[i], out)
			if serr == nil || gctx.Err() != nil {
				break
			}
		}
		if gctx.Err() != nil {
			return gctx.Err()
		}
		mu.Lock()
		defer mu.Unlock()
		if serr != nil {
			rows[i].ErrorClass = schemas.ErrorClassInfrastructure
			rows[i].ErrorMessage = truncate(serr.Error(), 500)
		} else {
			rows[i].Metrics = scored.Metrics
			if scored.ModelError != "" {
				rows[i].ErrorClass, rows[i].ErrorMessage = scored.ModelError, truncate(scored.ModelMsg, 500)
			}
			if scored.Details != nil {
				if b, err := json.Marshal(scored.Details); err == nil {
					rows[i].DetailsJSON = string(b)
				}
			}
		}
		done++
		activity.RecordHeartbeat(gctx, done)
		return nil
	})
	if err != nil {
		return ShardResult{}, err
	}
	if err := writeRows(ctx, a.Store, key, rows); err != nil {
		return ShardResult{}, err
	}
	return summarize(in.Shard, rows), nil
}

// outcomeOf rebuilds the generation outcome stored in a row.
func outcomeOf(r schemas.ResultRow) scorers.Outcome {
	var details any
	if r.DetailsJSON != "" {
		_ = json.Unmarshal([]byte(r.DetailsJSON), &details)
	}
	return scorers.Outcome{Response: r.Response, Details: details, PromptHash: r.PromptHash}
}

func fillRow(row *schemas.ResultRow, out scorers.Outcome) {
	row.Response = out.Response
	row.Metrics = out.Metrics
	row.ErrorClass = out.ModelError
	row.ErrorMessage = truncate(out.ModelMsg, 500)
	row.PromptHash = out.PromptHash
	row.Calls = int32(out.Usage.Calls)
	row.CacheHits = int32(out.Usage.CacheHits)
	row.Attempts = int32(out.Usage.Attempts)
	row.PromptTokens = out.Usage.PromptTokens
	row.CompletionTokens = out.Usage.CompletionTokens
	row.CostUSD = out.Usage.CostUSD
	row.LatencyMS = float64(out.Usage.Latency) / float64(time.Millisecond)
	if out.Details != nil {
		if b, err := json.Marshal(out.Details); err == nil {
			row.DetailsJSON = string(b)
		}
	}
}

func writeRows(ctx context.Context, store blob.Store, key string, rows []schemas.ResultRow) error {
	w := pq.NewWriter[schemas.ResultRow](ctx, store, key, pq.Options{PageBufferSize: 64 << 10})
	if err := w.Write(rows); err != nil {
		w.Abort()
		return err
	}
	_, err := w.Close()
	return err
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// AggregateInput names a run.
type AggregateInput struct {
	RunID string
	// Recompute rewrites an existing summary (after --rerun-errors).
	Recompute bool
}

// Aggregate reads every result shard and writes summary.json and
// summary.parquet. It returns the summary (a few KB).
func (a *Eval) Aggregate(ctx context.Context, in AggregateInput) (_ aggregate.Summary, err error) {
	defer func() { err = classify(err) }()
	defer heartbeatEvery(ctx, 5*time.Second, nil)() // a million samples take minutes to read
	plan, err := a.plan(ctx, in.RunID)
	if err != nil {
		return aggregate.Summary{}, err
	}
	if !in.Recompute {
		var s aggregate.Summary
		if err := blob.GetJSON(ctx, a.Store, runs.SummaryKey(plan.RunID), &s); err == nil {
			return s, nil
		}
	}
	seed := uint64(1)
	if plan.Seed != nil {
		seed = uint64(*plan.Seed) + 1
	}
	s, err := aggregate.Compute(ctx, a.Store, plan, aggregate.Options{Seed: seed})
	if errors.Is(err, aggregate.ErrBadShard) || errors.Is(err, blob.ErrNotFound) {
		// A shard that does not match the schema, or is missing after every
		// shard activity succeeded, will not fix itself: stop with its name.
		return s, invalid(err)
	}
	if err != nil {
		return s, err
	}
	s.Baseline = strings.HasPrefix(plan.Model, "baseline/")
	s.CreatedAt = plan.CreatedAt
	if err := writeSummaryTable(ctx, a.Store, runs.SummaryTableKey(plan.RunID), s.Rows()); err != nil {
		return s, err
	}
	if err := blob.PutJSON(ctx, a.Store, runs.SummaryKey(plan.RunID), s); err != nil {
		return s, err
	}
	return s, nil
}

func writeSummaryTable(ctx context.Context, store blob.Store, key string, rows []schemas.SummaryRow) error {
	w := pq.NewWriter[schemas.SummaryRow](ctx, store, key, pq.Options{})
	if err := w.Write(rows); err != nil {
		w.Abort()
		return err
	}
	_, err := w.Close()
	return err
}

func invalid(err error) error {
	return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInvalidInput, err)
}
