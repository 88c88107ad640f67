package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

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

// fakeTask is a task with a deferred scorer over a dataset whose samples
// are named s0, s1, ... (ReadSamples reads nothing). It logs the samples
// Score and Evaluate were called for; hook, when set, runs first in both
// and its error is theirs.
type fakeTask struct {
	hook func(ctx context.Context, s scorers.Sample) error

	mu    sync.Mutex
	calls []string
}

var (
	_ scorers.Task           = (*fakeTask)(nil)
	_ scorers.DeferredScorer = (*fakeTask)(nil)
)

func (*fakeTask) Dataset() string    { return "fake" }
func (*fakeTask) Version() string    { return "1" }
func (*fakeTask) Metrics() []string  { return []string{"m"} }
func (*fakeTask) ScoreQueue() string { return "score" }

func (*fakeTask) ReadSamples(_ context.Context, _ blob.Store, _ string, start, n int64, fn func(scorers.Sample) error) error {
	for i := start; i < start+n; i++ {
		if err := fn(scorers.Sample{ID: fmt.Sprintf("s%d", i)}); err != nil {
			return err
		}
	}
	return nil
}

func (t *fakeTask) call(ctx context.Context, s scorers.Sample) error {
	t.mu.Lock()
	t.calls = append(t.calls, s.ID)
	t.mu.Unlock()
	if t.hook != nil {
		return t.hook(ctx, s)
	}
	return nil
}

// takeCalls returns the calls logged so far and clears the log.
func (t *fakeTask) takeCalls() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.calls
	t.calls = nil
	return c
}

func (t *fakeTask) Evaluate(ctx context.Context, _ scorers.Env, s scorers.Sample) (scorers.Outcome, error) {
	if err := t.call(ctx, s); err != nil {
		return scorers.Outcome{}, err
	}
	return scorers.Outcome{Response: "answer " + s.ID, Metrics: map[string]float64{"m": 1}}, nil
}

func (t *fakeTask) Score(ctx context.Context, s scorers.Sample, o scorers.Outcome) (scorers.Outcome, error) {
	if err := t.call(ctx, s); err != nil {
		return o, err
	}
	o.Metrics = map[string]float64{"m": 1}
	o.Details = map[string]string{"scored": s.ID}
	return o, nil
}

// generatedShard stores the plan of a one-shard run of n samples of the
// fake task and its generated, unscored shard file, and returns an Eval
// over them scoring in chunks of chunk samples, one sample at a time, with
// a checkpoint after every chunk.
func generatedShard(t *testing.T, task *fakeTask, n int64, chunk int) (*Eval, string) {
	t.Helper()
	ctx := context.Background()
	store := blobtest.NewMemory()
	plan := runs.Plan{Dataset: "fake", DatasetVersion: "v1", Model: "baseline/reference", TaskVersion: "1", Metrics: []string{"m"},
		Files: []runs.File{{Key: "datasets/fake/v1/data/part-00000.parquet", Rows: n}}}
	plan.Layout()
	plan.RunID = plan.ID()
	if err := blob.PutJSON(ctx, store, runs.PlanKey(plan.RunID), plan); err != nil {
		t.Fatal(err)
	}
	m := catalog.Manifest{Name: "fake", Version: "v1", Rows: n, Files: []catalog.File{{Path: catalog.PartPath(0), Rows: n}}}
	if err := blob.PutJSON(ctx, store, catalog.ManifestKey(m.Name, m.Version), m); err != nil {
		t.Fatal(err)
	}
	rows := make([]schemas.ResultRow, n)
	for i := range rows {
		rows[i] = schemas.ResultRow{RunID: plan.RunID, SampleIndex: int64(i), SampleID: fmt.Sprintf("s%d", i), Response: "answer"}
	}
	if err := writeRows(ctx, store, runs.ShardKey(plan.RunID, 0), rows); err != nil {
		t.Fatal(err)
	}
	reg := benchmarktest.Registry(t, benchmarktest.Task(task, schemas.Table{Name: "item", Version: 1}))
	return &Eval{Store: store, Benchmarks: reg, ChunkSize: chunk, CheckpointInterval: time.Nanosecond, SampleConcurrency: 1}, plan.RunID
}

// activityEnv returns a test activity environment running a's activities
// under ctx, and a function returning the last heartbeat detail it
// recorded (what Temporal hands the next attempt).
func activityEnv(ctx context.Context, a *Eval) (*testsuite.TestActivityEnvironment, func() (shardProgress, bool)) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.SetWorkerOptions(worker.Options{BackgroundActivityContext: ctx})
	var mu sync.Mutex
	var last *shardProgress
	env.SetOnActivityHeartbeatListener(func(_ *activity.Info, d converter.EncodedValues) {
		var p shardProgress
		if d.Get(&p) == nil {
			mu.Lock()
			last = &p
			mu.Unlock()
		}
	})
	env.RegisterActivity(a)
	return env, func() (shardProgress, bool) {
		mu.Lock()
		defer mu.Unlock()
		if last == nil {
			return shardProgress{}, false
		}
		return *last, true
	}
}

