package integration

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/childproc"
	"github.com/benchline/benchline/internal/config"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers/promptfoo"
	"github.com/benchline/benchline/workflows"
)

// workerEnv is the environment of a `benchline worker` process on the test
// stack, serving queue and calling the baseline models at baseURL; extra
// entries (KEY=value) come last and so win.
func workerEnv(queue, baseURL string, extra ...string) []string {
	cfg := stack.Stack.Config
	env := append(os.Environ(),
		"TEMPORAL_ADDRESS="+cfg.Temporal.Address, "BENCHLINE_TASK_QUEUE="+queue,
		"BENCHLINE_S3_ENDPOINT="+cfg.S3.Endpoint, "BENCHLINE_S3_BUCKET="+cfg.S3.Bucket,
		"AWS_ACCESS_KEY_ID="+config.DevAccessKey, "AWS_SECRET_ACCESS_KEY="+config.DevSecretKey, "AWS_REGION=us-east-1",
		"BENCHLINE_BASELINE_URL="+baseURL)
	return append(env, extra...)
}

// A procWorker is a `benchline worker` process whose exit is noticed. It
// is started through childproc: from a thread that outlives the test's
// goroutines (its Pdeathsig fires only when the test binary ends), and its
// process group is never signalled once it was reaped (its pid may then be
// another test's, or another user's, worker).
type procWorker struct{ *childproc.Proc }

// startProcWorker starts `benchline <args...>` (a worker) with env in its own
// process group; it is SIGKILLed when the test ends.
func startProcWorker(t testing.TB, bin string, env []string, args ...string) *procWorker {
	t.Helper()
	return startProcWorkerLog(t, bin, env, nil, args...)
}

// startProcWorkerLog is startProcWorker with the worker's standard output
// and error written to log (nil: its error to the test's).
func startProcWorkerLog(t testing.TB, bin string, env []string, log io.Writer, args ...string) *procWorker {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stderr = os.Stderr
	if log != nil {
		cmd.Stdout, cmd.Stderr = log, log
	}
	p, err := childproc.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	w := &procWorker{p}
	t.Cleanup(w.kill)
	return w
}

// kill SIGKILLs the worker's process group and waits for it to exit.
func (w *procWorker) kill() { w.Kill() }

// publishedState maps every key under datasets/ (parts, cards, manifests,
// latest pointers) to its ETag: what readers of datasets can see.
func publishedState(t *testing.T) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	infos, err := stack.Store.List(ctx, "datasets/")
	if err != nil {
		t.Fatal(err)
	}
	m := make(map[string]string, len(infos))
	for _, in := range infos {
		m[in.Key] = in.ETag
	}
	return m
}

// publishedSince lists the keys under datasets/ that are new or rewritten
// since before.
func publishedSince(t *testing.T, before map[string]string) []string {
	t.Helper()
	var out []string
	for k, etag := range publishedState(t) {
		if old, ok := before[k]; !ok || old != etag {
			out = append(out, k)
		}
	}
	return out
}

// terminateOnCleanup terminates workflow id when the test ends, if it is
// still running: a case that failed by hanging must not leave a workflow
// retrying on the shared stack.
func terminateOnCleanup(t *testing.T, id string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = stack.Client.TerminateWorkflow(ctx, id, "", "integration test cleanup")
	})
}

// resultRows reads every result shard of a finished run.
func resultRows(ctx context.Context, t *testing.T, runID string) (runs.Plan, []schemas.ResultRow) {
	t.Helper()
	var plan runs.Plan
	if err := blob.GetJSON(ctx, stack.Store, runs.PlanKey(runID), &plan); err != nil {
		t.Fatal(err)
	}
	var rows []schemas.ResultRow
	for i := range plan.Shards {
		part, err := pq.ReadAll[schemas.ResultRow](ctx, stack.Store, runs.ShardKey(runID, i))
		if err != nil {
			t.Fatalf("run %s shard %d: %v", runID, i, err)
		}
		rows = append(rows, part...)
	}
	return plan, rows
}

// excerpt shortens s to n bytes for a table cell, on one line.
func excerpt(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n-3] + "..."
	}
	return s
}

