package activities

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"go.temporal.io/sdk/testsuite"

	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/internal/benchmark/benchmarktest"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/gateway"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
)

// item is the one column rowsTask reads.
type item struct {
	ID string `parquet:"id"`
}

// rowsTask reads real Parquet rows and scores every sample 1 without
// calling a model; deferred, it leaves scoring to ScoreShard.
type rowsTask struct{ deferred bool }

func (rowsTask) Dataset() string   { return "d" }
func (rowsTask) Version() string   { return "1" }
func (rowsTask) Metrics() []string { return []string{"m"} }
func (rowsTask) ReadSamples(ctx context.Context, store blob.Store, key string, start, n int64, fn func(scorers.Sample) error) error {
	id := func(r *item) string { return r.ID }
	return scorers.ReadRows(ctx, store, key, start, n, id, func(*item) string { return "c" }, fn)
}
func (t rowsTask) Evaluate(context.Context, scorers.Env, scorers.Sample) (scorers.Outcome, error) {
	if t.deferred {
		return scorers.Outcome{Response: "r"}, nil
	}
	return scorers.Outcome{Response: "r", Metrics: map[string]float64{"m": 1}}, nil
}

// Reference answers every sample with "r", so that PlanRun writes
// references for baseline models.
func (rowsTask) Reference(s scorers.Sample) (scorers.Reference, bool) {
	return scorers.Reference{Messages: []openai.ChatCompletionMessage{{Role: "user", Content: s.ID}}, Content: "r"}, true
}

// deferredTask is rowsTask with its scoring on the "score" queue.
type deferredTask struct{ rowsTask }

func (deferredTask) ScoreQueue() string { return "score" }
func (deferredTask) Score(context.Context, scorers.Sample, scorers.Outcome) (scorers.Outcome, error) {
	return scorers.Outcome{Metrics: map[string]float64{"m": 1}}, nil
}

// publishRows publishes dataset d with two parts of 30 rows, written by
// the real Parquet writer, with their sizes, rows and sha256 in the
// manifest.
func publishRows(t *testing.T, store blob.Store) catalog.Manifest {
	t.Helper()
	ctx := context.Background()
	m := catalog.Manifest{Name: "d", Version: "0001", Schema: schemas.Table{Name: "item", Version: 1}}
	for p := range 2 {
		rows := make([]item, 30)
		for i := range rows {
			rows[i].ID = fmt.Sprintf("p%d-%02d", p, i)
		}
		w := pq.NewWriter[item](ctx, store, catalog.PartKey("d", "0001", p), pq.Options{})
		if err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
		info, err := w.Close()
		if err != nil {
			t.Fatal(err)
		}
		m.Files = append(m.Files, catalog.File{Path: catalog.PartPath(p), Rows: info.Rows, Bytes: info.Bytes, SHA256: info.SHA256})
		m.Rows += info.Rows
	}
	if err := catalog.Publish(ctx, store, m, "# card", catalog.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	return m
}

// overwriteSameSize replaces the object at key with random bytes of its
// size: what catalog.Verify (sizes) cannot see.
func overwriteSameSize(t *testing.T, store blob.Store, key string) {
	t.Helper()
	ctx := context.Background()
	b, err := blob.GetBytes(ctx, store, key)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	if err := blob.PutBytes(ctx, store, key, b); err != nil {
		t.Fatal(err)
	}
}

// TestCorruptDataStopsTheRun is finding 2 of issue 11 at the activities: a
// dataset part (or a result shard) overwritten with random bytes of the
// same size fails PlanRun, RunShard, ScoreShard and Aggregate at once, as
// non-retryable InvalidInput naming the file, instead of an error Temporal
// retries.
func TestCorruptDataStopsTheRun(t *testing.T) {
	part0 := catalog.PartKey("d", "0001", 0)
	tests := []struct {
		name     string
		deferred bool
		model    string
		// run does the steps before the corruption and the one that must
		// fail, returning its error; corrupt is called in between.
		run   func(t *testing.T, e *corruptionEnv, corrupt func(key string)) error
		names string // the failing activity's error names this key
	}{
		{"PlanRun", false, "test/m", func(t *testing.T, e *corruptionEnv, corrupt func(string)) error {
			corrupt(part0)
			_, err := e.planRun(t)
			return err
		}, catalog.PartPath(0)},
		{"PlanRun for a baseline model (references)", false, "baseline/reference", func(t *testing.T, e *corruptionEnv, corrupt func(string)) error {
			corrupt(catalog.PartKey("d", "0001", 1))
			_, err := e.planRun(t)
			return err
		}, catalog.PartPath(1)},
		{"RunShard", false, "test/m", func(t *testing.T, e *corruptionEnv, corrupt func(string)) error {
			e.mustPlan(t)
			corrupt(part0)
			return e.exec(t, e.a.RunShard, RunShardInput{RunID: e.run, Shard: 0})
		}, part0},
		{"RunShard over a finished shard", false, "test/m", func(t *testing.T, e *corruptionEnv, corrupt func(string)) error {
			e.shardDone(t, 0)
			corrupt(runs.ShardKey(e.run, 0))
			return e.exec(t, e.a.RunShard, RunShardInput{RunID: e.run, Shard: 0})
		}, "results/shard-00000.parquet"},
		{"ScoreShard", true, "test/m", func(t *testing.T, e *corruptionEnv, corrupt func(string)) error {
			e.shardDone(t, 0)
			corrupt(part0)
			// Scoring runs on another queue's worker, which has not read the
			// part (a worker that has keeps the bytes it checked:
			// TestCheckedPartsKeptPerWorker).
			e.newWorker()
			return e.exec(t, e.a.ScoreShard, ScoreShardInput{RunID: e.run, Shard: 0})
		}, part0},
		{"ScoreShard over a corrupt shard file", true, "test/m", func(t *testing.T, e *corruptionEnv, corrupt func(string)) error {
			e.shardDone(t, 0)
			corrupt(runs.ShardKey(e.run, 0))
			return e.exec(t, e.a.ScoreShard, ScoreShardInput{RunID: e.run, Shard: 0})
		}, "results/shard-00000.parquet"},
		{"Aggregate", false, "test/m", func(t *testing.T, e *corruptionEnv, corrupt func(string)) error {
			e.shardDone(t, 0, 1)
			corrupt(runs.ShardKey(e.run, 1))
			return e.exec(t, e.a.Aggregate, AggregateInput{RunID: e.run})
		}, "results/shard-00001.parquet"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newCorruptionEnv(t, tc.deferred, tc.model)
			err := tc.run(t, e, func(key string) { overwriteSameSize(t, e.store, key) })
			if err == nil {
				t.Fatal("no error")
			}
			if !isInvalidInput(err) {
				t.Errorf("error %v is not non-retryable %s", err, ErrTypeInvalidInput)
			}
			if !strings.Contains(err.Error(), tc.names) {
				t.Errorf("error %q does not name %s", err, tc.names)
			}
		})
	}
}

