package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/app"
	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/internal/wfclient"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/workflows"
)

// TestBatchEvalSurvivesKillAndRestart evaluates 10,000 samples in batch
// mode through a `benchline worker` process against the baseline server's
// batch API (each batch answers after 10 s), SIGKILLs the worker while
// batches are in progress and starts another, then restarts Temporal while
// batches are still in progress. Afterwards: the server created exactly one
// batch per shard (none twice: the retried activities found their records
// and polled the same batches), every sample has exactly one row, the
// replies equal those of an interactive run of the same model on the same
// samples, and the cost is half the interactive cost. With -update its
// history is the replay test's evaluate_model_batch.json.
func TestBatchEvalSurvivesKillAndRestart(t *testing.T) {
	const n, shardSize = 10000, 1000
	bin := buildBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ds := buildSynthetic(t, n, 2601)

	srv, url := serveBaseline(ctx, t, baseline.Options{References: &app.StoreReferences{Store: stack.Store},
		Batch: baseline.BatchOptions{Delay: 10 * time.Second}})
	providers := filepath.Join(t.TempDir(), "providers.yaml")
	writeFiles(t, filepath.Dir(providers), map[string]string{"providers.yaml": fmt.Sprintf(
		"providers:\n  baseline:\n    base_url: %s\n    max_concurrency: 64\n    prices: {input_per_mtok: 1, output_per_mtok: 4}\n"+
			"    batch: {enabled: true, poll_interval: 300ms, discount: 0.5}\n", url)})
	const queue = "batch"
	env := workerEnv(queue, url, "BENCHLINE_PROVIDERS="+providers)
	worker := startProcWorker(t, bin, env, "worker", "--queues", "main")
	// The worker restarted itself with memory returned by MADV_FREE
	// (cmd/benchline/madvfree.go), keeping its process.
	waitEnviron(t, worker, "madvdontneed=0")

	cfg := stack.Stack.Config
	cfg.Temporal.TaskQueue = queue
	seed := 26
	in := workflows.EvaluateModelInput{Request: runs.Request{Dataset: ds, Model: "baseline/reference", ShardSize: shardSize, Batch: true, Seed: &seed},
		ShardHeartbeatTimeout: 5 * time.Second}
	run, plan, err := wfclient.StartEval(ctx, stack.Client, cfg, stack.Store, in)
	if err != nil {
		t.Fatal(err)
	}
	terminateOnCleanup(t, wfclient.EvalWorkflowID(plan.RunID))
	type result struct {
		res workflows.EvaluateModelResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := wfclient.WaitEval(ctx, stack.Client, run, plan.RunID, time.Hour, nil)
		done <- result{r, err}
	}()

	// SIGKILL the worker once some batches are in progress.
	pollUntil(ctx, t, "three batches created", func() bool { return srv.BatchStats().Created >= 3 })
	worker.kill()
	startProcWorker(t, bin, env, "worker", "--queues", "main")
	// Restart Temporal once every shard has its batch, before they answer.
	pollUntil(ctx, t, "a batch per shard", func() bool { return srv.BatchStats().Created >= int64(plan.Shards) })
	if p, err := wfclient.QueryProgress(ctx, stack.Client, plan.RunID); err == nil && p.Batches.Submitted == 0 && p.ShardsDone < plan.Shards {
		t.Errorf("progress %+v shows no batches while they are in progress", p)
	}
	if err := stack.Stack.RestartTemporal(ctx); err != nil {
		t.Fatal(err)
	}
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatal("the batch run did not finish")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	st := srv.BatchStats()
	if st.Created != int64(plan.Shards) || st.MaxPerKey != 1 || st.Duplicates != 0 {
		t.Fatalf("the server created %d batches for %d shards (most for one key %d): want one each, none twice", st.Created, plan.Shards, st.MaxPerKey)
	}
	if srv.BatchStats().Lines != n {
		t.Errorf("the batches answered %d lines, want %d", st.Lines, n)
	}
	checkAllExact(t, r.res, n)
	if *update {
		saveHistory(t, wfclient.EvalWorkflowID(r.res.RunID), "evaluate_model_batch.json")
	}
	if !r.res.Summary.Batch {
		t.Error("the summary does not say batch")
	}

	// The same samples interactively (another seed: another run id).
	seed2 := 27
	in.Request.Batch, in.Request.Seed = false, &seed2
	inter, err := evalVia(t, queue, in)
	if err != nil {
		t.Fatal(err)
	}
	if srv.BatchStats().Created != st.Created {
		t.Error("the interactive run created batches")
	}
	_, brows := resultRows(ctx, t, r.res.RunID)
	_, irows := resultRows(ctx, t, inter.RunID)
	replies := map[int64]string{}
	for _, row := range irows {
		replies[row.SampleIndex] = row.Response
	}
	for _, row := range brows {
		if replies[row.SampleIndex] != row.Response {
			t.Fatalf("sample %d: batch reply %q, interactive %q", row.SampleIndex, row.Response, replies[row.SampleIndex])
		}
	}
	if b, i := r.res.Summary.CostUSD, inter.Summary.CostUSD; i <= 0 || !near(2*b, i) {
		t.Errorf("batch cost $%v, interactive $%v: want half", b, i)
	}
}

