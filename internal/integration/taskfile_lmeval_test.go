package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/scorers/lmeval"
	"github.com/benchline/benchline/workflows"
)

// TestTaskFileLMEval converts an lm-evaluation-harness task YAML (gsm8k's
// settings: two filter pipelines, include:, stop sequences) into a task
// file beside its data, as `benchline task convert` does, builds it on the
// real stack and evaluates it: the worker scores with lm-eval's pipelines
// under lm-eval's metric names, baseline/reference at 1 on both.
func TestTaskFileLMEval(t *testing.T) {
	dir := t.TempDir()
	var test strings.Builder
	for i := range 12 {
		fmt.Fprintf(&test, `{"id": "g%02d", "question": "What is %d plus %d?", "answer": "%d + %d = %d\n#### %d"}`+"\n", i, i, 1000, i, 1000, i+1000, i+1000)
	}
	writeFiles(t, dir, map[string]string{
		"gsm/test.jsonl": test.String(),
		"lm/_base.yaml": `dataset_path: openai/gsm8k
dataset_name: main
output_type: generate_until
test_split: test
doc_to_text: "Question: {{question}}\nAnswer:"
doc_to_target: answer
generation_kwargs: {until: ["Question:", "</s>", "<|im_end|>"], do_sample: false, temperature: 0.0}
metric_list:
  - {metric: exact_match, aggregation: mean, higher_is_better: true, ignore_case: true, ignore_punctuation: false, regexes_to_ignore: [",", "\\$", "(?s).*#### ", "\\.$"]}
filter_list:
  - name: strict-match
    filter: [{function: regex, regex_pattern: "#### (\\-?[0-9\\.\\,]+)"}, {function: take_first}]
  - name: flexible-extract
    filter: [{function: regex, group_select: -1, regex_pattern: "(-?[$0-9.,]{2,})|(-?[0-9]+)"}, {function: take_first}]
`,
		"lm/gsm8k_it.yaml": "include: _base.yaml\ntask: gsm8k_it\n",
	})
	raw, err := lmeval.Translate(filepath.Join(dir, "lm", "gsm8k_it.yaml"), os.ReadFile, map[string]string{"openai/gsm8k": filepath.Join(dir, "gsm", "test.jsonl")}, dir)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "task.yaml")
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	built, err := buildVia(t, "gsm8k-it", datasets.Request{Source: file, Task: true})
	if err != nil {
		t.Fatalf("%v\n%s", err, raw)
	}
	if built.Rows != 12 {
		t.Fatalf("built %d rows, want 12", built.Rows)
	}
	ds := "gsm8k-it@" + built.Version
	ref, err := evalVia(t, "", workflows.EvaluateModelInput{Request: runs.Request{Dataset: ds, Model: "baseline/reference"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"exact_match,strict-match", "exact_match,flexible-extract"} {
		if got := metric(ref.Summary, m); got.Mean != 1 || got.N != 12 {
			t.Errorf("baseline/reference: %s %+v, want 1 over 12", m, got)
		}
	}
}