// corruptionEnv runs the evaluation activities on an in-memory store with a
// published dataset d, in Temporal's activity test environment.
type corruptionEnv struct {
	store blob.Store
	tasks *benchmark.Registry
	gw    *gateway.Gateway
	a     *Eval
	env   *testsuite.TestActivityEnvironment
	model string
	run   string
}

func newCorruptionEnv(t *testing.T, deferred bool, model string) *corruptionEnv {
	t.Helper()
	store := blobtest.NewMemory()
	publishRows(t, store)
	var task scorers.Task = rowsTask{}
	if deferred {
		task = deferredTask{rowsTask{deferred: true}}
	}
	tasks := benchmarktest.Registry(t, benchmarktest.Task(task, schemas.Table{Name: "item", Version: 1}))
	gw, err := gateway.New(gateway.Options{Config: &gateway.Config{}})
	if err != nil {
		t.Fatal(err)
	}
	e := &corruptionEnv{store: store, model: model, tasks: tasks, gw: gw}
	e.newWorker()
	return e
}

// newWorker replaces the activities with a fresh Eval on the same store,
// as another worker process would be.
func (e *corruptionEnv) newWorker() {
	var s testsuite.WorkflowTestSuite
	e.env = s.NewTestActivityEnvironment()
	e.a = &Eval{Store: e.store, Benchmarks: e.tasks, Gateway: e.gw}
	e.env.RegisterActivity(e.a)
}

func (e *corruptionEnv) planRun(t *testing.T) (PlanRunResult, error) {
	t.Helper()
	var res PlanRunResult
	v, err := e.env.ExecuteActivity(e.a.PlanRun, PlanRunInput{
		Request: runs.Request{Dataset: "d", Model: e.model, ShardSize: 30}, CreatedAt: time.Unix(0, 0)})
	if err == nil {
		err = v.Get(&res)
		e.run = res.RunID
	}
	return res, err
}

func (e *corruptionEnv) mustPlan(t *testing.T) {
	t.Helper()
	if _, err := e.planRun(t); err != nil {
		t.Fatal(err)
	}
}

// shardDone plans the run and runs the given shards, which must succeed.
func (e *corruptionEnv) shardDone(t *testing.T, shards ...int) {
	t.Helper()
	e.mustPlan(t)
	for _, s := range shards {
		if err := e.exec(t, e.a.RunShard, RunShardInput{RunID: e.run, Shard: s}); err != nil {
			t.Fatal(err)
		}
	}
}

func (e *corruptionEnv) exec(t *testing.T, activity any, in any) error {
	t.Helper()
	_, err := e.env.ExecuteActivity(activity, in)
	return err
}

