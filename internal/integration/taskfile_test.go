package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/workflows"
)

// writeMathTask writes an exact-match task file over 40 JSON lines (one
// with an empty answer) and a few-shot file, in a new folder, and returns
// the task file's path.
func writeMathTask(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	var test, train strings.Builder
	for i := range 40 {
		answer := fmt.Sprint(i * 3)
		if i == 17 {
			answer = ""
		}
		fmt.Fprintf(&test, `{"qid": "m%02d", "topic": "%s", "question": "What is %d times 3?", "answer": "%s"}`+"\n", i, []string{"small", "large"}[i/20], i, answer)
	}
	for i := range 5 {
		fmt.Fprintf(&train, `{"qid": "t%d", "question": "What is %d plus 1?", "answer": "%d"}`+"\n", i, i, i+1)
	}
	task := `name: ` + name + `
description: Multiplication by three, exact and numeric match (an integration test's task file)
license: cc0-1.0
metric: exact
data:
  test: {path: data/test.jsonl}
  train: {path: data/train.jsonl}
columns: {id: qid, category: topic, target: answer}
prompt:
  messages:
    - {role: system, content: "Reply with the number only."}
    - {role: user, content: "{{ question }}"}
  fewshot: {from: train, n: 2, seed: 11}
generation: {temperature: 0, max_tokens: 16}
scorers:
  - {type: exact_match, name: exact}
  - {type: numeric}
`
	writeFiles(t, dir, map[string]string{"task.yaml": task, "data/test.jsonl": test.String(), "data/train.jsonl": train.String()})
	return filepath.Join(dir, "task.yaml")
}

// TestTaskFileBuildEvaluate builds a task file written after the stack's
// worker started (TestMain starts it before any test runs), evaluates the
// reference and a noisy baseline on it and checks the scores, the skipped
// row and that the version keeps its task file.
func TestTaskFileBuildEvaluate(t *testing.T) {
	file := writeMathTask(t, "times-three")
	if st, err := os.Stat(file); err != nil || !st.ModTime().After(stackStarted) {
		t.Fatalf("the task file must be written after the worker started (%v)", err)
	}
	built, err := buildVia(t, "times-three", datasets.Request{Source: file, Task: true})
	if err != nil {
		t.Fatal(err)
	}
	if built.Rows != 39 || built.Stats["skipped: empty target"] != 1 {
		t.Fatalf("built %d rows, stats %v; want 39 and one empty target skipped", built.Rows, built.Stats)
	}
	m := verifiedManifest(t, "times-three", built.Version)
	if m.Sources[0].Name != "task.yaml" || len(m.Sources) != 3 {
		t.Errorf("sources %+v: want the task file first, then its two data files", m.Sources)
	}
	// The same task file and data again: the same version, nothing written.
	again, err := buildVia(t, "times-three", datasets.Request{Source: file, Task: true})
	if err != nil || !again.Reused || again.Version != built.Version {
		t.Fatalf("rebuild: %+v, %v; want the same version reused", again, err)
	}
	ds := "times-three@" + built.Version
	ref, err := evalVia(t, "", workflows.EvaluateModelInput{Request: runs.Request{Dataset: ds, Model: "baseline/reference"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := metric(ref.Summary, "exact"); got.Mean != 1 || got.N != 39 {
		t.Errorf("baseline/reference: exact %+v, want 1 over 39", got)
	}
	if got := metric(ref.Summary, "numeric"); got.Mean != 1 {
		t.Errorf("baseline/reference: numeric %+v, want 1", got)
	}
	if len(ref.Summary.Categories) != 2 {
		t.Errorf("categories %+v, want small and large", ref.Summary.Categories)
	}
	noisy, err := evalVia(t, "", workflows.EvaluateModelInput{Request: runs.Request{Dataset: ds, Model: "baseline/noisy-0.5"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := metric(noisy.Summary, "exact"); got.Mean >= 1 || got.Mean <= 0 {
		t.Errorf("baseline/noisy-0.5: exact %v, want between 0 and 1", got.Mean)
	}
	// Each result row keeps its verdicts.
	_, rows := resultRows(context.Background(), t, noisy.RunID)
	for _, r := range rows {
		if !strings.Contains(r.DetailsJSON, `"verdicts"`) {
			t.Fatalf("row %s: details %q lack the verdicts", r.SampleID, r.DetailsJSON)
		}
	}

	// Batch mode, for a model not evaluated yet: through the batch API, the
	// rows scored by the same scorers.
	batch, err := evalVia(t, "", workflows.EvaluateModelInput{Request: runs.Request{Dataset: ds, Model: "baseline/noisy-0.4", Batch: true}})
	if err != nil {
		t.Fatal(err)
	}
	if !batch.Summary.Batch {
		t.Error("the batch run's summary does not say batch")
	}
	if got := metric(batch.Summary, "exact"); got.N != 39 || got.Mean >= 1 || got.Mean <= 0 {
		t.Errorf("baseline/noisy-0.4 in batch mode: exact %+v, want between 0 and 1 over 39", got)
	}
	_, brows := resultRows(context.Background(), t, batch.RunID)
	for _, r := range brows {
		if !strings.Contains(r.DetailsJSON, `"metric":"exact"`) {
			t.Fatalf("batch row %s: details %q lack the exact verdict", r.SampleID, r.DetailsJSON)
		}
	}

	// A board refreshes it beside nothing else, its description shown.
	scores := refreshDatasetBoard(t, "it-taskfile", "times-three", built.Version, "baseline/reference", "baseline/noisy-0.5")
	if !strings.Contains(scores, "Multiplication by three") {
		t.Errorf("scores.json lacks the task file's description: %s", excerpt(scores, 400))
	}

	// Published as a release, every row there.
	publishAll(t, ds, 39)
}

// TestTaskFileBadAtBuild: a task file that reads a column its data lacks,
// and one with a regex RE2 refuses, fail the build at once, naming the
// file, the key or line and the row, and publish nothing.
func TestTaskFileBadAtBuild(t *testing.T) {
	cases := []struct {
		name  string
		patch func(string) string
		want  []string
	}{
		{"missing column in a template", func(s string) string { return strings.Replace(s, "{{ question }}", "{{ questoin }}", 1) },
			[]string{"task.yaml:12", "prompt.messages[1].content", "row ", "questoin"}},
		{"regex", func(s string) string {
			return strings.Replace(s, "  - {type: numeric}", "  - {type: regex, pattern: 'a(?=b)'}", 1)
		}, []string{"task.yaml:17", "scorers[1].pattern", "RE2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := writeMathTask(t, "bad-task")
			raw, _ := os.ReadFile(file)
			if err := os.WriteFile(file, []byte(tc.patch(string(raw))), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			_, err := buildVia(t, "bad-task", datasets.Request{Source: file, Task: true})
			if err == nil {
				t.Fatal("the build succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if _, err := catalog.Resolve(ctx, stack.Store, "bad-task"); err == nil {
				t.Error("a version was published")
			}
		})
	}
}
