package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/wfclient"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/synthetic"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/config"
	"github.com/benchline/benchline/workflows"
)

// buildBinary compiles cmd/benchline once per test binary.
func buildBinary(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "benchline")
	cmd := exec.Command("go", "build", "-o", bin, "../../cmd/benchline")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startWorker runs `benchline worker` as a separate process on queue.
func startWorker(t *testing.T, bin, queue string) *procWorker {
	t.Helper()
	cfg := stack.Stack.Config
	return startProcWorker(t, bin, append(os.Environ(),
		"TEMPORAL_ADDRESS="+cfg.Temporal.Address, "BENCHLINE_TASK_QUEUE="+queue,
		"BENCHLINE_S3_ENDPOINT="+cfg.S3.Endpoint, "BENCHLINE_S3_BUCKET="+cfg.S3.Bucket,
		"AWS_ACCESS_KEY_ID="+config.DevAccessKey, "AWS_SECRET_ACCESS_KEY="+config.DevSecretKey, "AWS_REGION=us-east-1"), "worker")
}

// TestKillWorkerMidBuild SIGKILLs the only worker while parts are being
// written, starts another, and checks the build finishes the same version
// with every row exactly once.
func TestKillWorkerMidBuild(t *testing.T) {
	bin := buildBinary(t)
	// The kill must land while a part is being written; if timing on a
	// loaded machine defeats that, try again with a fresh dataset version
	// before calling the test failed.
	for attempt := 1; attempt <= 3; attempt++ {
		if killMidBuild(t, bin, attempt) {
			return
		}
		t.Logf("attempt %d: the kill interrupted no part; trying again", attempt)
	}
	t.Fatal("no activity was retried in 3 attempts: the worker was never killed mid-part")
}

// killMidBuild runs one kill scenario; it fails the test on any wrong
// result and reports whether the kill really interrupted a part.
func killMidBuild(t *testing.T, bin string, attempt int) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	queue := fmt.Sprintf("kill-test-%d", attempt)
	const rows = 240_000
	params := map[string]string{"rows": fmt.Sprint(rows), "part_rows": "20000", "seed": fmt.Sprint(7 + attempt), "delay_ms_per_10k": "1000"}
	plan, err := synthetic.Builder{}.Plan(ctx, datasets.Env{}, datasets.Request{Params: params})
	if err != nil {
		t.Fatal(err)
	}
	dataDir := catalog.Dir(synthetic.Name, plan.Version) + "data/"

	first := startWorker(t, bin, queue)
	cfg := stack.Stack.Config
	cfg.Temporal.TaskQueue = queue
	run, err := wfclient.StartBuild(ctx, stack.Client, cfg, workflows.BuildDatasetInput{Dataset: synthetic.Name, Request: datasets.Request{Params: params}, MaxParallel: 3})
	if err != nil {
		t.Fatal(err)
	}
	// Wait until some parts are written, then kill the worker mid-build.
	pollUntil(ctx, t, "two parts written", func() bool {
		infos, err := stack.Store.List(ctx, dataDir)
		if err != nil {
			t.Fatal(err)
		}
		if len(infos) >= len(plan.Parts) {
			t.Fatal("every part was written before the kill; the test proves nothing (raise delay_ms_per_10k)")
		}
		return len(infos) >= 2
	})
	if err := first.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill the worker: %v (it had ended: %v)", err, first.Wait())
	}
	_ = first.Wait()
	if ok, _ := stackExists(ctx, catalog.ManifestKey(synthetic.Name, plan.Version)); ok {
		t.Fatal("the build finished before the kill; the test proves nothing (raise delay_ms_per_10k)")
	}
	startWorker(t, bin, queue)

	var res workflows.BuildDatasetResult
	if err := run.Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	if res.Version != plan.Version || res.Rows != rows || res.Files != len(plan.Parts) {
		t.Fatalf("result %+v, want version %s, %d rows, %d files", res, plan.Version, rows, len(plan.Parts))
	}
	// Every row exactly once across all files, and the kill really
	// interrupted an activity: some part ran more than once.
	if dups, lost := checkBuiltOnce(ctx, t, plan.Version, rows); dups+lost > 0 {
		t.FailNow()
	}
	return retriedActivities(ctx, t, run.GetID()) > 0
}

// pollUntil calls cond every 50 ms until it returns true, and fails the
// test, naming what it waited for, if ctx ends first. cond may fail the
// test itself.
func pollUntil(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-tick.C:
		}
	}
}

func stackExists(ctx context.Context, key string) (bool, error) {
	_, err := stack.Store.Head(ctx, key)
	return err == nil, nil
}
