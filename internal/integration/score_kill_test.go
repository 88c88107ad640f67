package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/wfclient"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"

	"github.com/benchline/benchline/activities"
	"github.com/benchline/benchline/datasets"
	dsifevalcode "github.com/benchline/benchline/datasets/ifevalcode"
	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/internal/benchmark/benchmarktest"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/internal/sandbox"
	"github.com/benchline/benchline/internal/sandbox/lang"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
	"github.com/benchline/benchline/scorers/ifevalcode"
	"github.com/benchline/benchline/workflows"
)

// scoreLog records, per ScoreShard attempt, the samples whose scoring
// started and finished and the sandbox programs each ran. In attempt 1 it
// lets the first proceed scorings through and holds every later one until
// its context ends (the worker is stopped).
type scoreLog struct {
	proceed int

	mu      sync.Mutex
	started map[int32][]string
	done    map[int32][]string
	held    int
	runs    map[int32]map[string]int
}

func newScoreLog(proceed int) *scoreLog {
	return &scoreLog{proceed: proceed, started: map[int32][]string{}, done: map[int32][]string{}, runs: map[int32]map[string]int{}}
}

// begin records a scoring's start and reports whether to hold it.
func (l *scoreLog) begin(attempt int32, id string) (hold bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.started[attempt] = append(l.started[attempt], id)
	if attempt == 1 && len(l.started[1]) > l.proceed {
		l.held++
		return true
	}
	return false
}

func (l *scoreLog) end(attempt int32, id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.done[attempt] = append(l.done[attempt], id)
}

func (l *scoreLog) run(k scoreKey) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.runs[k.attempt] == nil {
		l.runs[k.attempt] = map[string]int{}
	}
	l.runs[k.attempt][k.id]++
}

// scoreKey names the scoring a sandbox run belongs to (a context value).
type scoreKey struct {
	attempt int32
	id      string
}

// countingTask is the ifevalcode task, scored on its own queue, with every
// scoring logged (and held, per scoreLog).
type countingTask struct {
	*ifevalcode.Task
	queue string
	log   *scoreLog
}

func (t countingTask) ScoreQueue() string { return t.queue }

func (t countingTask) Score(ctx context.Context, s scorers.Sample, o scorers.Outcome) (scorers.Outcome, error) {
	attempt := activity.GetInfo(ctx).Attempt
	if t.log.begin(attempt, s.ID) {
		<-ctx.Done()
		return o, ctx.Err()
	}
	out, err := t.Task.Score(context.WithValue(ctx, scoreKey{}, scoreKey{attempt, s.ID}), s, o)
	if err == nil {
		t.log.end(attempt, s.ID)
	}
	return out, err
}

// countingSandbox counts the programs run for each scoring.
type countingSandbox struct {
	lang.Sandboxer
	log *scoreLog
}

func (c countingSandbox) Run(ctx context.Context, cmd sandbox.Cmd) (sandbox.Result, error) {
	k, _ := ctx.Value(scoreKey{}).(scoreKey)
	c.log.run(k)
	return c.Sandboxer.Run(ctx, cmd)
}

// pythonItems writes an IFEvalCode source of copies of the Python
// fixtures (one dataset file, so one shard) and returns its directory and
// item count.
func pythonItems(t *testing.T, copies int) (string, int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "datasets", "ifevalcode", "fixtures", dsifevalcode.DefaultFile))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	n := 0
	for line := range bytes.Lines(b) {
		var it map[string]any
		if err := json.Unmarshal(line, &it); err != nil {
			t.Fatal(err)
		}
		if it["programming_language"] != "python" {
			continue
		}
		id := it["id"]
		for c := range copies {
			it["id"] = fmt.Sprintf("%v_copy%d", id, c)
			enc, err := json.Marshal(it)
			if err != nil {
				t.Fatal(err)
			}
			out.Write(append(enc, '\n'))
			n++
		}
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{dsifevalcode.DefaultFile: out.String()})
	return dir, n
}

