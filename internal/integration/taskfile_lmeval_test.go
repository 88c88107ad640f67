package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/scorers/lmeval"
	task "github.com/benchline/benchline/scorers/taskfile"
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

// TestTaskFileLMEvalSameSplit converts an lm-eval task in gsm8k_platinum's
// shape (2 examples drawn from the evaluated split itself, the row left
// out: drop_same) with arc_challenge_chat's gen_prefix (the chat's last
// message, the assistant's) and a top_p, builds it and evaluates it on the
// real stack: the gateway sends the prefixed chat and baseline/reference
// answers each row's target, 1 on both pipelines.
func TestTaskFileLMEvalSameSplit(t *testing.T) {
	dir := t.TempDir()
	var test strings.Builder
	for i := range 12 {
		fmt.Fprintf(&test, `{"id": "p%02d", "question": "What is %d plus %d?", "answer": "%d + %d = %d\n#### %d"}`+"\n", i, i, 2000, i, 2000, i+2000, i+2000)
	}
	writeFiles(t, dir, map[string]string{
		"plat/test.jsonl": test.String(),
		"lm/plat.yaml": `task: gsm8k_platinum_it
dataset_path: madrylab/gsm8k-platinum
output_type: generate_until
training_split: test
fewshot_split: test
test_split: test
num_fewshot: 2
doc_to_text: "Question: {{question}}\nAnswer:"
doc_to_target: answer
gen_prefix: "The answer is"
generation_kwargs: {until: ["Question:"], do_sample: false, temperature: 0.0, top_p: 0.9}
metric_list:
  - {metric: exact_match, aggregation: mean, higher_is_better: true, ignore_case: true, regexes_to_ignore: [",", "\\$", "(?s).*#### ", "\\.$"]}
filter_list:
  - name: strict-match
    filter: [{function: regex, regex_pattern: "#### (\\-?[0-9\\.\\,]+)"}, {function: take_first}]
  - name: flexible-extract
    filter: [{function: regex, group_select: -1, regex_pattern: "(-?[$0-9.,]{2,})|(-?[0-9]+)"}, {function: take_first}]
`,
	})
	raw, err := lmeval.Translate(filepath.Join(dir, "lm", "plat.yaml"), os.ReadFile, map[string]string{"madrylab/gsm8k-platinum": filepath.Join(dir, "plat", "test.jsonl")}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "drop_same: true") || !strings.Contains(string(raw), "top_p: 0.9") {
		t.Fatalf("the translation has no drop_same or top_p:\n%s", raw)
	}
	file := filepath.Join(dir, "task.yaml")
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	built, err := buildVia(t, "gsm8k-platinum-it", datasets.Request{Source: file, Task: true})
	if err != nil {
		t.Fatalf("%v\n%s", err, raw)
	}
	if built.Rows != 12 {
		t.Fatalf("built %d rows, want 12", built.Rows)
	}
	ref, err := evalVia(t, "", workflows.EvaluateModelInput{Request: runs.Request{Dataset: "gsm8k-platinum-it@" + built.Version, Model: "baseline/reference"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"exact_match,strict-match", "exact_match,flexible-extract"} {
		if got := metric(ref.Summary, m); got.Mean != 1 || got.N != 12 {
			t.Errorf("baseline/reference: %s %+v, want 1 over 12", m, got)
		}
	}
}

// TestTaskFileLMEvalSelfConsistency converts an lm-eval task in
// gsm8k-cot-self-consistency's shape (repeats 5; score-first, maj@5 and
// maj@3 pipelines; 2 examples drawn from the train split by lm-eval's
// default sampler) beside its data, builds it and evaluates it on the real
// stack: baseline/reference scores 1 on every pipeline, a noisy baseline's
// vote follows its replies (score-first is the first reply's verdict, a
// majority of right replies wins the vote, none loses it), and a batch run
// scores every sample as the direct one. (The baseline answers a request
// body alone, and repeats differ only in the cache key's sample index, so a
// noisy baseline's five replies to a row are alike and its votes equal its
// first replies here; TestSameAsLMEval holds votes over differing replies.)
func TestTaskFileLMEvalSelfConsistency(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var test, train strings.Builder
	for i := range 12 {
		fmt.Fprintf(&test, `{"id": "g%02d", "question": "What is %d plus %d?", "answer": "%d + %d = %d\n#### %d"}`+"\n", i, i, 1000, i, 1000, i+1000, i+1000)
		fmt.Fprintf(&train, `{"id": "t%02d", "question": "What is %d plus 7?", "answer": "%d + 7 = %d\n#### %d"}`+"\n", i, 50+i, 50+i, 57+i, 57+i)
	}
	writeFiles(t, dir, map[string]string{
		"gsm/test.jsonl":  test.String(),
		"gsm/train.jsonl": train.String(),
		"lm/gsm8k_sc.yaml": `task: gsm8k_sc
dataset_path: openai/gsm8k
dataset_kwargs: {data_files: {train: train.jsonl, test: test.jsonl}}
output_type: generate_until
training_split: train
test_split: test
fewshot_split: train
num_fewshot: 2
doc_to_text: "Question: {{question}}\nAnswer:"
doc_to_target: answer
generation_kwargs: {until: ["Question:"], do_sample: true, temperature: 0.2}
repeats: 5
metric_list:
  - {metric: exact_match, aggregation: mean, higher_is_better: true, ignore_case: true, ignore_punctuation: false, regexes_to_ignore: [",", "\\$", "(?s).*#### ", "\\.$"]}
filter_list:
  - name: score-first
    filter: [{function: regex, regex_pattern: "#### (\\-?[0-9\\.\\,]+)"}, {function: take_first}]
  - name: maj@5
    filter: [{function: regex, regex_pattern: "#### (\\-?[0-9\\.\\,]+)"}, {function: majority_vote}, {function: take_first}]
  - name: maj@3
    filter: [{function: take_first_k, k: 3}, {function: regex, regex_pattern: "#### (\\-?[0-9\\.\\,]+)"}, {function: majority_vote}, {function: take_first}]
`,
	})
	raw, err := lmeval.Translate(filepath.Join(dir, "lm", "gsm8k_sc.yaml"), os.ReadFile, map[string]string{"openai/gsm8k": filepath.Join(dir, "gsm")}, dir)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "task.yaml")
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	built, err := buildVia(t, "gsm8k-sc", datasets.Request{Source: file, Task: true})
	if err != nil {
		t.Fatalf("%v\n%s", err, raw)
	}
	if built.Rows != 12 {
		t.Fatalf("built %d rows, want 12", built.Rows)
	}
	ds := "gsm8k-sc@" + built.Version
	first, maj5 := "exact_match,score-first", "exact_match,maj@5"
	direct := map[string]map[string]float64{}
	for _, run := range evalReferenceNoisyBatch(t, ds, "baseline/noisy-0.5") {
		for _, m := range []string{first, maj5, "exact_match,maj@3"} {
			got := metric(run.Result.Summary, m)
			t.Logf("%s (batch %v): %s %.3f over %d", run.Model, run.Batch, m, got.Mean, got.N)
			if got.N != 12 {
				t.Fatalf("%s: %s %+v, want 12 samples", run.Model, m, got)
			}
			if run.Model == "baseline/reference" && got.Mean != 1 {
				t.Errorf("baseline/reference: %s %v, want 1", m, got.Mean)
			}
		}
		_, rows := resultRows(ctx, t, run.Result.RunID)
		if direct[run.Model] == nil {
			direct[run.Model] = map[string]float64{}
		}
		for _, r := range rows {
			var d task.Details
			if err := json.Unmarshal([]byte(r.DetailsJSON), &d); err != nil {
				t.Fatal(err)
			}
			if len(d.Replies) != 5 || r.Calls != 5 {
				t.Fatalf("%s row %s: %d replies, %d calls; want 5 and 5", run.Model, r.SampleID, len(d.Replies), r.Calls)
			}
			right := 0
			for _, rep := range d.Replies {
				for _, v := range rep.Verdicts {
					if v.Metric == first && v.Score == 1 {
						right++
					}
				}
			}
			if want := d.Replies[0].Verdicts[0].Score; r.Metrics[first] != want {
				t.Errorf("%s row %s: %s %v, the first reply's verdict %v", run.Model, r.SampleID, first, r.Metrics[first], want)
			}
			if (right >= 3 && r.Metrics[maj5] != 1) || (right == 0 && r.Metrics[maj5] != 0) {
				t.Errorf("%s row %s: %s %v with %d of 5 replies right", run.Model, r.SampleID, maj5, r.Metrics[maj5], right)
			}
			key := r.SampleID + " " + fmt.Sprint(r.Metrics)
			if run.Batch {
				if _, ok := direct[run.Model][key]; !ok {
					t.Errorf("%s row %s: batch %v, not the direct run's", run.Model, r.SampleID, r.Metrics)
				}
			}
			direct[run.Model][key] = 1
		}
	}
	// On a board beside nothing else, reusing the runs above.
	refreshDatasetBoard(t, "it-lmeval-sc", "gsm8k-sc", built.Version, "baseline/reference", "baseline/noisy-0.5")
}