// TestReferencesWriterReadsThroughTheManifest: the references writer
// reads samples through the store PlanRun gives it (catalog.Checked), so a
// part that breaks its manifest's promise fails the write with
// pq.ErrCorrupt naming the part, and no references file is left.
func TestReferencesWriterReadsThroughTheManifest(t *testing.T) {
	ctx := context.Background()
	store := blobtest.NewMemory()
	m := publishRows(t, store)
	task := rowsTask{}
	plan := NewPlan(runs.Request{Dataset: "d", Model: "baseline/reference"}, m, task, time.Unix(0, 0))
	part := catalog.PartKey("d", "0001", 1)
	overwriteSameSize(t, store, part)
	a := &Eval{Store: store}
	err := a.writeReferences(ctx, catalog.Checked(store, m), task, task, plan)
	if !errors.Is(err, pq.ErrCorrupt) || !strings.Contains(err.Error(), part) {
		t.Fatalf("writeReferences = %v: want pq.ErrCorrupt naming %s", err, part)
	}
	if ok, _ := blob.Exists(ctx, store, ReferencesKey("d", "0001", task.Version())); ok {
		t.Error("a references file was left")
	}
}

// TestCheckedPartsKeptPerWorker: a worker keeps the small parts its shards
// checked, so a later shard on it reads them without fetching them (and a
// part overwritten since is not noticed there: the worker reads the bytes
// the manifest vouches for); a worker that has not read the part fails on
// it, naming it.
func TestCheckedPartsKeptPerWorker(t *testing.T) {
	ctx := context.Background()
	e := newCorruptionEnv(t, false, "test/m")
	e.shardDone(t, 0)
	if n := e.a.files.Len(); n != 1 {
		t.Fatalf("%d parts kept after shard 0, want 1", n)
	}
	part0 := catalog.PartKey("d", "0001", 0)
	overwriteSameSize(t, e.store, part0)
	// Run shard 0 (which reads part 0) again from scratch on each worker.
	again := func() error {
		if err := e.store.Delete(ctx, runs.ShardKey(e.run, 0)); err != nil {
			t.Fatal(err)
		}
		return e.exec(t, e.a.RunShard, RunShardInput{RunID: e.run, Shard: 0})
	}
	if err := again(); err != nil {
		t.Fatalf("shard 0 again on the worker that checked part 0: %v", err)
	}
	e.newWorker()
	if err := again(); err == nil || !isInvalidInput(err) || !strings.Contains(err.Error(), part0) {
		t.Fatalf("shard 0 on a new worker: %v, want invalid input naming %s", err, part0)
	}
}

// TestPlanRunKeepsPartsForShards: PlanRun for a baseline model reads every
// part (for the references) through the worker's cache, so the shards that
// run on that worker read them from memory: the parts overwritten after
// PlanRun are not noticed there.
func TestPlanRunKeepsPartsForShards(t *testing.T) {
	e := newCorruptionEnv(t, false, "baseline/reference")
	e.mustPlan(t)
	if n := e.a.files.Len(); n != 2 {
		t.Fatalf("%d parts kept after PlanRun, want both", n)
	}
	for p := range 2 {
		overwriteSameSize(t, e.store, catalog.PartKey("d", "0001", p))
	}
	if err := e.exec(t, e.a.RunShard, RunShardInput{RunID: e.run, Shard: 0}); err != nil {
		t.Fatalf("shard 0 after PlanRun on the same worker: %v", err)
	}
}

// TestShardTimeHint: Aggregate records a run's time per sample for the
// model and dataset when it is given one, and the next PlanRun of the
// model on the dataset turns it into a time per shard of its plan; with
// none recorded the hint is 0.
func TestShardTimeHint(t *testing.T) {
	ctx := context.Background()
	e := newCorruptionEnv(t, false, "test/m")
	res, err := e.planRun(t)
	if err != nil {
		t.Fatal(err)
	}
	if res.ShardSecondsHint != 0 {
		t.Fatalf("hint %v with no run recorded, want 0", res.ShardSecondsHint)
	}
	for s := range res.Shards {
		if err := e.exec(t, e.a.RunShard, RunShardInput{RunID: e.run, Shard: s}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.exec(t, e.a.Aggregate, AggregateInput{RunID: e.run, SecondsPerSample: 0.002, ShardsTimed: res.Shards}); err != nil {
		t.Fatal(err)
	}
	var got runs.Timing
	if err := blob.GetJSON(ctx, e.store, runs.TimingKey("d", "test/m"), &got); err != nil {
		t.Fatal(err)
	}
	if want := (runs.Timing{RunID: e.run, SecondsPerSample: 0.002, ShardsTimed: res.Shards}); got != want {
		t.Fatalf("timing %+v, want %+v", got, want)
	}
	again, err := e.planRun(t)
	if err != nil {
		t.Fatal(err)
	}
	want := 0.002 * float64(again.Samples) / float64(again.Shards)
	if again.ShardSecondsHint != want {
		t.Errorf("hint %v, want %v (0.002 s per sample, %d samples in %d shards)", again.ShardSecondsHint, want, again.Samples, again.Shards)
	}
	// A timing file that is not JSON is no hint, and the plan still stands.
	if err := e.store.Put(ctx, runs.TimingKey("d", "test/m"), strings.NewReader("{broken"), 7); err != nil {
		t.Fatal(err)
	}
	broken, err := e.planRun(t)
	if err != nil || broken.ShardSecondsHint != 0 {
		t.Errorf("with a broken timing file: hint %v, %v; want 0 and no error", broken.ShardSecondsHint, err)
	}
}
