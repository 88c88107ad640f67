package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/wfclient"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/bfcl"
	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/registry"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/workflows"
)

// boardCLI runs `benchline leaderboard ARGS...` against the test stack and
// returns its stdout, stderr and error.
func boardCLI(t *testing.T, bin string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"leaderboard"}, args...)...)
	cmd.Env = workerEnv(stack.Stack.Config.Temporal.TaskQueue, stack.BaselineURL)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

func writeBoard(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "board.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func latestStamp(t *testing.T, board string) string {
	t.Helper()
	b, err := blob.GetBytes(context.Background(), stack.Store, leaderboard.LatestKey(board))
	if err != nil {
		t.Fatalf("latest of board %s: %v", board, err)
	}
	return string(b)
}

// TestLeaderboardRefreshTwice refreshes a two-benchmark, two-baseline board
// with the CLI: the first refresh starts four runs and pays for calls, the
// second starts none, pays nothing, writes a new stamp and moves latest.
func TestLeaderboardRefreshTwice(t *testing.T) {
	bin := buildBinary(t)
	if _, err := buildVia(t, bfcl.Name, datasets.Request{Source: bfcl.Embedded}); err != nil {
		t.Fatal(err)
	}
	syn := buildSynthetic(t, 60, 11)
	_, synVersion, _ := strings.Cut(syn, "@")
	// A seed no other test uses, so that every run is new to this stack.
	path := writeBoard(t, fmt.Sprintf(`name: it-twice
title: two benchmarks, two baselines
benchmarks:
  - dataset: bfcl
  - dataset: synthetic
    version: %s
models:
  - baseline/reference
  - model: baseline/noisy-0.5
    display_name: Noisy half
settings:
  seed: 9101
  shard_size: 20
`, synVersion))

	type report struct {
		Board       string               `json:"board"`
		Stamp       string               `json:"stamp"`
		RunsStarted int                  `json:"runs_started"`
		RunsReused  int                  `json:"runs_reused"`
		ModelCalls  int64                `json:"model_calls"`
		Changes     []leaderboard.Change `json:"changes"`
		Summary     string               `json:"changes_summary"`
		Site        string               `json:"site"`
	}
	refresh := func() report {
		out, errs, err := boardCLI(t, bin, "refresh", path, "--json")
		if err != nil {
			t.Fatalf("refresh: %v\n%s", err, errs)
		}
		var r report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("refresh printed %q: %v", out, err)
		}
		return r
	}
	first := refresh()
	t.Logf("first: %+v", first)
	if first.Board != "it-twice" || first.RunsStarted != 4 || first.RunsReused != 0 || first.ModelCalls == 0 {
		t.Fatalf("first refresh: %+v; want 4 runs started and calls paid", first)
	}
	if latestStamp(t, "it-twice") != first.Stamp {
		t.Fatalf("latest is %s after the first refresh (stamp %s)", latestStamp(t, "it-twice"), first.Stamp)
	}
	if *update {
		saveHistory(t, wfclient.RefreshWorkflowID("it-twice"), "refresh_leaderboard.json")
	}
	checkStamp(t, first.Stamp)

	second := refresh()
	t.Logf("second: %+v", second)
	if second.RunsStarted != 0 || second.ModelCalls != 0 || second.RunsReused != 4 {
		t.Fatalf("second refresh: %+v; want nothing started and no call", second)
	}
	if first.Summary != "2 new models in 4 cells (first stamp)" || second.Summary != "no change since "+first.Stamp ||
		len(first.Changes) != 4 || first.Changes[0].Kind != leaderboard.KindNewModel || second.Changes == nil || len(second.Changes) != 0 {
		t.Errorf("changes: first %q %+v, second %q %+v; want every cell new, then no change", first.Summary, first.Changes, second.Summary, second.Changes)
	}
	if second.Stamp == first.Stamp || second.Stamp < first.Stamp {
		t.Fatalf("second stamp %s, first %s: want a later one", second.Stamp, first.Stamp)
	}
	if latestStamp(t, "it-twice") != second.Stamp {
		t.Fatalf("latest did not move to %s", second.Stamp)
	}
	want := "s3://" + stack.Stack.Config.S3.Bucket + "/" + leaderboard.SiteKey("it-twice", second.Stamp) + "/"
	if second.Site != want {
		t.Errorf("site %q, want %q", second.Site, want)
	}
	s := checkStamp(t, second.Stamp)
	for _, r := range s.Runs {
		if !r.Reused {
			t.Errorf("run %s not marked reused in the second stamp", r.RunID)
		}
	}
	// The human form says the same.
	out, errs, err := boardCLI(t, bin, "refresh", path)
	if err != nil || !strings.Contains(out, "0 runs started, 4 reused, 0 model calls paid") {
		t.Fatalf("refresh without --json: %v\n%s%s", err, out, errs)
	}

	// The schedule commands, through the CLI: create, the same again
	// (updated in place), list, pause, delete; an unknown board is named.
	t.Cleanup(func() {
		_ = stack.Client.ScheduleClient().GetHandle(context.Background(), wfclient.ScheduleID("it-twice")).Delete(context.Background())
	})
	for _, step := range []struct {
		args []string
		want string
	}{
		{[]string{"schedule", "it-twice", "--cron", "0 3 * * *", "--file", path}, "created schedule leaderboard-it-twice"},
		{[]string{"schedule", "it-twice", "--cron", "30 4 * * 1-5", "--file", path}, "updated schedule leaderboard-it-twice"},
		{[]string{"schedule", "list"}, "30 4 * * 1-5"},
		{[]string{"schedule", "pause", "it-twice"}, "pause done"},
		{[]string{"schedule", "unpause", "it-twice"}, "unpause done"},
		{[]string{"schedule", "delete", "it-twice"}, "delete done"},
	} {
		out, errs, err := boardCLI(t, bin, step.args...)
		// list reads Temporal's visibility store, which may take a moment
		// to see a new schedule (longer on a loaded machine): ask again,
		// for at most a minute.
		for end := time.Now().Add(time.Minute); step.args[1] == "list" && err == nil && !strings.Contains(out, step.want) && time.Now().Before(end); {
			time.Sleep(500 * time.Millisecond)
			out, errs, err = boardCLI(t, bin, step.args...)
		}
		if err != nil || !strings.Contains(out, step.want) {
			t.Fatalf("leaderboard %s: %v\nstdout %s\nstderr %s\nwant %q", strings.Join(step.args, " "), err, out, errs, step.want)
		}
	}
	if _, errs, err := boardCLI(t, bin, "schedule", "trigger", "it-nosuch"); err == nil || !strings.Contains(errs, "board it-nosuch has no schedule") {
		t.Fatalf("trigger of a board without a schedule: %v %s", err, errs)
	}
}