// TestBatchEvalNeverCompletesAndCancel runs batch evaluations through a
// `benchline worker` process against a baseline server whose batches never
// complete. With a 2 s window and a 1 s margin the run ends on its own,
// every sample an infrastructure error (not scored) whose message says the
// batch did not complete within its window, and `runs show` reports the
// errors; each batch was cancelled at its bound. With a 1 h window, `benchline
// runs cancel` ends the run and its cleanup cancels the provider's batches.
func TestBatchEvalNeverCompletesAndCancel(t *testing.T) {
	const n, shardSize = 200, 100
	bin := buildBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	ds := buildSynthetic(t, n, 2602)
	srv, url := serveBaseline(ctx, t, baseline.Options{References: &app.StoreReferences{Store: stack.Store},
		Batch: baseline.BatchOptions{Never: 1}})
	providers := filepath.Join(t.TempDir(), "providers.yaml")
	writeFiles(t, filepath.Dir(providers), map[string]string{"providers.yaml": fmt.Sprintf(
		"providers:\n  baseline:\n    base_url: %[1]s\n    batch: {enabled: true, poll_interval: 200ms, completion_window: 2s, margin: 1s}\n"+
			"  slow:\n    base_url: %[1]s\n    batch: {enabled: true, poll_interval: 200ms, completion_window: 1h}\n", url)})
	const queue = "batch-never"
	env := workerEnv(queue, url, "BENCHLINE_PROVIDERS="+providers)
	startProcWorker(t, bin, env, "worker", "--queues", "main")
	cfg := stack.Stack.Config
	cfg.Temporal.TaskQueue = queue

	t.Run("bound", func(t *testing.T) {
		start := time.Now()
		res, err := evalVia(t, queue, workflows.EvaluateModelInput{Request: runs.Request{Dataset: ds, Model: "baseline/reference",
			ShardSize: shardSize, Batch: true}})
		if err != nil {
			t.Fatal(err)
		}
		s := res.Summary
		if s.Samples != n || s.InfraFailed != n || s.Scored != 0 || len(s.Metrics) == 0 || s.Metrics[0].N != 0 {
			t.Fatalf("summary %+v: want every sample an unscored infrastructure error", s)
		}
		_, rows := resultRows(ctx, t, res.RunID)
		for _, r := range rows {
			if !strings.Contains(r.ErrorMessage, "did not complete within its window and margin") {
				t.Fatalf("sample %s: %q: want the reason", r.SampleID, r.ErrorMessage)
			}
		}
		if st := srv.BatchStats(); st.Created != n/shardSize || st.Cancelled != n/shardSize {
			t.Fatalf("batch stats %+v: want one batch per shard, each cancelled at its bound", st)
		}
		if d := time.Since(start); d > 2*time.Minute {
			t.Errorf("the run took %s with a 3 s bound", d)
		}
		rep, code := showRun(t, bin, queue, res.RunID)
		if code != 0 || !strings.Contains(fmt.Sprint(rep), "infrastructure") {
			t.Errorf("runs show: exit %d, %v: want the infrastructure errors reported", code, rep)
		}
		if b, _ := json.Marshal(rep["batches"]); !strings.Contains(string(b), "did not complete within its window") {
			t.Errorf("runs show's batches %s do not say why", b)
		}
	})

	t.Run("runs cancel", func(t *testing.T) {
		before := srv.BatchStats()
		run, plan, err := wfclient.StartEval(ctx, stack.Client, cfg, stack.Store, workflows.EvaluateModelInput{
			Request: runs.Request{Dataset: ds, Model: "slow/reference", ShardSize: shardSize, Batch: true}})
		if err != nil {
			t.Fatal(err)
		}
		terminateOnCleanup(t, wfclient.EvalWorkflowID(plan.RunID))
		pollUntil(ctx, t, "a batch per shard", func() bool { return srv.BatchStats().Created-before.Created >= int64(plan.Shards) })
		if out, code := runsCmd(t, bin, queue, "cancel", plan.RunID); code != 0 {
			t.Fatalf("runs cancel: exit %d: %s", code, out)
		}
		if err := run.Get(ctx, nil); err == nil {
			t.Fatal("the cancelled run succeeded")
		}
		pollUntil(ctx, t, "the run's batches cancelled", func() bool {
			return srv.BatchStats().Cancelled-before.Cancelled == int64(plan.Shards)
		})
	})
}

