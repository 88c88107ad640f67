package integration

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
	task "github.com/benchline/benchline/scorers/taskfile"
	"github.com/benchline/benchline/workflows"
)

// codeVerdict is the code scorer's verdict of a task-file result row.
func codeVerdict(t *testing.T, r schemas.ResultRow, metric string) task.Verdict {
	t.Helper()
	var d task.Details
	if err := json.Unmarshal([]byte(r.DetailsJSON), &d); err != nil {
		t.Fatalf("row %s: details %q: %v", r.SampleID, r.DetailsJSON, err)
	}
	for _, v := range d.Verdicts {
		if v.Metric == metric {
			return v
		}
	}
	t.Fatalf("row %s: details %q hold no %s verdict", r.SampleID, r.DetailsJSON, metric)
	return task.Verdict{}
}

// TestTaskFileCode builds testdata/tasks/python-code (Python problems with
// asserts, a code scorer) on the real stack and evaluates it: generation
// on the main queue, scoring on the sandbox queue in bubblewrap.
// baseline/reference (the reference solutions) passes every row,
// baseline/noisy-0.3 fewer, each failure with its sandbox status; the
// same noisy run in batch mode scores every sample the same. A task file
// whose reference loops is scored 0 with status timeout on that row, not
// an infrastructure failure.
func TestTaskFileCode(t *testing.T) {
	ctx := context.Background()
	built, err := buildVia(t, "python-code", datasets.Request{Source: filepath.Join("testdata", "tasks", "python-code", "task.yaml"), Task: true})
	if err != nil {
		t.Fatal(err)
	}
	if built.Rows != 16 {
		t.Fatalf("built %d rows, want 16", built.Rows)
	}
	ds := "python-code@" + built.Version
	ref, err := evalVia(t, "", workflows.EvaluateModelInput{Request: runs.Request{Dataset: ds, Model: "baseline/reference"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := metric(ref.Summary, "pass"); got.Mean != 1 || got.N != 16 || ref.Summary.InfraFailed != 0 {
		t.Errorf("baseline/reference: pass %+v, infrastructure failures %d; want 1 over 16", got, ref.Summary.InfraFailed)
	}
	if q := ifcScoreQueues(t, ref.RunID); q[task.SandboxQueue] == 0 || len(q) != 1 {
		t.Errorf("ScoreShard ran on %v, want the sandbox queue only", q)
	}
	_, rrows := resultRows(ctx, t, ref.RunID)
	for _, r := range rrows {
		if v := codeVerdict(t, r, "pass"); v.Status != task.CodeOK {
			t.Errorf("reference row %s: verdict %+v, want ok", r.SampleID, v)
		}
	}

	noisy, err := evalVia(t, "", workflows.EvaluateModelInput{Request: runs.Request{Dataset: ds, Model: "baseline/noisy-0.3"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := metric(noisy.Summary, "pass"); got.Mean >= 1 || got.Mean <= 0 || noisy.Summary.InfraFailed != 0 {
		t.Errorf("baseline/noisy-0.3: pass %+v, infrastructure failures %d; want between 0 and 1, none", got, noisy.Summary.InfraFailed)
	}
	t.Logf("pass: baseline/reference %.3f, baseline/noisy-0.3 %.3f", metric(ref.Summary, "pass").Mean, metric(noisy.Summary, "pass").Mean)
	_, nrows := resultRows(ctx, t, noisy.RunID)
	want := map[string]float64{}
	for _, r := range nrows {
		v := codeVerdict(t, r, "pass")
		want[r.SampleID] = r.Metrics["pass"]

		if (r.Metrics["pass"] == 1) != (v.Status == task.CodeOK) || v.Status == "" {
			t.Errorf("noisy row %s: pass %v, verdict %+v", r.SampleID, r.Metrics["pass"], v)
		}
		if v.Status != task.CodeOK && v.Why == "" {
			t.Errorf("noisy row %s: verdict %+v says not why", r.SampleID, v)
		}
	}

	// Batch mode (another shard size: another run): the same scores.
	batch, err := evalVia(t, "", workflows.EvaluateModelInput{Request: runs.Request{Dataset: ds, Model: "baseline/noisy-0.3", Batch: true, ShardSize: 999}})
	if err != nil {
		t.Fatal(err)
	}
	if !batch.Summary.Batch || batch.Summary.InfraFailed != 0 {
		t.Errorf("batch run: batch %v, infrastructure failures %d", batch.Summary.Batch, batch.Summary.InfraFailed)
	}
	_, brows := resultRows(ctx, t, batch.RunID)
	if len(brows) != len(nrows) {
		t.Fatalf("batch: %d rows, want %d", len(brows), len(nrows))
	}
	for _, r := range brows {
		if got, ok := r.Metrics["pass"]; !ok || got != want[r.SampleID] {
			t.Errorf("batch row %s: pass %v (%s), interactive %v", r.SampleID, r.Metrics["pass"], r.DetailsJSON, want[r.SampleID])
		}
	}

	// A reply that loops: scored 0, status timeout, not an infrastructure
	// failure.
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"rows.jsonl": `{"id": "ends", "solution": "def f():\n    return 1\n", "tests": "assert f() == 1"}
{"id": "loops", "solution": "def f():\n    while True:\n        pass\n", "tests": "assert f() == 1"}
`,
		"task.yaml": `name: loop-code
description: one reference solution ends, one loops (an integration test's)
data: {test: {path: rows.jsonl}}
columns: {target: solution}
prompt:
  messages: [{role: user, content: "Write f, test {{ id }}: {{ tests }}"}]
scorers:
  - {type: code, language: python, tests: tests, timeout: 2s}
`})
	lb, err := buildVia(t, "loop-code", datasets.Request{Source: filepath.Join(dir, "task.yaml"), Task: true})
	if err != nil {
		t.Fatal(err)
	}
	loop, err := evalVia(t, "", workflows.EvaluateModelInput{Request: runs.Request{Dataset: "loop-code@" + lb.Version, Model: "baseline/reference"}})
	if err != nil {
		t.Fatal(err)
	}
	if loop.Summary.Scored != 2 || loop.Summary.InfraFailed != 0 {
		t.Fatalf("loop-code: scored %d, infrastructure failures %d; want both scored", loop.Summary.Scored, loop.Summary.InfraFailed)
	}
	_, lrows := resultRows(ctx, t, loop.RunID)
	for _, r := range lrows {
		v := codeVerdict(t, r, "code")
		wantScore, wantStatus := 1.0, task.CodeOK
		if r.SampleID == "loops" {
			wantScore, wantStatus = 0, task.CodeTimeout
		}
		if r.Metrics["code"] != wantScore || v.Status != wantStatus || r.ErrorClass != "" {
			t.Errorf("loop-code row %s: code %v, verdict %+v, error class %q; want %v %s", r.SampleID, r.Metrics["code"], v, r.ErrorClass, wantScore, wantStatus)
		}
	}
}
