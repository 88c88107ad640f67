package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"golang.org/x/sync/errgroup"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/gateway"
	"github.com/benchline/benchline/internal/logattr"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
)

// Eval are the evaluation activities.
type Eval struct {
	Store   blob.Store
	Gateway *gateway.Gateway
	// Benchmarks are the benchmarks served, their tasks built with the
	// worker's deps (benchmark.Registry.WithDeps). PlanRun refuses a
	// version whose manifest names another table or schema version than
	// its builder writes (a task would read it wrongly, or as empty rows);
	// Aggregate computes the statistics of a benchmark that declares a
	// cluster function (benchmark.Benchmark.Cluster) by cluster.
	Benchmarks *benchmark.Registry
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
	// SampleAttempts is the total number of tries of one sample, both when
	// it is generated (RunShard) and when a deferred scorer scores it
	// (ScoreShard), on infrastructure errors; a sample still failing after
	// them is reported as an infrastructure failure [3; 1 means no retry].
	SampleAttempts int
	// CacheTTL ignores cached answers older than this [0: forever].
	CacheTTL time.Duration
	// Observer is told of every finished sample and shard attempt
	// (metrics); nil: none.
	Observer Observer
	// Logger receives a record per shard attempt; default discards. The
	// context of every record carries the run id and shard, and inside a
	// sample its id (see internal/logattr), so the gateway's records do too.
	Logger *slog.Logger

	plans     sync.Map      // run id -> runs.Plan
	retryBase time.Duration // retryUnit [1s]; tests shorten it

	filesOnce sync.Once
	files     *pq.VerifiedCache // dataset files shards have read and checked

	buildOnce sync.Once
	build     chan struct{} // acquireBuild's slots
}