// refreshDatasetBoard refreshes a board named board holding version of
// dataset alone, with models, and checks it: every cell ran or was reused,
// none failed, and the stamp's scores.json shows the dataset. It returns
// scores.json for the caller's own checks.
func refreshDatasetBoard(t *testing.T, board, dataset, version string, models ...string) string {
	t.Helper()
	res, err := refreshBoard(t, "name: "+board+"\nbenchmarks: [{dataset: "+dataset+", version: "+version+"}]\nmodels: ["+strings.Join(models, ", ")+"]\n")
	if err != nil {
		t.Fatal(err)
	}
	if res.RunsStarted+res.RunsReused != len(models) || len(res.Failed) != 0 {
		t.Fatalf("refresh: %+v", res)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	scores, err := blob.GetBytes(ctx, stack.Store, leaderboard.ScoresKey(board, res.Stamp))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(scores), `"`+dataset+`"`) {
		t.Errorf("scores.json lacks %s: %s", dataset, excerpt(string(scores), 400))
	}
	return string(scores)
}

// sameAsDirect checks that a batch run's summary says batch and that each
// of the direct run's metrics has the same mean over the same number of
// samples in it.
func sameAsDirect(t *testing.T, batch, direct aggregate.Summary) {
	t.Helper()
	if !batch.Batch {
		t.Error("the batch run's summary does not say batch")
	}
	for _, m := range direct.Metrics {
		if got := metric(batch, m.Name); got.Mean != m.Mean || got.N != m.N {
			t.Errorf("batch %s = %v over %d, direct %v over %d", m.Name, got.Mean, got.N, m.Mean, m.N)
		}
	}
}

// publishAll publishes dataset ref as a release and checks that it holds
// every one of the version's rows.
func publishAll(t *testing.T, ref string, rows int64) {
	t.Helper()
	pub, err := publishVia(t, ref, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if pub.Rows != rows {
		t.Errorf("published %d rows, want %d", pub.Rows, rows)
	}
}

// An evaluated run is one of the runs evalReferenceNoisyBatch makes.
type evaluated struct {
	Model  string
	Batch  bool
	Result workflows.EvaluateModelResult
}

// evalReferenceNoisyBatch evaluates ds three times: baseline/reference,
// the noisy baseline directly, and the noisy baseline in batch mode (with
// a shard size of its own: a run of its own, not the direct one reused).
func evalReferenceNoisyBatch(t *testing.T, ds, noisy string) []evaluated {
	t.Helper()
	out := []evaluated{{Model: "baseline/reference"}, {Model: noisy}, {Model: noisy, Batch: true}}
	for i, e := range out {
		in := runs.Request{Dataset: ds, Model: e.Model}
		if e.Batch {
			in.Batch, in.ShardSize = true, 999
		}
		res, err := evalVia(t, "", workflows.EvaluateModelInput{Request: in})
		if err != nil {
			t.Fatalf("%s (batch %v): %v", e.Model, e.Batch, err)
		}
		out[i].Result = res
	}
	return out
}

// pfBeside is a promptfoo config written beside itself as dataset build
// --task writes it (promptfoo.WriteBeside): the config as parsed, the
// task file's path and text, and the rows.
type pfBeside struct {
	cfg            *promptfoo.Config
	task           string
	taskFile, rows []byte
}

// promptfooBeside writes the promptfoo config dir/name beside itself as
// dataset build --task does.
func promptfooBeside(t *testing.T, dir, name string) pfBeside {
	t.Helper()
	file := filepath.Join(dir, name)
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := promptfoo.Parse(file, raw, promptfoo.DirReader(dir))
	if err != nil {
		t.Fatal(err)
	}
	task, err := promptfoo.WriteBeside(file, raw)
	if err != nil {
		t.Fatal(err)
	}
	b := pfBeside{cfg: cfg, task: task}
	if b.taskFile, err = os.ReadFile(task); err != nil {
		t.Fatal(err)
	}
	if b.rows, err = os.ReadFile(strings.TrimSuffix(task, ".task.yaml") + ".rows.jsonl"); err != nil {
		t.Fatal(err)
	}
	return b
}