// TestBatchEvalExpiredAndFailedLines runs batch evaluations through a
// `benchline worker` process against two baseline servers: one whose
// batches all expire, one that fails a quarter of the lines (a 500 in the
// error file, the same lines again when retried). Each run ends within
// seconds. By the default setting (one retry batch, then an
// infrastructure error): every sample of the expired run, and exactly the
// failed lines' samples of the other, are unscored infrastructure errors
// whose messages say why, each shard made two batches (the batch and its
// retry), and `runs show` reports the errors and the batches. With
// `fallback: interactive` the expired requests are called instead and
// every sample is scored.
func TestBatchEvalExpiredAndFailedLines(t *testing.T) {
	const n, shardSize = 200, 100
	bin := buildBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	ds := buildSynthetic(t, n, 2603)
	// The model is baseline's echo: it needs no reference answers.
	expiring, expURL := serveBaseline(ctx, t, baseline.Options{Batch: baseline.BatchOptions{Delay: 300 * time.Millisecond, Expire: 1}})
	failing, failURL := serveBaseline(ctx, t, baseline.Options{Batch: baseline.BatchOptions{Delay: 300 * time.Millisecond, FailLines: 0.25}})
	providers := filepath.Join(t.TempDir(), "providers.yaml")
	writeFiles(t, filepath.Dir(providers), map[string]string{"providers.yaml": fmt.Sprintf("providers:\n"+
		"  expiring:\n    base_url: %[1]s\n    batch: {enabled: true, poll_interval: 200ms}\n"+
		"  expiring-fallback:\n    base_url: %[1]s\n    batch: {enabled: true, poll_interval: 200ms, fallback: interactive}\n"+
		"  failing:\n    base_url: %[2]s\n    batch: {enabled: true, poll_interval: 200ms}\n", expURL, failURL)})
	const queue = "batch-failures"
	startProcWorker(t, bin, workerEnv(queue, expURL, "BENCHLINE_PROVIDERS="+providers), "worker", "--queues", "main")
	shards := int64(n / shardSize)

	// eval runs model in batch mode, checks it ended within its bound and
	// made two batches per shard at srv, and returns its summary and rows.
	eval := func(t *testing.T, srv *baseline.Server, model string) (workflows.EvaluateModelResult, []schemas.ResultRow) {
		t.Helper()
		before, start := srv.BatchStats(), time.Now()
		res, err := evalVia(t, queue, workflows.EvaluateModelInput{Request: runs.Request{Dataset: ds, Model: model,
			ShardSize: shardSize, Batch: true}})
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > 2*time.Minute {
			t.Errorf("the run took %s with 300 ms batches", d)
		}
		if st := srv.BatchStats(); st.Created-before.Created != 2*shards || st.Cancelled != before.Cancelled {
			t.Errorf("batch stats %+v (before %+v): want two batches per shard (the batch and its retry), none cancelled", st, before)
		}
		_, rows := resultRows(ctx, t, res.RunID)
		if len(rows) != n {
			t.Fatalf("%d rows, want %d", len(rows), n)
		}
		return res, rows
	}
	// shown checks that `runs show` reports the infrastructure errors and
	// says why.
	shown := func(t *testing.T, runID string, infra int64, why string) {
		t.Helper()
		rep, code := showRun(t, bin, queue, runID)
		sum, _ := rep["summary"].(map[string]any)
		if code != 0 || sum == nil || sum["infra_failed"] != float64(infra) {
			t.Errorf("runs show: exit %d, %v: want %d infrastructure failures", code, rep, infra)
		}
		if b, _ := json.Marshal(rep["batches"]); !strings.Contains(string(b), why) {
			t.Errorf("runs show's batches %s do not say %q", b, why)
		}
		if out, _ := runsCmd(t, bin, queue, "show", runID); !strings.Contains(string(out), why) {
			t.Errorf("runs show does not say %q:\n%s", why, out)
		} else {
			t.Logf("runs show %s:\n%s", runID, out)
		}
	}

	t.Run("expired", func(t *testing.T) {
		res, rows := eval(t, expiring, "expiring/echo")
		if s := res.Summary; s.InfraFailed != n || s.Scored != 0 {
			t.Fatalf("summary %+v: want every sample an unscored infrastructure error", s)
		}
		for _, r := range rows {
			if r.ErrorClass != schemas.ErrorClassInfrastructure || len(r.Metrics) != 0 || !strings.Contains(r.ErrorMessage, "expired") {
				t.Fatalf("sample %s: %s %q: want an unscored infrastructure error saying the batch expired", r.SampleID, r.ErrorClass, r.ErrorMessage)
			}
		}
		shown(t, res.RunID, n, "expired")
	})

	t.Run("failed lines", func(t *testing.T) {
		res, rows := eval(t, failing, "failing/echo")
		var infra int64
		for _, r := range rows {
			switch {
			case r.ErrorClass == schemas.ErrorClassInfrastructure:
				infra++
				if len(r.Metrics) != 0 || !strings.Contains(r.ErrorMessage, "injected failed line") {
					t.Fatalf("sample %s: %q: want an unscored infrastructure error naming the failed line", r.SampleID, r.ErrorMessage)
				}
			case r.ErrorClass != "" || len(r.Metrics) == 0 || r.Response == "":
				t.Fatalf("sample %s: %s %v: want a scored answer", r.SampleID, r.ErrorClass, r.Metrics)
			}
		}
		// A quarter of the lines, drawn by their custom_id.
		if s := res.Summary; infra < n/10 || infra > n/2 || s.InfraFailed != infra || s.Scored != n-infra {
			t.Fatalf("summary %+v, %d failed lines: want about a quarter of the samples infrastructure errors, the rest scored", s, infra)
		}
		shown(t, res.RunID, infra, "injected failed line")
	})

	t.Run("expired, fallback interactive", func(t *testing.T) {
		calls := expiring.Stats().Requests
		res, _ := eval(t, expiring, "expiring-fallback/echo")
		if s := res.Summary; s.Scored != n || s.InfraFailed != 0 {
			t.Errorf("summary %+v: want every sample scored", s)
		}
		if got := expiring.Stats().Requests - calls; got != n {
			t.Errorf("%d interactive calls, want %d (every expired request once)", got, n)
		}
	})
}

