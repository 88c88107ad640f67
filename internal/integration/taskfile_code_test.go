package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
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
	// A shard size of its own makes this a run of its own: the acceptance
	// suite may have evaluated the same version and model already, and a
	// finished run is reused, with no ScoreShard to count.
	ref, err := evalVia(t, "", workflows.EvaluateModelInput{Request: runs.Request{Dataset: ds, Model: "baseline/reference", ShardSize: 7}})
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

// TestTaskFileRepeats builds a task file with generation.repeats: 3 on the
// real stack: every row is asked three times (three calls), its details
// list the three replies with their verdicts, and the metric is their
// mean: 1 for baseline/reference, which answers every repeat; the noisy
// baseline's scores are the same in batch mode.
func TestTaskFileRepeats(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var data strings.Builder
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&data, "{\"id\": \"q%d\", \"a\": %d, \"answer\": \"%d\"}\n", i, i, 3*i)
	}
	writeFiles(t, dir, map[string]string{"rows.jsonl": data.String(), "task.yaml": `name: times-three-x3
description: multiplication by three, asked three times per row (an integration test's)
data: {test: {path: rows.jsonl}}
columns: {target: answer}
prompt:
  messages: [{role: user, content: "What is {{ a }} times 3? Answer with the number."}]
generation: {repeats: 3}
scorers:
  - {type: exact_match, name: exact}
`})
	built, err := buildVia(t, "times-three-x3", datasets.Request{Source: filepath.Join(dir, "task.yaml"), Task: true})
	if err != nil {
		t.Fatal(err)
	}
	ds := "times-three-x3@" + built.Version
	scores := map[string]map[string]float64{}
	for _, run := range evalReferenceNoisyBatch(t, ds, "baseline/noisy-0.5") {
		got := metric(run.Result.Summary, "exact")
		t.Logf("%s (batch %v): exact %.3f over %d", run.Model, run.Batch, got.Mean, got.N)
		if got.N != 12 || run.Result.Summary.InfraFailed != 0 {
			t.Fatalf("%s: exact %+v, infrastructure failures %d; want 12 samples", run.Model, got, run.Result.Summary.InfraFailed)
		}
		if run.Model == "baseline/reference" && got.Mean != 1 {
			t.Errorf("baseline/reference: exact %v, want 1", got.Mean)
		}
		if run.Model != "baseline/reference" && (got.Mean >= 1 || got.Mean <= 0) {
			t.Errorf("%s: exact %v, want between 0 and 1", run.Model, got.Mean)
		}
		_, rows := resultRows(ctx, t, run.Result.RunID)
		if scores[run.Model] == nil {
			scores[run.Model] = map[string]float64{}
		}
		for _, r := range rows {
			var d task.Details
			if err := json.Unmarshal([]byte(r.DetailsJSON), &d); err != nil {
				t.Fatal(err)
			}
			if len(d.Replies) != 3 || r.Calls != 3 {
				t.Fatalf("%s row %s: %d replies in the details, %d calls; want 3 and 3: %s", run.Model, r.SampleID, len(d.Replies), r.Calls, r.DetailsJSON)
			}
			sum := 0.0
			for _, rep := range d.Replies {
				sum += rep.Verdicts[0].Score
			}
			if r.Metrics["exact"] != sum/3 {
				t.Errorf("%s row %s: exact %v, the replies' mean %v", run.Model, r.SampleID, r.Metrics["exact"], sum/3)
			}
			if old, ok := scores[run.Model][r.SampleID]; ok && old != r.Metrics["exact"] {
				t.Errorf("%s row %s: batch %v, interactive %v", run.Model, r.SampleID, r.Metrics["exact"], old)
			}
			scores[run.Model][r.SampleID] = r.Metrics["exact"]
		}
	}
}