// checkStamp reads a stamp of it-twice and checks its four cells in
// scores.json and scores.parquet, and that the site exists.
func checkStamp(t *testing.T, stamp string) leaderboard.Scores {
	t.Helper()
	ctx := context.Background()
	var s leaderboard.Scores
	if err := blob.GetJSON(ctx, stack.Store, leaderboard.ScoresKey("it-twice", stamp), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Cells) != 4 || len(s.Runs) != 4 || len(s.Benchmarks) != 2 || len(s.Failed) != 0 {
		t.Fatalf("scores.json: %d cells, %d runs, %d benchmarks, failed %v", len(s.Cells), len(s.Runs), len(s.Benchmarks), s.Failed)
	}
	for _, c := range s.Cells {
		if c.Model == "baseline/reference" && c.Mean != 1 {
			t.Errorf("reference on %s: mean %v, want 1", c.Dataset, c.Mean)
		}
		if c.N == 0 || c.RunID == "" || c.RankLow == 0 {
			t.Errorf("cell %+v", c)
		}
	}
	if !s.Models[0].Baseline || !s.Models[1].Baseline || s.Models[1].DisplayName != "Noisy half" {
		t.Errorf("models: %+v", s.Models)
	}
	rows, err := pq.ReadAll[schemas.ScoreRow](ctx, stack.Store, leaderboard.Prefix("it-twice", stamp)+"/scores.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || rows[0].Stamp != stamp || rows[0].Mean != s.Cells[0].Mean {
		t.Fatalf("scores.parquet: %+v", rows)
	}
	if ok, err := blob.Exists(ctx, stack.Store, leaderboard.SiteKey("it-twice", stamp)+"/index.html"); err != nil || !ok {
		t.Fatalf("no site index: %v", err)
	}
	return s
}