func ids(lo, hi int) []string {
	var out []string
	for i := lo; i < hi; i++ {
		out = append(out, fmt.Sprintf("s%d", i))
	}
	return out
}

// TestScoreShardResumesFromCheckpoints kills ScoreShard (its context ends,
// as when its worker dies) while it scores the third of four chunks, and
// checks the retry, given the last heartbeat detail, scores only that chunk
// and the last one, writes every row scored and deletes the checkpoints.
func TestScoreShardResumesFromCheckpoints(t *testing.T) {
	task := &fakeTask{}
	a, run := generatedShard(t, task, 10, 3) // chunks s0-s2, s3-s5, s6-s8, s9
	in := ScoreShardInput{RunID: run, Shard: 0}

	killCtx, kill := context.WithCancel(context.Background())
	defer kill()
	task.hook = func(ctx context.Context, s scorers.Sample) error {
		if s.ID == "s7" {
			kill()
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}
	env, lastBeat := activityEnv(killCtx, a)
	if _, err := env.ExecuteActivity(a.ScoreShard, in); err == nil {
		t.Fatal("the killed attempt succeeded")
	}
	if got := task.takeCalls(); !slices.Equal(got, ids(0, 8)) {
		t.Fatalf("first attempt scored %v, want %v", got, ids(0, 8))
	}
	beat, ok := lastBeat()
	if want := (shardProgress{Done: 2, Starts: []int{0, 1}}); !ok || !equalBeats([]shardProgress{beat}, []shardProgress{want}) {
		t.Fatalf("last heartbeat %+v (%v), want %+v", beat, ok, want)
	}

	task.hook = nil
	env, _ = activityEnv(context.Background(), a)
	env.SetHeartbeatDetails(beat)
	v, err := env.ExecuteActivity(a.ScoreShard, in)
	if err != nil {
		t.Fatal(err)
	}
	var res ShardResult
	if err := v.Get(&res); err != nil || res.Samples != 10 || res.InfraFailed != 0 {
		t.Fatalf("result %+v (%v)", res, err)
	}
	if got := task.takeCalls(); !slices.Equal(got, ids(6, 10)) {
		t.Errorf("retry scored %v, want only %v", got, ids(6, 10))
	}
	ctx := context.Background()
	rows, err := pq.ReadAll[schemas.ResultRow](ctx, a.Store, runs.ShardKey(run, 0))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		if r.SampleID != fmt.Sprintf("s%d", i) || r.Metrics["m"] != 1 || !strings.Contains(r.DetailsJSON, r.SampleID) || r.Response != "answer" {
			t.Errorf("row %d: %+v, want s%d scored", i, r, i)
		}
	}
	if left, err := a.Store.List(ctx, runs.ChunkPrefix(run, 0)); err != nil || len(left) != 0 {
		t.Errorf("checkpoints left: %v (%v)", left, err)
	}

	// A scored shard is not scored again.
	env, _ = activityEnv(context.Background(), a)
	if _, err := env.ExecuteActivity(a.ScoreShard, in); err != nil {
		t.Fatal(err)
	}
	if got := task.takeCalls(); len(got) != 0 {
		t.Errorf("a scored shard was scored again: %v", got)
	}
}

// TestSampleAttempts: SampleAttempts is the total number of tries of a
// sample on infrastructure errors, 3 when unset, the same for generation
// (evaluate) and deferred scoring (ScoreShard); the sample is then an
// infrastructure failure.
func TestSampleAttempts(t *testing.T) {
	down := errors.New("sandbox unreachable")
	for _, tc := range []struct {
		set, want int
	}{
		{0, 3},
		{-1, 3},
		{1, 1},
		{2, 2},
		{5, 5},
	} {
		t.Run(fmt.Sprintf("SampleAttempts=%d", tc.set), func(t *testing.T) {
			task := &fakeTask{hook: func(context.Context, scorers.Sample) error { return down }}
			a, run := generatedShard(t, task, 1, 100)
			a.SampleAttempts = tc.set
			a.retryBase = time.Microsecond
			if got := a.sampleAttempts(); got != tc.want {
				t.Errorf("sampleAttempts() = %d, want %d", got, tc.want)
			}

			row, err := a.evaluate(context.Background(), task, scorers.Env{Model: "m"}, scorers.Sample{ID: "s0"})
			if err != nil || row.ErrorClass != schemas.ErrorClassInfrastructure || !strings.Contains(row.ErrorMessage, down.Error()) {
				t.Errorf("evaluate: %+v, %v; want an infrastructure failure", row, err)
			}
			if got := task.takeCalls(); len(got) != tc.want {
				t.Errorf("evaluate tried %d times, want %d", len(got), tc.want)
			}

			env, _ := activityEnv(context.Background(), a)
			if _, err := env.ExecuteActivity(a.ScoreShard, ScoreShardInput{RunID: run, Shard: 0}); err != nil {
				t.Fatal(err)
			}
			if got := task.takeCalls(); len(got) != tc.want {
				t.Errorf("ScoreShard tried %d times, want %d", len(got), tc.want)
			}
			rows, err := pq.ReadAll[schemas.ResultRow](context.Background(), a.Store, runs.ShardKey(run, 0))
			if err != nil || len(rows) != 1 || rows[0].ErrorClass != schemas.ErrorClassInfrastructure || !strings.Contains(rows[0].ErrorMessage, down.Error()) {
				t.Errorf("scored row %+v (%v), want an infrastructure failure", rows, err)
			}
		})
	}
}

