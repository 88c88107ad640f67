package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/bfcl"
	"github.com/benchline/benchline/internal/runs"
	scorer "github.com/benchline/benchline/scorers/bfcl"
	"github.com/benchline/benchline/workflows"
)

// writeToolTask writes a task file over BFCL items (the Python single-turn
// and irrelevance items of the embedded fixtures, then the upstream slice's
// Python items under "up-" ids): each question is the prompt, the tools
// column holds the tools the bfcl task offers for the item (bfcl.NewPrompt)
// and the expected column the ground truth, both as strings of JSON (which
// keep the item's own order and numbers), so that a row is asked exactly
// what the bfcl dataset's is.
func writeToolTask(t *testing.T) string {
	t.Helper()
	var data strings.Builder
	for _, src := range []struct{ dir, prefix string }{{"../../datasets/bfcl/fixtures", ""}, {"../../datasets/bfcl/testdata/upstream/data", "up-"}} {
		for _, cat := range []string{"simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance"} {
			name := "BFCL_v4_" + cat + ".json"
			q, err := os.ReadFile(filepath.Join(src.dir, name))
			if os.IsNotExist(err) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			answers := map[string]string{}
			if a, err := os.ReadFile(filepath.Join(src.dir, "possible_answer", name)); err == nil {
				for _, l := range strings.Split(strings.TrimSpace(string(a)), "\n") {
					var x struct {
						ID string          `json:"id"`
						GT json.RawMessage `json:"ground_truth"`
					}
					if err := json.Unmarshal([]byte(l), &x); err != nil {
						t.Fatal(err)
					}
					answers[x.ID] = string(x.GT)
				}
			}
			for _, l := range strings.Split(strings.TrimSpace(string(q)), "\n") {
				var x struct {
					ID       string                           `json:"id"`
					Question [][]openai.ChatCompletionMessage `json:"question"`
					Function json.RawMessage                  `json:"function"`
				}
				if err := json.Unmarshal([]byte(l), &x); err != nil {
					t.Fatal(err)
				}
				p, err := scorer.NewPrompt(cat, x.Question[0], string(x.Function))
				if err != nil {
					t.Fatal(err)
				}
				if len(p.Messages) != 1 || p.Messages[0].Role != "user" {
					t.Fatalf("%s: want one user message, got %+v", x.ID, p.Messages)
				}
				tools, _ := json.Marshal(p.Tools)
				gt, ok := answers[x.ID]
				if !ok {
					gt = "[]" // irrelevance: no call expected
				}
				row, _ := json.Marshal(map[string]string{"id": src.prefix + x.ID, "category": cat,
					"question": p.Messages[0].Content, "tools": string(tools), "ground_truth": gt})
				data.Write(row)
				data.WriteByte('\n')
			}
		}
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"items.jsonl": data.String(), "task.yaml": `name: bfcl-as-task
description: BFCL's Python items as a task file, scored by tool_calls (an integration test's)
data: {test: {path: items.jsonl}}
columns: {category: category}
prompt:
  messages: [{role: user, content: "{{ question }}"}]
  tools: tools
scorers:
  - {type: tool_calls, expected: ground_truth, category_column: category}
`})
	return filepath.Join(dir, "task.yaml")
}

// TestTaskFileToolCalls builds BFCL's items as a task file with a
// tool_calls scorer on the real stack and evaluates baseline/reference
// (every call right: 1) and baseline/noisy-0.3 (less); the bfcl dataset
// built from the same embedded items and evaluated by the same models
// scores every common sample the same.
func TestTaskFileToolCalls(t *testing.T) {
	built, err := buildVia(t, "bfcl-as-task", datasets.Request{Source: writeToolTask(t), Task: true})
	if err != nil {
		t.Fatal(err)
	}
	if built.Rows < 16 {
		t.Fatalf("built %d rows, want the fixtures' and the upstream slice's items", built.Rows)
	}
	// Pin the fixtures' version: another test may publish the real BFCL data as latest.
	bb, err := buildVia(t, bfcl.Name, datasets.Request{Source: bfcl.Embedded})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, model := range []string{"baseline/reference", "baseline/noisy-0.3"} {
		tr, err := evalVia(t, "", workflows.EvaluateModelInput{Request: runs.Request{Dataset: "bfcl-as-task@" + built.Version, Model: model}})
		if err != nil {
			t.Fatal(err)
		}
		got := metric(tr.Summary, "tool_calls")
		if int64(got.N) != built.Rows {
			t.Fatalf("%s: tool_calls over %d samples, want %d", model, got.N, built.Rows)
		}
		if model == "baseline/reference" && got.Mean != 1 {
			t.Errorf("%s: tool_calls %v, want 1", model, got.Mean)
		}
		if model != "baseline/reference" && (got.Mean >= 1 || got.Mean <= 0) {
			t.Errorf("%s: tool_calls %v, want between 0 and 1", model, got.Mean)
		}
		br, err := evalVia(t, "", workflows.EvaluateModelInput{Request: runs.Request{Dataset: "bfcl@" + bb.Version, Model: model}})
		if err != nil {
			t.Fatal(err)
		}
		_, trows := resultRows(ctx, t, tr.RunID)
		_, brows := resultRows(ctx, t, br.RunID)
		bfclScore := map[string]float64{}
		for _, r := range brows {
			bfclScore[r.SampleID] = r.Metrics["accuracy"]
		}
		common := 0
		for _, r := range trows {
			want, ok := bfclScore[r.SampleID]
			if !ok {
				continue
			}
			common++
			if r.Metrics["tool_calls"] != want {
				t.Errorf("%s: sample %s: task file %v (%s), bfcl %v", model, r.SampleID, r.Metrics["tool_calls"], r.DetailsJSON, want)
			}
			if r.Metrics["tool_calls"] == 1 && model == "baseline/reference" && !strings.Contains(r.SampleID, "irrelevance") && !strings.Contains(r.Response, "(") {
				t.Errorf("sample %s: the response %q does not show the calls", r.SampleID, r.Response)
			}
		}
		t.Logf("%s: tool_calls %.3f over %d; %d samples compared with bfcl (accuracy %.3f)", model, got.Mean, got.N, common, metric(br.Summary, "accuracy").Mean)
		if common < 10 {
			t.Errorf("%s: %d samples in common with bfcl, want its 10 Python and irrelevance items", model, common)
		}
	}
}
