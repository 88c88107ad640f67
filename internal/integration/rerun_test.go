package integration

import (
	"context"
	"net"
	"os"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/wfclient"

	"github.com/benchline/benchline/internal/app"
	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/config"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/workflows"
)

// startWorkerWithBaseline runs `benchline worker --queues main` on queue,
// calling the baseline models at baseURL.
func startWorkerWithBaseline(t testing.TB, bin, queue, baseURL string) *procWorker {
	t.Helper()
	cfg := stack.Stack.Config
	return startProcWorker(t, bin, append(os.Environ(),
		"TEMPORAL_ADDRESS="+cfg.Temporal.Address, "BENCHLINE_TASK_QUEUE="+queue,
		"BENCHLINE_S3_ENDPOINT="+cfg.S3.Endpoint, "BENCHLINE_S3_BUCKET="+cfg.S3.Bucket,
		"AWS_ACCESS_KEY_ID="+config.DevAccessKey, "AWS_SECRET_ACCESS_KEY="+config.DevSecretKey, "AWS_REGION=us-east-1",
		"BENCHLINE_BASELINE_URL="+baseURL), "worker", "--queues", "main")
}

// TestEvalRerunErrors runs an evaluation against a model endpoint that
// always fails (HTTP 500): every sample is reported as an infrastructure
// failure, none is scored. Re-running the same plan with --rerun-errors
// against a healthy endpoint re-evaluates exactly those samples.
func TestEvalRerunErrors(t *testing.T) {
	const n = 20
	bin := buildBinary(t)
	ds := buildSynthetic(t, n, 41)
	const queue = "eval-rerun"
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	broken, err := baseline.New(baseline.Options{References: &app.StoreReferences{Store: stack.Store}, Faults: baseline.Faults{ServerError: 1}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = broken.Serve(ctx, ln) }()
	w := startWorkerWithBaseline(t, bin, queue, "http://"+ln.Addr().String()+"/v1")

	cfg := stack.Stack.Config
	cfg.Temporal.TaskQueue = queue
	in := workflows.EvaluateModelInput{Request: runs.Request{Dataset: ds, Model: "baseline/reference", ShardSize: 10}}
	run, plan, err := wfclient.StartEval(ctx, stack.Client, cfg, stack.Store, in)
	if err != nil {
		t.Fatal(err)
	}
	first, err := wfclient.WaitEval(ctx, stack.Client, run, plan.RunID, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	if first.Summary.InfraFailed != n || first.Summary.Scored != 0 || first.Summary.ErrorsByClass["infrastructure"] != n {
		t.Fatalf("against a failing endpoint: %+v", first.Summary)
	}
	w.kill()

	startWorkerWithBaseline(t, bin, queue, stack.BaselineURL)
	in.RerunErrors = true
	run, _, err = wfclient.StartEval(ctx, stack.Client, cfg, stack.Store, in)
	if err != nil {
		t.Fatal(err)
	}
	second, err := wfclient.WaitEval(ctx, stack.Client, run, plan.RunID, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	if second.RunID != first.RunID || second.Summary.InfraFailed != 0 || second.Summary.Scored != n || metric(second.Summary, "exact").Mean != 1 {
		t.Fatalf("after --rerun-errors: %+v", second.Summary)
	}
	checkExactlyOnce(t, plan.RunID, n)
}