// TestRunShardGroupResumes runs a group of 3 shards of 4 samples (chunks
// of 2, a checkpoint after each) and kills it in the second chunk of the
// last shard; the retry, given the last heartbeat detail (which names that
// shard), finds the first two shards' result files, resumes the third from
// its checkpoint, and returns the group's sums; every shard has its own
// result file with its own samples and no checkpoint is left.
func TestRunShardGroupResumes(t *testing.T) {
	ctx := context.Background()
	task := &fakeTask{}
	a, run := generatedShard(t, task, 12, 2)
	if err := a.Store.Delete(ctx, runs.ShardKey(run, 0)); err != nil { // a fresh run: no shard generated
		t.Fatal(err)
	}
	var plan runs.Plan
	if err := blob.GetJSON(ctx, a.Store, runs.PlanKey(run), &plan); err != nil {
		t.Fatal(err)
	}
	plan.ShardSize = 4
	plan.Layout()
	if err := blob.PutJSON(ctx, a.Store, runs.PlanKey(run), plan); err != nil {
		t.Fatal(err)
	}
	gw, err := gateway.New(gateway.Options{Config: &gateway.Config{}})
	if err != nil {
		t.Fatal(err)
	}
	a.Gateway = gw
	in := RunShardInput{RunID: run, Shard: 0, Shards: 3}

	killCtx, kill := context.WithCancel(ctx)
	defer kill()
	task.hook = func(ctx context.Context, s scorers.Sample) error {
		if s.ID == "s10" {
			kill()
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}
	env, lastBeat := activityEnv(killCtx, a)
	if _, err := env.ExecuteActivity(a.RunShard, in); err == nil {
		t.Fatal("the killed attempt succeeded")
	}
	if got := task.takeCalls(); !slices.Equal(got, ids(0, 11)) {
		t.Fatalf("first attempt evaluated %v, want %v", got, ids(0, 11))
	}
	beat, ok := lastBeat()
	if !ok || beat.Shard != 2 || beat.Done != 1 || !slices.Equal(beat.Starts, []int{0}) || beat.Samples != 10 || beat.Total != 12 {
		t.Fatalf("last heartbeat %+v (%v), want shard 2 with its first chunk checkpointed, 10 of 12 samples", beat, ok)
	}

	task.hook = nil
	env, _ = activityEnv(ctx, a)
	env.SetHeartbeatDetails(beat)
	v, err := env.ExecuteActivity(a.RunShard, in)
	if err != nil {
		t.Fatal(err)
	}
	var res ShardResult
	if err := v.Get(&res); err != nil || res.Samples != 12 || res.Shards != 3 || res.Shard != 0 || res.Seconds <= 0 {
		t.Fatalf("result %+v (%v), want 12 samples of 3 shards from shard 0, timed", res, err)
	}
	if got := task.takeCalls(); !slices.Equal(got, ids(10, 12)) {
		t.Errorf("retry evaluated %v, want only %v", got, ids(10, 12))
	}
	for sh := range 3 {
		rows, err := pq.ReadAll[schemas.ResultRow](ctx, a.Store, runs.ShardKey(run, sh))
		if err != nil {
			t.Fatal(err)
		}
		if got := len(rows); got != 4 {
			t.Fatalf("shard %d: %d rows, want 4", sh, got)
		}
		for i, r := range rows {
			if want := int64(4*sh + i); r.SampleIndex != want || r.SampleID != fmt.Sprintf("s%d", want) || r.Response != "answer "+r.SampleID {
				t.Errorf("shard %d row %d: %+v, want sample %d", sh, i, r, want)
			}
		}
		if left, err := a.Store.List(ctx, runs.ChunkPrefix(run, sh)); err != nil || len(left) != 0 {
			t.Errorf("shard %d: checkpoints left: %v (%v)", sh, left, err)
		}
	}
}