// waitEnviron waits for worker w's GODEBUG to hold setting. The worker
// sets it by re-executing itself at start (cmd/benchline/madvfree.go).
// While it does, reading its environment fails with ESRCH although it is
// alive: the exec comes from one of its threads, not the main one, and
// until the kernel has ended the others, the pid names the old main thread,
// already exited and without memory (measured: 40 starts of the worker
// polled without pause gave 6,435 such reads; the window grows with the
// machine's load). So a read error is asked again, and only the worker's
// own end fails the test, with its exit status. The bound only keeps a
// broken worker from hanging the test.
func waitEnviron(t *testing.T, w *procWorker, setting string) {
	t.Helper()
	var last string
	var readErr error
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", w.Pid()))
		if w.Exited() {
			// Whatever was read may be another process's by now.
			t.Fatalf("worker %d ended before its GODEBUG held %s: %v", w.Pid(), setting, w.Wait())
		}
		if err != nil {
			readErr = err
			continue
		}
		for kv := range strings.SplitSeq(string(b), "\x00") {
			if v, ok := strings.CutPrefix(kv, "GODEBUG="); ok {
				last = v
				if slices.Contains(strings.Split(v, ","), setting) {
					return
				}
			}
		}
	}
	t.Fatalf("process %d: GODEBUG %q after 2 minutes (last read error: %v), want it to hold %s", w.Pid(), last, readErr, setting)
}
