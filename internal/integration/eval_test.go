package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/wfclient"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/bfcl"
	"github.com/benchline/benchline/datasets/synthetic"
	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/config"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/workflows"
)

// evalVia runs an evaluation on queue (the shared in-process worker's when
// empty) and waits.
func evalVia(t *testing.T, queue string, in workflows.EvaluateModelInput) (workflows.EvaluateModelResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cfg := stack.Stack.Config
	if queue != "" {
		cfg.Temporal.TaskQueue = queue
	}
	run, plan, err := wfclient.StartEval(ctx, stack.Client, cfg, stack.Store, in)
	if err != nil {
		return workflows.EvaluateModelResult{}, err
	}
	return wfclient.WaitEval(ctx, stack.Client, run, plan.RunID, time.Hour, nil)
}

func metric(s aggregate.Summary, name string) aggregate.MetricStat {
	for _, m := range s.Metrics {
		if m.Name == name {
			return m
		}
	}
	return aggregate.MetricStat{}
}

func TestEvalBFCLBaselines(t *testing.T) {
	// Pin the fixtures' version: another test may publish the real BFCL data as latest.
	built, err := buildVia(t, bfcl.Name, datasets.Request{Source: bfcl.Embedded})
	if err != nil {
		t.Fatal(err)
	}
	ds := "bfcl@" + built.Version
	ref, err := evalVia(t, "", workflows.EvaluateModelInput{Request: runs.Request{Dataset: ds, Model: "baseline/reference"}})
	if err != nil {
		t.Fatal(err)
	}
	if a := metric(ref.Summary, "accuracy"); a.Mean != 1 || a.N != 14 || !ref.Summary.Baseline {
		t.Fatalf("baseline/reference: %+v (baseline=%v)", a, ref.Summary.Baseline)
	}
	if *update {
		saveHistory(t, wfclient.EvalWorkflowID(ref.RunID), "evaluate_model_bfcl.json")
	}
	noisy, err := evalVia(t, "", workflows.EvaluateModelInput{Request: runs.Request{Dataset: ds, Model: "baseline/noisy-0.5"}})
	if err != nil {
		t.Fatal(err)
	}
	a := metric(noisy.Summary, "accuracy")
	if a.Mean >= 1 || a.CILow > a.Mean || a.CIHigh < a.Mean || a.CIMethod != "bootstrap" {
		t.Fatalf("baseline/noisy-0.5: %+v; want lower than reference with a bootstrap interval around it", a)
	}
	// The same plan again reuses the finished run: same id, same summary.
	again, err := evalVia(t, "", workflows.EvaluateModelInput{Request: runs.Request{Dataset: ds, Model: "baseline/noisy-0.5"}})
	if err != nil {
		t.Fatal(err)
	}
	if again.RunID != noisy.RunID || metric(again.Summary, "accuracy") != a {
		t.Fatalf("rerun: %s %+v, first %s %+v", again.RunID, metric(again.Summary, "accuracy"), noisy.RunID, a)
	}
}

// checkAllExact checks a finished baseline/reference run of n samples: the
// summary counts n and its exact metric is 1, and every sample has exactly
// one result row.
func checkAllExact(t *testing.T, res workflows.EvaluateModelResult, n int) {
	t.Helper()
	if res.Summary.Samples != int64(n) || metric(res.Summary, "exact").Mean != 1 {
		t.Fatalf("summary: %d samples, exact %+v", res.Summary.Samples, metric(res.Summary, "exact"))
	}
	checkExactlyOnce(t, res.RunID, n)
}