// TestLeaderboardUnknownProvider: a board naming a provider nobody
// configured fails before anything starts, naming the file, key and
// provider.
func TestLeaderboardUnknownProvider(t *testing.T) {
	bin := buildBinary(t)
	path := writeBoard(t, "name: it-badprov\nbenchmarks: [{dataset: bfcl}]\nmodels: [baseline/reference, nosuch/model-x]\n")
	_, errs, err := boardCLI(t, bin, "refresh", path, "--json")
	if err == nil {
		t.Fatal("refresh of a board with an unknown provider succeeded")
	}
	for _, want := range []string{path, "models[1]", `unknown provider "nosuch"`} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr %q does not name %s", errs, want)
		}
	}
	ctx := context.Background()
	if _, err := stack.Client.DescribeWorkflowExecution(ctx, wfclient.RefreshWorkflowID("it-badprov"), ""); err == nil {
		t.Error("a refresh workflow was started")
	}
	if ok, _ := blob.Exists(ctx, stack.Store, leaderboard.LatestKey("it-badprov")); ok {
		t.Error("the board has a latest pointer")
	}
}

// refreshBoard refreshes a board given as YAML through internal/app (no
// provider check: the runs themselves must fail).
func refreshBoard(t *testing.T, text string) (workflows.RefreshLeaderboardResult, error) {
	t.Helper()
	b, err := leaderboard.ParseBoard("board.yaml", []byte(text), registry.Default())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	run, err := wfclient.StartRefresh(ctx, stack.Client, stack.Stack.Config, workflows.RefreshLeaderboardInput{Board: b})
	if err != nil {
		t.Fatal(err)
	}
	return wfclient.WaitRefresh(ctx, run)
}

// TestLeaderboardFailedCells: a run that fails (a baseline model the
// server does not have) is a failed cell of a stamp that is still
// written; when every cell fails, nothing is written and latest stays.
func TestLeaderboardFailedCells(t *testing.T) {
	if _, err := buildVia(t, bfcl.Name, datasets.Request{Source: bfcl.Embedded}); err != nil {
		t.Fatal(err)
	}
	res, err := refreshBoard(t, "name: it-failed\nbenchmarks: [{dataset: bfcl}]\nmodels: [baseline/reference, baseline/no-such-model]\nsettings: {seed: 9102, limit: 5}\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failed) != 1 || res.Failed[0].Model != "baseline/no-such-model" || !strings.Contains(res.Failed[0].Error, "no-such-model") {
		t.Fatalf("failed cells: %+v", res.Failed)
	}
	good := latestStamp(t, "it-failed")
	if good != res.Stamp {
		t.Fatalf("latest %s, stamp %s", good, res.Stamp)
	}
	var s leaderboard.Scores
	if err := blob.GetJSON(context.Background(), stack.Store, leaderboard.ScoresKey("it-failed", good), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Cells) != 1 || len(s.Failed) != 1 {
		t.Fatalf("stamp: cells %+v, failed %+v", s.Cells, s.Failed)
	}

	time.Sleep(1100 * time.Millisecond) // a later stamp
	_, err = refreshBoard(t, "name: it-failed\nbenchmarks: [{dataset: bfcl}]\nmodels: [baseline/no-such-model]\nsettings: {seed: 9102, limit: 5}\n")
	if err == nil || !strings.Contains(err.Error(), "every cell failed") || !strings.Contains(err.Error(), "baseline/no-such-model on bfcl") {
		t.Fatalf("all cells failed: err = %v", err)
	}
	if got := latestStamp(t, "it-failed"); got != good {
		t.Fatalf("latest moved from %s to %s after a refresh where every cell failed", good, got)
	}
}