func countingTasks(t *testing.T, task countingTask) *benchmark.Registry {
	t.Helper()
	b := dsifevalcode.Benchmark
	b.NewTask = func(benchmark.Deps) scorers.Task { return task }
	return benchmarktest.Registry(t, b)
}

// TestScoreShardResumesAfterWorkerStop scores an IFEvalCode shard (15
// Python items, chunks of 4, a checkpoint after every chunk) on a sandbox
// worker that is stopped while it scores the third chunk, then starts
// another. The retry must resume from the checkpoint of the first two
// chunks: every sample is scored to the end, those two chunks are not
// scored again, and the sandbox programs run in all are those of one full
// scoring plus at most one chunk's worth.
//
// The worker runs in the test process and is stopped with worker.Stop,
// which cancels the running activity, not SIGKILLed: the sandbox queue's
// name is fixed and served by the shared stack's worker, and counting
// programs needs a hook in the worker. The retry takes the same path as
// after a crash: a new attempt, the last heartbeat detail the server holds,
// the checkpoint files it names.
func TestScoreShardResumesAfterWorkerStop(t *testing.T) {
	const (
		chunk      = 4
		mainQueue  = "score-kill"
		scoreQueue = "score-kill-sandbox"
	)
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	src, n := pythonItems(t, 5)
	built, err := buildVia(t, dsifevalcode.Name, datasets.Request{Source: src})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.New(sandbox.Config{})
	if err != nil {
		t.Fatalf("sandbox unavailable: %v (run `make setup`)", err)
	}
	defer sb.Close()
	log := newScoreLog(2*chunk + chunk/2) // attempt 1: two chunks and half the third

	// The workflow and generation on a queue of this test, with the task
	// scored on another: no worker of the shared stack takes either.
	gen := worker.New(stack.Client, mainQueue, worker.Options{})
	gen.RegisterWorkflow(workflows.EvaluateModel)
	gen.RegisterActivity(&activities.Eval{Store: stack.Store, Gateway: stack.Gateway,
		Benchmarks: countingTasks(t, countingTask{Task: ifevalcode.NewTask(nil, ifevalcode.Options{}), queue: scoreQueue, log: log})})
	if err := gen.Start(); err != nil {
		t.Fatal(err)
	}
	defer gen.Stop()
	startScorer := func() worker.Worker {
		w := worker.New(stack.Client, scoreQueue, worker.Options{MaxConcurrentActivityExecutionSize: 1})
		task := countingTask{Task: ifevalcode.NewTask(countingSandbox{Sandboxer: sb, log: log}, ifevalcode.Options{}), queue: scoreQueue, log: log}
		w.RegisterActivity(&activities.Eval{Store: stack.Store, Gateway: stack.Gateway, Benchmarks: countingTasks(t, task),
			ChunkSize: chunk, CheckpointInterval: time.Nanosecond})
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		return w
	}
	first := startScorer()

	cfg := stack.Stack.Config
	cfg.Temporal.TaskQueue = mainQueue
	seed := 4242 // a run of its own, not the baseline test's
	run, plan, err := wfclient.StartEval(ctx, stack.Client, cfg, stack.Store, workflows.EvaluateModelInput{
		Request:               runs.Request{Dataset: dsifevalcode.Name + "@" + built.Version, Model: "baseline/reference", Seed: &seed},
		ShardHeartbeatTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Shards != 1 || plan.Samples != int64(n) {
		t.Fatalf("plan: %d shards, %d samples; want 1 shard of %d", plan.Shards, plan.Samples, n)
	}

	// Stop the worker once the first attempt holds the rest of the third
	// chunk and the server has its heartbeat saying two chunks are
	// checkpointed.
	pollUntil(ctx, t, "scoring held in the third chunk", func() bool {
		log.mu.Lock()
		defer log.mu.Unlock()
		return log.held == chunk/2 && len(log.done[1]) == 2*chunk+chunk/2
	})
	pollUntil(ctx, t, "heartbeat with 2 chunks checkpointed", func() bool {
		d, err := stack.Client.DescribeWorkflowExecution(ctx, wfclient.EvalWorkflowID(plan.RunID), "")
		if err != nil {
			return false
		}
		for _, pa := range d.GetPendingActivities() {
			var p struct {
				Done int `json:"done"` // activities.shardProgress
			}
			if pa.GetActivityType().GetName() == "ScoreShard" && pa.GetHeartbeatDetails() != nil &&
				converter.GetDefaultDataConverter().FromPayloads(pa.GetHeartbeatDetails(), &p) == nil && p.Done >= 2 {
				return true
			}
		}
		return false
	})
	first.Stop()
	second := startScorer()
	defer second.Stop()

	res, err := wfclient.WaitEval(ctx, stack.Client, run, plan.RunID, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Summary; s.Samples != int64(n) || s.InfraFailed != 0 || metric(s, ifevalcode.MetricCorr).Mean != 1 {
		t.Fatalf("summary: %d samples, %d infrastructure failures, corr %+v", s.Samples, s.InfraFailed, metric(s, ifevalcode.MetricCorr))
	}
	rows, err := pq.ReadAll[schemas.ResultRow](ctx, stack.Store, runs.ShardKey(plan.RunID, 0))
	if err != nil {
		t.Fatal(err)
	}
	order := make([]string, len(rows)) // sample ids by row: chunk c is order[c*chunk:(c+1)*chunk]
	for i, r := range rows {
		order[i] = r.SampleID
	}
	if left, err := stack.Store.List(ctx, runs.ChunkPrefix(plan.RunID, 0)); err != nil || len(left) != 0 {
		t.Errorf("checkpoints left after the shard file was written: %v (%v)", left, err)
	}

	log.mu.Lock()
	defer log.mu.Unlock()
	var retried []string // scorings started by later attempts
	retriedRuns := map[string]int{}
	for a, ids := range log.started {
		if a > 1 {
			retried = append(retried, ids...)
			for id, k := range log.runs[a] {
				retriedRuns[id] += k
			}
		}
	}
	if got := slices.Sorted(slices.Values(log.started[1])); !slices.Equal(got, slices.Sorted(slices.Values(order[:3*chunk]))) {
		t.Errorf("attempt 1 scored %v, want the first three chunks", log.started[1])
	}
	// The retry resumed after the checkpoint: it scored the third chunk
	// again and the rest once, never the first two chunks.
	if got, want := slices.Sorted(slices.Values(retried)), slices.Sorted(slices.Values(order[2*chunk:])); !slices.Equal(got, want) {
		t.Fatalf("the retry scored %v, want each of %v once", got, want)
	}
	scorings := 0
	for _, ids := range log.done {
		scorings += len(ids)
	}
	if scorings > n+chunk {
		t.Errorf("%d scorings finished for %d samples, want at most one chunk (%d) more", scorings, n, chunk)
	}
	total, once, oneChunk := 0, 0, 0
	for _, byID := range log.runs {
		for _, k := range byID {
			total += k
		}
	}
	for i, id := range order {
		if i < 2*chunk {
			once += log.runs[1][id]
		} else {
			once += retriedRuns[id]
		}
		if i/chunk == 2 {
			oneChunk += retriedRuns[id]
		}
	}
	if log.runs[0] != nil {
		t.Errorf("sandbox runs outside any scoring: %v", log.runs[0])
	}
	t.Logf("%d samples: %d scorings finished over %d attempts; sandbox programs: %d in all, %d for one full scoring, %d for the redone chunk",
		n, scorings, len(log.started), total, once, oneChunk)
	if total-once <= 0 || total-once > oneChunk {
		t.Errorf("sandbox programs: %d in all, one scoring %d: the retry reran %d, want some and at most one chunk's %d", total, once, total-once, oneChunk)
	}
}
