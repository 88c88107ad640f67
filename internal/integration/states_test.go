package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/wfclient"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"

	"github.com/benchline/benchline/internal/app"
	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/workflows"
)

// runsCmd runs `benchline runs ARGS --json` against the test stack and
// returns its stdout and exit code.
func runsCmd(t *testing.T, bin, queue string, args ...string) ([]byte, int) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"runs"}, args...)...)
	cmd.Env = workerEnv(queue, stack.BaselineURL)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("runs %v: %v", args, err)
	}
	t.Logf("benchline runs %s: exit %d, stderr %q", strings.Join(args, " "), cmd.ProcessState.ExitCode(), stderr.String())
	return out, cmd.ProcessState.ExitCode()
}

// showRun is `benchline runs show RUN-ID --json`, decoded.
func showRun(t *testing.T, bin, queue, runID string) (map[string]any, int) {
	t.Helper()
	out, code := runsCmd(t, bin, queue, "show", runID, "--json")
	var rep map[string]any
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("runs show --json: %v: %s", err, out)
	}
	return rep, code
}

// TestRunStatesCancelAndProgress is issue #11's "failed and cancelled runs
// look alive" on the real stack, with a `benchline worker` process calling
// a baseline server slowed to 40 ms a call:
//   - a run whose model's provider does not exist fails, and `runs show`
//     says failed with the gateway's message and exits 2;
//   - the progress of a run moves within its first shard (heartbeat
//     details read from the pending activities), before any shard ends;
//   - `runs cancel` (CancelWorkflow) mid-shard: the shard stops within about
//     a heartbeat (the figure is logged), the workflow deletes the run's
//     checkpoints and ends cancelled, `runs show` exits 3;
//   - the same plan started again resumes: the finished shard's result file
//     is not rewritten, and every sample has one row.
func TestRunStatesCancelAndProgress(t *testing.T) {
	bin := buildBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	srv, url := serveBaseline(ctx, t, baseline.Options{References: &app.StoreReferences{Store: stack.Store},
		Faults: baseline.Faults{Latency: 40 * time.Millisecond}})
	const queue = "states"
	startProcWorker(t, bin, workerEnv(queue, url), "worker", "--queues", "main", "--sample-concurrency", "2", "--checkpoint-interval", "1ms")
	cfg := stack.Stack.Config
	cfg.Temporal.TaskQueue = queue
	const n, shard = 600, 300
	ds := buildSynthetic(t, n, 7311)

	// A run that fails: a provider nobody configured (the CLI's eval would
	// refuse it before starting; a worker configured apart may not).
	bad := workflows.EvaluateModelInput{Request: runs.Request{Dataset: ds, Model: "nosuch/model-x", Limit: 10}}
	run, plan, err := wfclient.StartEval(ctx, stack.Client, cfg, stack.Store, bad)
	if err != nil {
		t.Fatal(err)
	}
	terminateOnCleanup(t, wfclient.EvalWorkflowID(plan.RunID))
	if err := run.Get(ctx, nil); err == nil {
		t.Fatal("a run with an unknown provider succeeded")
	}
	rep, code := showRun(t, bin, queue, plan.RunID)
	if rep["state"] != "failed" || !strings.Contains(rep["reason"].(string), `unknown provider "nosuch"`) || code != 2 {
		t.Errorf("runs show of the failed run: %v, exit %d; want state failed, the unknown provider, exit 2", rep, code)
	}
	if _, ok := rep["progress"]; ok {
		t.Errorf("runs show of a failed run reports progress: %v", rep)
	}
	failedID := plan.RunID

	// A run of 2 shards, one at a time, one per activity (ShardTarget -1:
	// other tests' runs of the model on synthetic datasets leave a time
	// per shard that would otherwise group both shards in one activity).
	in := workflows.EvaluateModelInput{Request: runs.Request{Dataset: ds, Model: "baseline/reference", ShardSize: shard},
		MaxConcurrentShards: 1, ShardHeartbeatTimeout: 10 * time.Second, ShardTarget: -1}
	run, plan, err = wfclient.StartEval(ctx, stack.Client, cfg, stack.Store, in)
	if err != nil {
		t.Fatal(err)
	}
	terminateOnCleanup(t, wfclient.EvalWorkflowID(plan.RunID))
	id := plan.RunID
	var firstShardProgress, secondShardProgress workflows.Progress
	for secondShardProgress.SamplesDone == 0 {
		if ctx.Err() != nil {
			t.Fatal("the run did not reach its second shard")
		}
		time.Sleep(200 * time.Millisecond)
		p, err := wfclient.QueryProgress(ctx, stack.Client, id)
		if err != nil {
			continue
		}
		switch {
		case p.ShardsDone == 0 && p.SamplesDone > 0 && firstShardProgress.SamplesDone == 0:
			firstShardProgress = p
		case p.ShardsDone == 1 && p.SamplesDone >= shard+100:
			// A checkpoint of shard 1 is written after its first chunk.
			if left, _ := stack.Store.List(ctx, runs.PartialPrefix(id)); len(left) > 0 {
				secondShardProgress = p
			}
		}
	}
	t.Logf("progress within the first shard: %d/%d samples, %d running", firstShardProgress.SamplesDone, firstShardProgress.Samples, firstShardProgress.ShardsRunning)
	if firstShardProgress.SamplesDone == 0 || firstShardProgress.ShardsRunning != 1 {
		t.Errorf("the progress did not move within the first shard: %+v", firstShardProgress)
	}
	rep, code = showRun(t, bin, queue, id)
	if rep["state"] != "running" || rep["progress"] == nil || code != 0 {
		t.Errorf("runs show of the running run: %v, exit %d", rep, code)
	}
	shard0, err := stack.Store.Head(ctx, runs.ShardKey(id, 0))
	if err != nil {
		t.Fatal(err)
	}

	// Cancel, and watch what is written under the run's keys from then on.
	requestsAtCancel := srv.Stats().Requests
	cancelledAt := time.Now()
	if out, code := runsCmd(t, bin, queue, "cancel", id); code != 0 {
		t.Fatalf("runs cancel: exit %d: %s", code, out)
	}
	seen := map[string]string{}
	snapshot := func() (changed bool) {
		for _, prefix := range []string{runs.Dir(id), "cache/" + id + "/"} {
			infos, err := stack.Store.List(ctx, prefix)
			if err != nil {
				t.Fatal(err)
			}
			for _, in := range infos {
				if seen[in.Key] != in.ETag {
					seen[in.Key], changed = in.ETag, true
				}
			}
		}
		return changed
	}
	snapshot()
	lastWrite, lastRequest := time.Duration(0), time.Duration(0)
	requests := srv.Stats().Requests
	done := make(chan error, 1)
	go func() { done <- run.Get(ctx, nil) }()
	var runErr error
	var closedAt time.Time
	for watching := true; watching; {
		time.Sleep(50 * time.Millisecond)
		if snapshot() {
			lastWrite = time.Since(cancelledAt)
		}
		if r := srv.Stats().Requests; r != requests {
			requests, lastRequest = r, time.Since(cancelledAt)
		}
		select {
		case runErr = <-done:
			closedAt = time.Now()
			done = nil
		default:
		}
		// Keep watching 3 s past the workflow's end for late writers.
		watching = closedAt.IsZero() || time.Since(closedAt) < 3*time.Second
	}
	t.Logf("after cancel: last write under the run's keys %v later, last model request %v later (%d requests after the cancel)",
		lastWrite.Round(10*time.Millisecond), lastRequest.Round(10*time.Millisecond), requests-requestsAtCancel)
	var canceled *temporal.CanceledError
	if !errors.As(runErr, &canceled) {
		t.Fatalf("the cancelled run ended with %v", runErr)
	}
	d, err := stack.Client.DescribeWorkflowExecution(ctx, wfclient.EvalWorkflowID(id), "")
	if err != nil {
		t.Fatal(err)
	}
	if s := d.GetWorkflowExecutionInfo().GetStatus(); s != enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED {
		t.Errorf("workflow status %v, want cancelled", s)
	}
	if left, err := stack.Store.List(ctx, runs.PartialPrefix(id)); err != nil || len(left) != 0 {
		t.Errorf("checkpoints left after the cancelled run ended: %d (%v)", len(left), err)
	}
	// The workflow waited for the shard to stop before it cleaned up: in its
	// history the shard's cancellation comes before CleanupRun is scheduled.
	shardStopped, cleanupAt := -1, -1
	it := stack.Client.GetWorkflowHistory(ctx, wfclient.EvalWorkflowID(id), d.GetWorkflowExecutionInfo().GetExecution().GetRunId(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for i := 0; it.HasNext(); i++ {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.GetActivityTaskCanceledEventAttributes() != nil && shardStopped < 0 {
			shardStopped = i
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "CleanupRun" {
			cleanupAt = i
		}
	}
	if shardStopped < 0 || cleanupAt < shardStopped {
		t.Errorf("history: shard cancelled at event %d, CleanupRun scheduled at %d; want the shard stopped first", shardStopped, cleanupAt)
	}
	if ok, err := blob.Exists(ctx, stack.Store, runs.ShardKey(id, 1)); err != nil || ok {
		t.Errorf("the cancelled shard's result file exists (%v): it did not stop", err)
	}
	rep, code = showRun(t, bin, queue, id)
	if rep["state"] != "cancelled" || rep["checkpoints"] != float64(0) || rep["progress"] != nil || code != 3 {
		t.Errorf("runs show of the cancelled run: %v, exit %d; want cancelled, 0 checkpoints, no progress, exit 3", rep, code)
	}
	if *update {
		saveHistory(t, wfclient.EvalWorkflowID(id), "evaluate_model_cancelled.json")
	}
	out, code := runsCmd(t, bin, queue, "ls", "--json")
	var list []map[string]any
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatalf("runs ls --json: %v: %s", err, out)
	}
	states := map[string]any{}
	for _, l := range list {
		states[l["run_id"].(string)] = l["state"]
	}
	if states[failedID] != "failed" || states[id] != "cancelled" || code != 2 {
		t.Errorf("runs ls: %v for the failed and cancelled runs, exit %d; want failed, cancelled, exit 2", states, code)
	}

	// The same plan again resumes: shard 0 is kept, shard 1 is done.
	run, plan, err = wfclient.StartEval(ctx, stack.Client, cfg, stack.Store, in)
	if err != nil {
		t.Fatal(err)
	}
	if plan.RunID != id {
		t.Fatalf("restart: run %s, first %s", plan.RunID, id)
	}
	res, err := wfclient.WaitEval(ctx, stack.Client, run, id, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.Samples != n {
		t.Errorf("restarted run: %d samples, want %d", res.Summary.Samples, n)
	}
	again, err := stack.Store.Head(ctx, runs.ShardKey(id, 0))
	if err != nil || again.ETag != shard0.ETag {
		t.Errorf("the finished shard's result was rewritten by the restart (%v)", err)
	}
	checkExactlyOnce(t, id, n)
	if *update {
		saveHistory(t, wfclient.EvalWorkflowID(id), "evaluate_model_resumed.json")
	}
	if rep, code := showRun(t, bin, queue, id); rep["state"] != "completed" || rep["summary"] == nil || code != 0 {
		t.Errorf("runs show of the completed run: state %v, exit %d", rep["state"], code)
	}
	if left, err := stack.Store.List(ctx, runs.PartialPrefix(id)); err != nil || len(left) != 0 {
		t.Errorf("checkpoints left after the run finished: %d (%v)", len(left), err)
	}

	// A terminated run (no workflow code runs) says so, with the reason.
	in.Request.Limit = 200
	_, plan, err = wfclient.StartEval(ctx, stack.Client, cfg, stack.Store, in)
	if err != nil {
		t.Fatal(err)
	}
	pollUntil(ctx, t, "the run to plan", func() bool {
		ok, _ := blob.Exists(ctx, stack.Store, runs.PlanKey(plan.RunID))
		return ok
	})
	if err := stack.Client.TerminateWorkflow(ctx, wfclient.EvalWorkflowID(plan.RunID), "", "stopped by the states test"); err != nil {
		t.Fatal(err)
	}
	rep, code = showRun(t, bin, queue, plan.RunID)
	if rep["state"] != "terminated" || !strings.Contains(fmt.Sprint(rep["reason"]), "stopped by the states test") || code != 2 {
		t.Errorf("runs show of the terminated run: %v, exit %d; want terminated with its reason, exit 2", rep, code)
	}
}