// TestLeaderboardSchedule creates a schedule on the real dev server,
// triggers it twice (waiting for each refresh), and finds the second
// refresh started no run and made no model call.
func TestLeaderboardSchedule(t *testing.T) {
	if _, err := buildVia(t, bfcl.Name, datasets.Request{Source: bfcl.Embedded}); err != nil {
		t.Fatal(err)
	}
	b, err := leaderboard.ParseBoard("board.yaml", []byte("name: it-sched\nbenchmarks: [{dataset: bfcl}]\nmodels: [baseline/reference, baseline/noisy-0.2]\nsettings: {seed: 9103, limit: 8}\n"), registry.Default())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cfg := stack.Stack.Config
	// Once a year: only triggers run it during the test.
	created, err := wfclient.UpsertSchedule(ctx, stack.Client, cfg, b, "0 0 1 1 *")
	if err != nil || !created {
		t.Fatalf("create: created=%v err=%v", created, err)
	}
	t.Cleanup(func() {
		_ = stack.Client.ScheduleClient().GetHandle(context.Background(), wfclient.ScheduleID("it-sched")).Delete(context.Background())
	})
	// Idempotent: the same again updates it in place.
	if created, err := wfclient.UpsertSchedule(ctx, stack.Client, cfg, b, "0 0 1 1 *"); err != nil || created {
		t.Fatalf("upsert again: created=%v err=%v", created, err)
	}
	list, err := wfclient.ListSchedules(ctx, stack.Client)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range list {
		found = found || s.Board == "it-sched"
	}
	if !found {
		t.Fatalf("list: %+v", list)
	}

	h, _, err := wfclient.ScheduleHandle(ctx, stack.Client, "it-sched")
	if err != nil {
		t.Fatal(err)
	}
	trigger := func(n int) workflows.RefreshLeaderboardResult { return triggerRefresh(ctx, t, h, n) }
	first := trigger(1)
	if first.RunsStarted != 2 || first.ModelCalls == 0 {
		t.Fatalf("first scheduled refresh: %+v", first)
	}
	second := trigger(2)
	if second.RunsStarted != 0 || second.ModelCalls != 0 || second.RunsReused != 2 {
		t.Fatalf("second scheduled refresh: %+v; want no run started and no model call", second)
	}
	if latestStamp(t, "it-sched") != second.Stamp {
		t.Fatalf("latest is not the second refresh's stamp %s", second.Stamp)
	}
	// Pause and unpause answer; a board without a schedule is named.
	if err := h.Pause(ctx, client.SchedulePauseOptions{}); err != nil {
		t.Fatal(err)
	}
	if d, err := h.Describe(ctx); err != nil || !d.Schedule.State.Paused {
		t.Fatalf("not paused: %v", err)
	}
	if _, _, err := wfclient.ScheduleHandle(ctx, stack.Client, "it-nosuch"); err == nil || !strings.Contains(err.Error(), "it-nosuch") {
		t.Fatalf("unknown board's schedule: %v", err)
	}
}