// acquireBuild waits for one of the worker's batch-building slots: as
// many as it has cores (GOMAXPROCS, at least 2), since building a round's
// requests is CPU work, so more shards at once would only hold more
// requests and batch files in memory at once (activities wait for their
// batches with their samples only). The function returned gives the slot
// back; ctx ends the wait.
func (a *Eval) acquireBuild(ctx context.Context) (func(), error) {
	a.buildOnce.Do(func() { a.build = make(chan struct{}, max(2, runtime.GOMAXPROCS(0))) })
	select {
	case a.build <- struct{}{}:
		return sync.OnceFunc(func() { <-a.build }), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// datasetFileCache bounds the dataset files a worker keeps after a shard
// fetched them whole and checked them against their manifest: each is at
// most a quarter of it (16 MiB; a part of 100,000 synthetic rows is 7 MB),
// larger ones are read in ranges per shard.
const datasetFileCache = 64 << 20

// Observer receives what shard activities measure. Its methods must be
// cheap and safe for concurrent use (metrics.Metrics implements it).
type Observer interface {
	// SampleDone is called once per sample a shard attempt finishes, with
	// status "ok" or the row's error class.
	SampleDone(activity, status string)
	// ShardDone is called once per shard attempt, with its duration and
	// error (nil when it succeeded).
	ShardDone(activity string, d time.Duration, err error)
}

// sampleStatus is a finished row's status for Observer.SampleDone.
func sampleStatus(r schemas.ResultRow) string {
	if r.ErrorClass == "" {
		return "ok"
	}
	return r.ErrorClass
}

// shardStart labels ctx with the run and shard (for log records) and
// returns the function that ends the attempt: it logs and observes it.
func (a *Eval) shardStart(ctx context.Context, activity, run string, shard int) (context.Context, func(*ShardResult, *error)) {
	ctx = logattr.With(ctx, slog.String("run_id", run), slog.Int("shard", shard))
	t0 := time.Now()
	log := a.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log.DebugContext(ctx, "shard started", "activity", activity)
	return ctx, func(res *ShardResult, err *error) {
		d := time.Since(t0)
		if a.Observer != nil {
			a.Observer.ShardDone(activity, d, *err)
		}
		if *err != nil {
			log.WarnContext(ctx, "shard attempt failed", "activity", activity, "seconds", d.Seconds(), "error", *err)
			return
		}
		log.InfoContext(ctx, "shard done", "activity", activity, "seconds", d.Seconds(), "samples", res.Samples,
			"model_failed", res.ModelFailed, "infra_failed", res.InfraFailed, "calls", res.Calls, "cache_hits", res.CacheHits)
	}
}

// sampleCtx labels ctx with a sample's id for log records.
func sampleCtx(ctx context.Context, id string) context.Context {
	return logattr.With(ctx, slog.String("sample", id))
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
	// ShardSecondsHint is how long one of this plan's shards took, per
	// the last finished run of the model on the dataset (runs.Timing), or
	// 0: the workflow sizes its first groups of shards from it.
	ShardSecondsHint float64 `json:",omitempty"`
	// Batch says the plan is in batch mode; BatchBound is the longest a
	// shard's batch is waited for (window plus margin): the workflow gives
	// its shard activities that long.
	Batch      bool          `json:",omitempty"`
	BatchBound time.Duration `json:",omitempty"`
}

// PlanRun pins the dataset version, checks it against its manifest, and
// writes runs/<run-id>/plan.json (once: a plan is never rewritten).
func (a *Eval) PlanRun(ctx context.Context, in PlanRunInput) (_ PlanRunResult, err error) {
	defer func() { err = classify(err) }()
	defer heartbeatEvery(ctx, 5*time.Second, nil)() // writing references can take minutes
	req := in.Request
	name, _, _ := strings.Cut(req.Dataset, "@")
	if _, err := a.Benchmarks.Task(name); err != nil {
		if _, derr := a.Benchmarks.DynamicBuilder(name); derr != nil {
			return PlanRunResult{}, invalid(err) // neither built in nor a task file's name
		}
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
	task, err := a.Benchmarks.TaskOf(ctx, a.Store, m)
	if err != nil {
		return PlanRunResult{}, classifyTask(err)
	}
	if b, err := a.Benchmarks.BuilderOf(m.Name, m.Schema); err == nil && m.Schema != b.Schema() {
		return PlanRunResult{}, invalid(fmt.Errorf("dataset %s@%s: %w: the manifest says table %s v%d, the %s builder writes %s v%d",
			m.Name, m.Version, catalog.ErrMismatch, m.Schema.Name, m.Schema.Version, m.Name, b.Schema().Name, b.Schema().Version))
	}
	if err := catalog.VerifyFiles(ctx, a.Store, m); err != nil {
		if errors.Is(err, catalog.ErrMismatch) {
			return PlanRunResult{}, invalid(fmt.Errorf("dataset %s@%s does not match its manifest: %w", m.Name, m.Version, err))
		}
		return PlanRunResult{}, err
	}
	plan := NewPlan(req, m, task, in.CreatedAt)
	b, _ := json.MarshalIndent(plan, "", "  ")
	if err := a.Store.PutIfAbsent(ctx, runs.PlanKey(plan.RunID), strings.NewReader(string(b)+"\n"), int64(len(b)+1)); errors.Is(err, blob.ErrExists) {
		// The run was planned before: its mode is the plan's.
		var old runs.Plan
		if err := blob.GetJSON(ctx, a.Store, runs.PlanKey(plan.RunID), &old); err != nil {
			return PlanRunResult{}, err
		}
		plan.Batch = old.Batch
	} else if err != nil {
		return PlanRunResult{}, err
	}
	if refs, ok := task.(scorers.ReferenceProvider); ok && strings.HasPrefix(req.Model, "baseline/") {
		// Through the worker's cache: the shards that run here next read
		// the parts from memory.
		if err := a.writeReferences(ctx, catalog.Checked(pq.WithVerifiedCache(a.Store, a.fileCache()), m), task, refs, plan); err != nil {
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
	res.ShardSecondsHint = a.shardSecondsHint(ctx, plan)
	if plan.Batch {
		res.Batch, res.BatchBound = true, a.batchBound(plan)
	}
	return res, nil
}

// batchBound is the longest wait of plan's batches: the largest window
// plus margin of the providers of its model and judges with batches.
func (a *Eval) batchBound(plan runs.Plan) time.Duration {
	var d time.Duration
	for _, m := range append([]string{plan.Model}, slices.Collect(maps.Values(plan.Judges))...) {
		if c, ok := a.Gateway.BatchConfigOf(m); ok {
			d = max(d, c.Bound())
		}
	}
	return d
}

// shardSecondsHint returns how long one of plan's shards took on the last
// finished run of its model on its dataset, or 0 when none is recorded.
// The hint only sizes the first groups of shards, so a timing that cannot
// be read is no hint, not a failed plan.
func (a *Eval) shardSecondsHint(ctx context.Context, plan runs.Plan) float64 {
	var t runs.Timing
	if err := blob.GetJSON(ctx, a.Store, runs.TimingKey(plan.Dataset, plan.Model), &t); err != nil {
		if !errors.Is(err, blob.ErrNotFound) && a.Logger != nil {
			a.Logger.WarnContext(ctx, "plan: no shard time hint", "run_id", plan.RunID, "error", err)
		}
		return 0
	}
	if t.SecondsPerSample <= 0 || plan.Shards == 0 {
		return 0
	}
	return t.SecondsPerSample * float64(plan.Samples) / float64(plan.Shards)
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
	task, err := a.Benchmarks.TaskOfVersion(ctx, a.Store, plan.Dataset, plan.DatasetVersion)
	if err != nil {
		return plan, nil, runs.Range{}, classifyTask(err)
	}
	rng, err := plan.Shard(shard)
	if err != nil {
		return plan, nil, runs.Range{}, invalid(err)
	}
	return plan, task, rng, nil
}

// dataset returns the store to read plan's dataset version from: a.Store
// with the version's manifest attached (catalog.Checked), so a part that is
// not what the manifest says fails the read, naming it. Small parts, once
// checked, are kept (pq.VerifiedCache, parts up to 16 MiB): the other
// shards of the run, and other runs on the version, read them from memory.
func (a *Eval) dataset(ctx context.Context, plan runs.Plan) (blob.Store, error) {
	m, err := catalog.ReadManifest(ctx, a.Store, plan.Dataset, plan.DatasetVersion)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", plan.RunID, err)
	}
	return catalog.Checked(pq.WithVerifiedCache(a.Store, a.fileCache()), m), nil
}

// fileCache returns the worker's cache of checked dataset files.
func (a *Eval) fileCache() *pq.VerifiedCache {
	a.filesOnce.Do(func() { a.files = pq.NewVerifiedCache(datasetFileCache) })
	return a.files
}

// RunShardInput names one shard of a run, or a group of consecutive ones.
type RunShardInput struct {
	RunID       string
	Shard       int
	RerunErrors bool
	// Shards is how many consecutive shards from Shard the activity runs,
	// one after the other, each to its own result file, exactly as that
	// many single-shard activities would [1]. The workflow groups shards
	// when they are fast (ShardGroup), so that Temporal's cost and the
	// round trip between two activities are paid once per group.
	Shards int `json:",omitempty"`
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
	// Seconds is how long the activity took to run its shards (the
	// workflow sizes groups of fast shards from it).
	Seconds float64 `json:",omitempty"`
	// Shards is how many shards the result covers [1].
	Shards int `json:",omitempty"`
}

// add sums b into r (a group's result over its shards).
func (r *ShardResult) add(b ShardResult) {
	r.Samples += b.Samples
	r.ModelFailed += b.ModelFailed
	r.InfraFailed += b.InfraFailed
	r.Calls += b.Calls
	r.CacheHits += b.CacheHits
	r.CostUSD += b.CostUSD
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
//
// With in.Shards > 1 it runs that many consecutive shards one after the
// other, each exactly as a single-shard activity would; its heartbeat
// detail names the shard it is in, so a retry skips the shards whose
// result files exist and resumes the one it was in from its checkpoints.
func (a *Eval) RunShard(ctx context.Context, in RunShardInput) (ShardResult, error) {
	t0 := time.Now()
	if in.Shards <= 1 {
		res, err := a.runShard(ctx, in.RunID, in.Shard, in.RerunErrors, nil)
		res.Seconds = time.Since(t0).Seconds()
		return res, err
	}
	g := &shardGroup{beat: func(d any) { activity.RecordHeartbeat(ctx, d) }}
	plan, err := a.plan(ctx, in.RunID)
	if err != nil {
		return ShardResult{}, classify(err)
	}
	for i := range in.Shards {
		rng, err := plan.Shard(in.Shard + i)
		if err != nil {
			return ShardResult{}, invalid(err)
		}
		g.total += rng.Rows
	}
	stopBeat := heartbeatEvery(ctx, 2*time.Second, g.detail)
	defer stopBeat()
	res := ShardResult{Shard: in.Shard, Shards: in.Shards}
	for i := range in.Shards {
		r, err := a.runShard(ctx, in.RunID, in.Shard+i, in.RerunErrors, g)
		if err != nil {
			return ShardResult{}, err
		}
		res.add(r)
		g.finished(r)
	}
	res.Seconds = time.Since(t0).Seconds()
	return res, nil
}

// shardGroup is the state of a RunShard activity over several shards that
// its heartbeats report: the shard it is in, that shard's progress, and
// the counts of the group so far.
type shardGroup struct {
	beat  func(detail any)
	total int64 // samples of the whole group

	mu    sync.Mutex
	shard int
	cur   *shardRun
	base  ShardCounts // the group's finished shards
}

// start makes sr, of shard, the group's current shard.
func (g *shardGroup) start(shard int, sr *shardRun) {
	g.mu.Lock()
	g.shard, g.cur = shard, sr
	g.mu.Unlock()
	sr.shardID = shard
	sr.beat = func(any) { g.beat(g.detail()) }
}

// finished adds a finished shard's counts to the group's.
func (g *shardGroup) finished(r ShardResult) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.base.Samples += r.Samples
	g.base.ModelFailed += r.ModelFailed
	g.base.InfraFailed += r.InfraFailed
	g.base.CostUSD += r.CostUSD
	g.cur = nil
}

// detail is the group's heartbeat detail: the current shard's progress
// (its checkpoints, for a retry), with the group's counts so far (for
// progress displays).
func (g *shardGroup) detail() any {
	g.mu.Lock()
	defer g.mu.Unlock()
	var p shardProgress
	if g.cur != nil {
		p = g.cur.progress()
	}
	p.Shard = g.shard
	c := g.base
	c.Samples += p.Samples
	c.ModelFailed += p.ModelFailed
	c.InfraFailed += p.InfraFailed
	c.CostUSD += p.CostUSD
	c.BatchCounts = p.BatchCounts // the current shard's batches
	c.Total = g.total
	p.ShardCounts = c
	return p
}

// runShard runs one shard; g is its group, nil when the activity runs
// this shard alone.
func (a *Eval) runShard(ctx context.Context, run string, shard int, rerunErrors bool, g *shardGroup) (res ShardResult, err error) {
	in := RunShardInput{RunID: run, Shard: shard, RerunErrors: rerunErrors}
	ctx, done := a.shardStart(ctx, "RunShard", in.RunID, in.Shard)
	defer done(&res, &err)
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

	rows, todo := startRows(len(samples), previous)
	// A rerun of a finished shard's errors neither reads nor writes
	// checkpoints: it redoes only its few failed rows.
	sr := a.newShardRun(ctx, plan.RunID, in.Shard, rows, todo, previous == nil)
	sr.flush = seg.Flush
	if g != nil {
		g.start(in.Shard, sr)
	}
	if err := sr.resume(ctx, previousDetail(ctx)); err != nil {
		return ShardResult{}, err
	}
	if g == nil {
		// Heartbeat on a ticker too, carrying the progress, so a slow chunk
		// (a slow model) does not look like a dead worker. (A group has
		// one ticker for all its shards.)
		stopBeat := heartbeatEvery(ctx, 2*time.Second, func() any { return sr.progress() })
		defer stopBeat()
	}
	var finished map[int]schemas.ResultRow // by the batch rounds
	if plan.Batch && !plan.NoCache {
		// Batch rounds first (they need the cache: a no-cache run is
		// interactive). They finish the samples whose tasks ran through
		// on cached answers; the pass below takes those rows and runs
		// only the samples still deferring after the last round.
		b := &batchShard{a: a, run: plan.RunID, shard: in.Shard, seg: seg, gw: a.Gateway.WithCache(seg), sr: sr}
		var idx []int
		for i := sr.progress().Done * sr.chunk; i < len(rows); i++ {
			if todo[i] {
				idx = append(idx, i)
			}
		}
		final, done, err := a.batchRounds(ctx, b, task, env, samples, idx)
		if err != nil {
			_ = seg.Flush(context.WithoutCancel(ctx))
			return ShardResult{}, err
		}
		env.Models, _ = b.gw.Deferring(final, nil)
		finished = done
	}
	err = sr.each(ctx, a.sampleConcurrency(), func(gctx context.Context, i int) error {
		row, ok := finished[i]
		if !ok {
			var err error
			if row, err = a.evaluate(sampleCtx(gctx, samples[i].ID), task, env, samples[i]); err != nil {
				return err
			}
		}
		row.RunID, row.Shard, row.SampleIndex = plan.RunID, int32(in.Shard), rng.First+int64(i)
		rows[i] = row
		if a.Observer != nil {
			a.Observer.SampleDone("RunShard", sampleStatus(row))
		}
		return nil
	})
	if err != nil {
		_ = seg.Flush(context.WithoutCancel(ctx))
		return ShardResult{}, err
	}
	if err := seg.Flush(ctx); err != nil {
		return ShardResult{}, err
	}
	if err := sr.finish(ctx, key); err != nil {
		return ShardResult{}, err
	}
	return summarize(in.Shard, rows), nil
}

// startRows returns the rows a shard of n samples starts from and which of
// them are to do: for a fresh shard (previous nil), empty rows, all to do;
// for --rerun-errors over a finished shard (previous, its n rows), those
// rows, with only the infrastructure failures to do.
func startRows(n int, previous []schemas.ResultRow) ([]schemas.ResultRow, []bool) {
	rows := make([]schemas.ResultRow, n)
	todo := make([]bool, n)
	if previous != nil {
		for i, r := range previous {
			rows[i] = r
			todo[i] = r.ErrorClass == schemas.ErrorClassInfrastructure
		}
		return rows, todo
	}
	for i := range todo {
		todo[i] = true
	}
	return rows, todo
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

// newShardRun returns the resumable loop of a shard activity over rows,
// heartbeating through ctx.
func (a *Eval) newShardRun(ctx context.Context, run string, shard int, rows []schemas.ResultRow, todo []bool, checkpoint bool) *shardRun {
	return &shardRun{store: a.Store, run: run, shard: shard, chunk: a.chunkSize(), interval: a.checkpointInterval(),
		rows: rows, todo: todo, checkpoint: checkpoint, now: time.Now, shardID: -1,
		beat: func(d any) { activity.RecordHeartbeat(ctx, d) }}
}

// previousDetail returns a decoder of the heartbeat detail the activity's
// previous attempt recorded last, or nil when there is none.
func previousDetail(ctx context.Context) func(any) error {
	if !activity.HasHeartbeatDetails(ctx) {
		return nil
	}
	return func(v any) error { return activity.GetHeartbeatDetails(ctx, v) }
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

// sampleAttempts is SampleAttempts with its default: the one meaning of
// the field for every activity.
func (a *Eval) sampleAttempts() int {
	if a.SampleAttempts > 0 {
		return a.SampleAttempts
	}
	return 3
}

// retryUnit is the wait before a sample's second try; the wait grows by it
// with every try (unless the provider asked for longer).
func (a *Eval) retryUnit() time.Duration {
	if a.retryBase > 0 {
		return a.retryBase
	}
	return time.Second
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
	attempts := a.sampleAttempts()
	var lastErr error
	for attempt := 1; attempt <= attempts; attempt++ {
		out, err := task.Evaluate(ctx, env, s)
		if err == nil {
			fillRow(&row, out)
			return row, nil
		}
		// A call that failed was still made (and may be billed): count
		// its HTTP attempts, so a run whose calls all failed does not say
		// "calls 0".
		var gerr *gateway.Error
		if errors.As(err, &gerr) {
			row.Calls += int32(max(gerr.Attempts, 1))
		}
		if ctx.Err() != nil {
			return row, ctx.Err()
		}
		if gateway.IsDeferred(err) {
			return row, nil // a batch round: the sample runs again next round
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
		if attempt == attempts || gateway.IsBatchFailure(err) {
			break // no wait after the last try; a failed batch request fails again
		}
		wait := time.Duration(attempt) * a.retryUnit()
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
// rerun only does what is left. It checkpoints like RunShard (chunks,
// checkpoint files under runs.ChunkPrefix, the progress as its heartbeat
// detail), so a retry after a crash scores only the chunks after the last
// checkpoint again; the shard file is rewritten once, at the end, and the
// checkpoints are then deleted.
func (a *Eval) ScoreShard(ctx context.Context, in ScoreShardInput) (res ShardResult, err error) {
	ctx, done := a.shardStart(ctx, "ScoreShard", in.RunID, in.Shard)
	defer done(&res, &err)
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
	todo := make([]bool, len(rows))
	left := 0
	for i, r := range rows {
		if todo[i] = needsScore(r); todo[i] {
			left++
		}
	}
	if left == 0 {
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
	sr := a.newShardRun(ctx, plan.RunID, in.Shard, rows, todo, true)
	if err := sr.resume(ctx, previousDetail(ctx)); err != nil {
		return ShardResult{}, err
	}
	stopBeat := heartbeatEvery(ctx, 2*time.Second, func() any { return sr.progress() })
	defer stopBeat()
	err = sr.each(ctx, a.sampleConcurrency(), func(gctx context.Context, i int) error {
		if err := a.score(sampleCtx(gctx, samples[i].ID), ds, samples[i], &rows[i]); err != nil {
			return err
		}
		if a.Observer != nil {
			a.Observer.SampleDone("ScoreShard", sampleStatus(rows[i]))
		}
		return nil
	})
	if err != nil {
		return ShardResult{}, err
	}
	if err := sr.finish(ctx, key); err != nil {
		return ShardResult{}, err
	}
	return summarize(in.Shard, rows), nil
}

// score scores one generated row in place, trying sampleAttempts times. It
// returns an error only when the activity must stop (cancellation); a
// scorer that keeps failing makes the row an infrastructure failure.
func (a *Eval) score(ctx context.Context, ds scorers.DeferredScorer, s scorers.Sample, row *schemas.ResultRow) error {
	out := outcomeOf(*row)
	var scored scorers.Outcome
	var err error
	for range a.sampleAttempts() {
		scored, err = ds.Score(ctx, s, out)
		if err == nil || ctx.Err() != nil {
			break
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		row.ErrorClass = schemas.ErrorClassInfrastructure
		row.ErrorMessage = truncate(err.Error(), 500)
		return nil
	}
	row.Metrics = scored.Metrics
	if scored.ModelError != "" {
		row.ErrorClass, row.ErrorMessage = scored.ModelError, truncate(scored.ModelMsg, 500)
	}
	if scored.Details != nil {
		if b, err := json.Marshal(scored.Details); err == nil {
			row.DetailsJSON = string(b)
		}
	}
	return nil
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
	// SecondsPerSample is the shard activities' measured time per sample
	// over ShardsTimed shards; when set, Aggregate records it for the
	// model's next run on the dataset (runs.TimingKey).
	SecondsPerSample float64 `json:",omitempty"`
	ShardsTimed      int     `json:",omitempty"`
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
	s, err := aggregate.Compute(ctx, a.Store, plan, aggregate.Options{Seed: seed, Cluster: a.cluster(ctx, plan)})
	if errors.Is(err, aggregate.ErrBadShard) || errors.Is(err, blob.ErrNotFound) {
		// A shard that does not match the schema, or is missing after every
		// shard activity succeeded, will not fix itself: stop with its name.
		return s, invalid(err)
	}
	if err != nil {
		return s, err
	}
	s.Baseline = strings.HasPrefix(plan.Model, "baseline/")
	s.Batch = plan.Batch
	s.CreatedAt = plan.CreatedAt
	if err := writeSummaryTable(ctx, a.Store, runs.SummaryTableKey(plan.RunID), s.Rows()); err != nil {
		return s, err
	}
	// The timing before summary.json, which is written last: a retry
	// after a failed write finds no summary and writes both.
	if in.SecondsPerSample > 0 && in.ShardsTimed > 0 {
		t := runs.Timing{RunID: plan.RunID, SecondsPerSample: in.SecondsPerSample, ShardsTimed: in.ShardsTimed}
		if err := blob.PutJSON(ctx, a.Store, runs.TimingKey(plan.Dataset, plan.Model), t); err != nil {
			return s, err
		}
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

// CleanupRunInput names a run that ended without finishing.
type CleanupRunInput struct {
	RunID string
}

// CleanupRunResult says what CleanupRun deleted.
type CleanupRunResult struct {
	Checkpoints int
	// Batches counts the provider batches of a batch-mode run it cancelled.
	Batches int `json:",omitempty"`
}

// CleanupRun deletes a run's shard checkpoints (runs/<id>/partial/) after
// the run was cancelled or failed, and cancels the provider batches its
// shards were waiting for (batch mode: their records not done). Only a retry of the same shard activity
// reads checkpoints (through its heartbeat detail), and a new start of the
// plan is a new workflow whose shards start from their first attempt, so
// nothing reads them again; the finished shards' result files and the cache
// segments stay, so a restart of the plan resumes from them. Deleting what
// is already gone is not an error, so a retried cleanup is harmless.
func (a *Eval) CleanupRun(ctx context.Context, in CleanupRunInput) (CleanupRunResult, error) {
	infos, err := a.Store.List(ctx, runs.PartialPrefix(in.RunID))
	if err != nil {
		return CleanupRunResult{}, err
	}
	for _, info := range infos {
		if err := a.Store.Delete(ctx, info.Key); err != nil && !errors.Is(err, blob.ErrNotFound) {
			return CleanupRunResult{}, err
		}
	}
	n, err := a.cancelBatches(ctx, in.RunID)
	if err != nil {
		return CleanupRunResult{}, err
	}
	return CleanupRunResult{Checkpoints: len(infos), Batches: n}, nil
}

func invalid(err error) error {
	return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInvalidInput, err)
}

// cluster is the cluster function of dataset's benchmark, nil if it has
// none.
func (a *Eval) cluster(ctx context.Context, plan runs.Plan) func(schemas.ResultRow) string {
	b, err := a.Benchmarks.Get(plan.Dataset)
	if err == nil {
		return b.Cluster
	}
	// A task file's: its task clusters by the column it names, if any.
	if t, err := a.Benchmarks.TaskOfVersion(ctx, a.Store, plan.Dataset, plan.DatasetVersion); err == nil {
		if c, ok := t.(clusteredTask); ok && c.ClusterBy() != "" {
			return c.Cluster
		}
	}
	return nil
}

// clusteredTask is a task that says its own clusters (a task file's, whose
// benchmark has no registration to say them).
type clusteredTask interface {
	Description() string
	ClusterBy() string
	Cluster(schemas.ResultRow) string
}

// classifyTask classifies the error of finding a run's task: a dataset or
// task file that is not there, or that does not compile, is bad input; a
// store that did not answer is retried.
func classifyTask(err error) error {
	var ie *datasets.InputError
	if errors.Is(err, catalog.ErrNoDataset) || errors.As(err, &ie) || strings.Contains(err.Error(), "no evaluation task") || strings.Contains(err.Error(), "corrupt") {
		return invalid(err)
	}
	return err
}