// checkExactlyOnce reads every result shard of a run and checks each sample
// index 0..n-1 is present exactly once.
func checkExactlyOnce(t *testing.T, runID string, n int) runs.Plan {
	t.Helper()
	ctx := context.Background()
	var plan runs.Plan
	if err := blob.GetJSON(ctx, stack.Store, runs.PlanKey(runID), &plan); err != nil {
		t.Fatal(err)
	}
	seen := make([]int, n)
	type row struct {
		SampleIndex int64  `parquet:"sample_index"`
		ErrorClass  string `parquet:"error_class"`
	}
	for i := range plan.Shards {
		err := pq.ReadEach(ctx, stack.Store, runs.ShardKey(runID, i), func(rows []row) error {
			for _, r := range rows {
				seen[r.SampleIndex]++
				if r.ErrorClass != "" {
					t.Errorf("sample %d: error class %q", r.SampleIndex, r.ErrorClass)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range seen {
		if c != 1 {
			t.Fatalf("sample %d has %d result rows", i, c)
		}
	}
	return plan
}

func buildSynthetic(t *testing.T, rows int, seed int) string {
	t.Helper()
	res, err := buildVia(t, synthetic.Name, datasets.Request{Params: map[string]string{"rows": fmt.Sprint(rows), "seed": fmt.Sprint(seed)}})
	if err != nil {
		t.Fatal(err)
	}
	return "synthetic@" + res.Version
}

// startEvalWorker runs `benchline worker --queues main` on queue, slowed to
// a few samples in flight so kills land mid-run.
func startEvalWorker(t *testing.T, bin, queue string) *procWorker {
	t.Helper()
	cfg := stack.Stack.Config
	// A checkpoint after every chunk, so that kills also exercise resuming
	// from checkpoints, not only from the cache segments.
	return startProcWorker(t, bin, append(os.Environ(),
		"TEMPORAL_ADDRESS="+cfg.Temporal.Address, "BENCHLINE_TASK_QUEUE="+queue,
		"BENCHLINE_S3_ENDPOINT="+cfg.S3.Endpoint, "BENCHLINE_S3_BUCKET="+cfg.S3.Bucket,
		"AWS_ACCESS_KEY_ID="+config.DevAccessKey, "AWS_SECRET_ACCESS_KEY="+config.DevSecretKey, "AWS_REGION=us-east-1",
		"BENCHLINE_BASELINE_URL="+stack.BaselineURL),
		"worker", "--queues", "main", "--sample-concurrency", "2", "--checkpoint-interval", "1ms")
}

// TestEvalSurvivesWorkerKills runs 10,000 samples while SIGKILLing the only
// worker three times at random points, and checks every sample has exactly
// one result row.
func TestEvalSurvivesWorkerKills(t *testing.T) {
	const n = 10_000
	bin := buildBinary(t)
	ds := buildSynthetic(t, n, 11)
	const queue = "eval-kill"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cfg := stack.Stack.Config
	cfg.Temporal.TaskQueue = queue
	worker := startEvalWorker(t, bin, queue)
	in := workflows.EvaluateModelInput{Request: runs.Request{Dataset: ds, Model: "baseline/reference", ShardSize: 250},
		MaxConcurrentShards: 4, ShardHeartbeatTimeout: 5 * time.Second}
	run, plan, err := wfclient.StartEval(ctx, stack.Client, cfg, stack.Store, in)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
	points := []int64{int64(1000 + r.IntN(2000)), int64(4000 + r.IntN(2000)), int64(7000 + r.IntN(2000))}
	t.Logf("killing the worker after %v samples", points)
	for _, at := range points {
		pollUntil(ctx, t, fmt.Sprintf("%d samples done", at), func() bool {
			p, err := wfclient.QueryProgress(ctx, stack.Client, plan.RunID)
			if err == nil && p.SamplesDone >= at {
				return true
			}
			if err == nil && p.Finished {
				t.Fatal("the run finished before the kills: slow the worker down")
			}
			return false
		})
		worker.kill()
		worker = startEvalWorker(t, bin, queue)
	}
	res, err := wfclient.WaitEval(ctx, stack.Client, run, plan.RunID, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkAllExact(t, res, n)
}

// TestEvalSurvivesServerRestarts restarts the Temporal server, then the S3
// server, in the middle of one run each.
func TestEvalSurvivesServerRestarts(t *testing.T) {
	const n = 4000
	for i, restart := range []struct {
		name string
		fn   func(context.Context) error
	}{
		{"temporal", stack.Stack.RestartTemporal},
		{"s3", stack.Stack.RestartS3},
	} {
		t.Run(restart.name, func(t *testing.T) {
			ds := buildSynthetic(t, n, 20+i)
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
			defer cancel()
			in := workflows.EvaluateModelInput{Request: runs.Request{Dataset: ds, Model: "baseline/reference", ShardSize: 200},
				MaxConcurrentShards: 2, ShardHeartbeatTimeout: 5 * time.Second}
			run, plan, err := wfclient.StartEval(ctx, stack.Client, stack.Stack.Config, stack.Store, in)
			if err != nil {
				t.Fatal(err)
			}
			pollUntil(ctx, t, "400 samples done", func() bool {
				p, err := wfclient.QueryProgress(ctx, stack.Client, plan.RunID)
				return err == nil && p.SamplesDone >= 400
			})
			if err := restart.fn(ctx); err != nil {
				t.Fatal(err)
			}
			res, err := wfclient.WaitEval(ctx, stack.Client, run, plan.RunID, time.Hour, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Summary.Samples != n {
				t.Fatalf("summary has %d samples", res.Summary.Samples)
			}
			checkExactlyOnce(t, plan.RunID, n)
		})
	}
}

// TestEvalBadInput: a dataset whose files do not match its manifest stops
// the run at planning with an error naming the file; a row the task cannot
// read is reported by id and not scored.
func TestEvalBadInput(t *testing.T) {
	ctx := context.Background()
	t.Run("missing file", func(t *testing.T) {
		ds := buildSynthetic(t, 100, 31)
		m, err := catalog.Resolve(ctx, stack.Store, ds)
		if err != nil {
			t.Fatal(err)
		}
		key := catalog.Dir(m.Name, m.Version) + m.Files[0].Path
		if err := stack.Store.Delete(ctx, key); err != nil {
			t.Fatal(err)
		}
		_, err = evalVia(t, "", workflows.EvaluateModelInput{Request: runs.Request{Dataset: ds, Model: "baseline/reference"}})
		if err == nil || !contains(err.Error(), m.Files[0].Path) || !contains(err.Error(), "does not match its manifest") {
			t.Fatalf("err = %v; want a manifest mismatch naming %s", err, m.Files[0].Path)
		}
	})
	t.Run("bad row", func(t *testing.T) {
		// A BFCL item whose function list cannot be read is skipped at
		// build and named (bfcl.Check), so the run evaluates the good one
		// only. (The engine's bad_sample path, for rows a task cannot use,
		// runs in TestToyBenchmarkNeedsOnlyTheList and the omnicloze test.)
		dir := t.TempDir()
		q := `{"id": "simple_python_0", "question": [[{"role": "user", "content": "Is 97 prime?"}]], "function": [{"name": "is_prime", "description": "d", "parameters": {"type": "dict", "properties": {"n": {"type": "integer", "description": "n"}}, "required": ["n"]}}]}
{"id": "simple_python_1", "question": [[{"role": "user", "content": "Is 98 prime?"}]], "function": [17]}
`
		a := `{"id": "simple_python_0", "ground_truth": [{"is_prime": {"n": [97]}}]}
{"id": "simple_python_1", "ground_truth": [{"is_prime": {"n": [98]}}]}
`
		writeFiles(t, dir, map[string]string{"BFCL_v4_simple_python.json": q, "possible_answer/BFCL_v4_simple_python.json": a})
		res, err := buildVia(t, bfcl.Name, datasets.Request{Source: dir})
		if err != nil {
			t.Fatal(err)
		}
		if s := datasets.SkipSummary(res.Stats); res.Rows != 1 || !strings.Contains(s, "simple_python_1 (malformed functions)") {
			t.Fatalf("built %d rows, skip line %q; want 1 row and simple_python_1 named", res.Rows, s)
		}
		ev, err := evalVia(t, "", workflows.EvaluateModelInput{Request: runs.Request{Dataset: "bfcl@" + res.Version, Model: "baseline/reference"}})
		if err != nil {
			t.Fatal(err)
		}
		if s := ev.Summary; s.Samples != 1 || s.Scored != 1 || metric(s, "accuracy").Mean != 1 {
			t.Fatalf("summary %+v", s)
		}
	})
}