// triggerRefresh triggers a board's schedule for the n-th time and waits
// for that refresh's result.
func triggerRefresh(ctx context.Context, t *testing.T, h client.ScheduleHandle, n int) workflows.RefreshLeaderboardResult {
	t.Helper()
	if err := h.Trigger(ctx, client.ScheduleTriggerOptions{}); err != nil {
		t.Fatal(err)
	}
	var wf string
	poll(t, fmt.Sprintf("refresh %d of the schedule", n), 2*time.Minute, nil, func() bool {
		d, err := h.Describe(ctx)
		if err != nil || len(d.Info.RecentActions) < n {
			return false
		}
		wf = d.Info.RecentActions[n-1].StartWorkflowResult.WorkflowID
		return true
	})
	var res workflows.RefreshLeaderboardResult
	if err := stack.Client.GetWorkflow(ctx, wf, "").Get(ctx, &res); err != nil {
		t.Fatalf("refresh %d (%s): %v", n, wf, wfclient.Cause(err))
	}
	return res
}

// TestLeaderboardScheduleBatch: a board in batch mode (settings.batch)
// refreshed by its Temporal Schedule runs its cells in batch mode (their
// summaries say so; their calls went through the baseline server's batch
// endpoints and count as paid), and a second refresh makes no call.
func TestLeaderboardScheduleBatch(t *testing.T) {
	built, err := buildVia(t, bfcl.Name, datasets.Request{Source: bfcl.Embedded})
	if err != nil {
		t.Fatal(err)
	}
	b, err := leaderboard.ParseBoard("board.yaml", []byte("name: it-batch\nbenchmarks: [{dataset: bfcl, version: "+built.Version+
		"}]\nmodels: [baseline/reference, baseline/noisy-0.2]\nsettings: {seed: 9126, limit: 8, batch: true}\n"), registry.Default())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if _, err := wfclient.UpsertSchedule(ctx, stack.Client, stack.Stack.Config, b, "0 0 1 1 *"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = stack.Client.ScheduleClient().GetHandle(context.Background(), wfclient.ScheduleID("it-batch")).Delete(context.Background())
	})
	h, _, err := wfclient.ScheduleHandle(ctx, stack.Client, "it-batch")
	if err != nil {
		t.Fatal(err)
	}
	first := triggerRefresh(ctx, t, h, 1)
	if first.RunsStarted != 2 || first.ModelCalls == 0 {
		t.Fatalf("first scheduled refresh: %+v; want 2 runs and calls paid (through batches)", first)
	}
	var calls int64
	for _, m := range b.Models {
		seed := 9126
		plan, err := wfclient.ResolveRun(ctx, stack.Store, registry.Default(),
			runs.Request{Dataset: "bfcl@" + built.Version, Model: m.Model, Seed: &seed, Limit: 8, Batch: true})
		if err != nil {
			t.Fatal(err)
		}
		var sum aggregate.Summary
		if err := blob.GetJSON(ctx, stack.Store, runs.SummaryKey(plan.RunID), &sum); err != nil || !sum.Batch || sum.CacheHits != 0 || sum.Samples != 8 {
			t.Fatalf("%s: summary %+v (%v): want a batch run of 8 samples whose calls were paid", m.Model, sum, err)
		}
		calls += sum.Calls
	}
	if calls != first.ModelCalls {
		t.Fatalf("the runs made %d calls, the refresh counted %d paid", calls, first.ModelCalls)
	}
	second := triggerRefresh(ctx, t, h, 2)
	if second.RunsStarted != 0 || second.ModelCalls != 0 || second.RunsReused != 2 {
		t.Fatalf("second scheduled refresh: %+v; want no run started and no model call", second)
	}
}

// TestLeaderboardAttachesToARunningEval: a board cell whose run an
// on-demand `eval` is evaluating is waited for, not started again: the
// refresh starts no run and pays no call, and the run has one workflow
// execution.
func TestLeaderboardAttachesToARunningEval(t *testing.T) {
	syn := buildSynthetic(t, 3000, 12)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	req := runs.Request{Dataset: syn, Model: "baseline/reference", ShardSize: 500}
	run, plan, err := wfclient.StartEval(ctx, stack.Client, stack.Stack.Config, stack.Store, workflows.EvaluateModelInput{Request: req, MaxConcurrentShards: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, version, _ := strings.Cut(syn, "@")
	res, err := refreshBoard(t, fmt.Sprintf("name: it-attach\nbenchmarks: [{dataset: synthetic, version: %s}]\nmodels: [baseline/reference]\nsettings: {shard_size: 500}\n", version))
	if err != nil {
		t.Fatal(err)
	}
	if res.RunsStarted != 0 || res.RunsReused != 1 || res.ModelCalls != 0 {
		t.Fatalf("refresh: %+v; want the running eval reused", res)
	}
	// Which way it was reused: waited for (the eval still ran when the
	// refresh resolved the board) or found finished.
	waited := false
	hist := stack.Client.GetWorkflowHistory(ctx, wfclient.RefreshWorkflowID("it-attach"), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for hist.HasNext() {
		ev, err := hist.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "WaitRun" {
			waited = true
		}
	}
	t.Logf("the refresh waited for the running eval (WaitRun): %v", waited)
	if _, err := wfclient.WaitEval(ctx, stack.Client, run, plan.RunID, time.Hour, nil); err != nil {
		t.Fatal(err)
	}
	it, err := stack.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: fmt.Sprintf("WorkflowId = '%s'", wfclient.EvalWorkflowID(plan.RunID))})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(it.Executions); n != 1 {
		t.Fatalf("eval %s has %d executions, want 1", plan.RunID, n)
	}
	var s leaderboard.Scores
	if err := blob.GetJSON(ctx, stack.Store, leaderboard.ScoresKey("it-attach", res.Stamp), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Cells) != 1 || s.Cells[0].RunID != plan.RunID || s.Cells[0].N != 3000 {
		t.Fatalf("cells: %+v", s.Cells)
	}
}

// TestLeaderboardSameNameOtherBoard is finding 6 of issue 23: while a
// board's refresh runs, refreshing another board with the same name and
// different content is refused at once, naming both digests, instead of
// attaching to the first and reporting its stamp as its own; the same
// board again attaches as before.
func TestLeaderboardSameNameOtherBoard(t *testing.T) {
	ctx := context.Background()
	if _, err := buildVia(t, bfcl.Name, datasets.Request{Source: bfcl.Embedded}); err != nil {
		t.Fatal(err)
	}
	parse := func(models string) leaderboard.Board {
		b, err := leaderboard.ParseBoard("board.yaml", []byte("name: it-same-name\nbenchmarks:\n  - dataset: bfcl\nmodels:\n"+models+"settings:\n  seed: 9231\n"), registry.Default())
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, other := parse("  - baseline/reference\n"), parse("  - baseline/noisy-0.5\n")
	run, err := wfclient.StartRefresh(ctx, stack.Client, stack.Stack.Config, workflows.RefreshLeaderboardInput{Board: a})
	if err != nil {
		t.Fatal(err)
	}
	terminateOnCleanup(t, run.GetID())
	_, err = wfclient.StartRefresh(ctx, stack.Client, stack.Stack.Config, workflows.RefreshLeaderboardInput{Board: other})
	if err == nil || !strings.Contains(err.Error(), "another board with this name is running") || !strings.Contains(err.Error(), other.Digest()[:12]) {
		t.Errorf("a second board with the same name while the first refreshes: %v", err)
	}
	same, err := wfclient.StartRefresh(ctx, stack.Client, stack.Stack.Config, workflows.RefreshLeaderboardInput{Board: a})
	if err != nil {
		t.Errorf("the same board again: %v", err)
	} else if same.GetRunID() != run.GetRunID() {
		t.Errorf("the same board again started run %s, want to attach to %s", same.GetRunID(), run.GetRunID())
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if _, err := wfclient.WaitRefresh(wctx, run); err != nil {
		t.Fatal(err)
	}
}
