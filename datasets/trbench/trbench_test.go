package trbench_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/toolpref"
	"github.com/benchline/benchline/datasets/trbench"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/golden"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/schemas"
	judge "github.com/benchline/benchline/scorers/trbench"
)

var update = flag.Bool("update", false, "rewrite golden files")

// build plans and writes every part with builder b into store.
func build(t *testing.T, store blob.Store, b datasets.Builder, req datasets.Request) (datasets.Plan, catalog.Manifest, error) {
	t.Helper()
	ctx := context.Background()
	env := datasets.Env{Store: store}
	plan, err := b.Plan(ctx, env, req)
	if err != nil {
		return plan, catalog.Manifest{}, err
	}
	m := catalog.Manifest{Name: plan.Dataset, Version: plan.Version, Schema: plan.Schema, BuilderVersion: plan.BuilderVersion,
		Params: plan.Params, Sources: plan.Sources, CreatedAt: time.Unix(0, 0)}
	for _, p := range plan.Parts {
		path := catalog.PartPath(p.Index)
		info, err := b.WritePart(ctx, env, plan, p, catalog.Dir(plan.Dataset, plan.Version)+path, func(int64) {})
		if err != nil {
			t.Fatal(err)
		}
		m.Files = append(m.Files, catalog.File{Path: path, Rows: info.Rows, Bytes: info.Bytes, SHA256: info.SHA256})
		m.Rows += info.Rows
	}
	if err := catalog.Publish(ctx, store, m, b.Card(m), catalog.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	return plan, m, nil
}

func readRows(t *testing.T, store blob.Store, m catalog.Manifest) []schemas.TRBenchPair {
	t.Helper()
	var all []schemas.TRBenchPair
	for _, f := range m.Files {
		rows, err := pq.ReadAll[schemas.TRBenchPair](context.Background(), store, catalog.Dir(m.Name, m.Version)+f.Path)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, rows...)
	}
	return all
}

func checkRow(t *testing.T, r schemas.TRBenchPair) {
	t.Helper()
	if r.GroundTruthOrder1 != "1" || r.GroundTruthOrder2 != "2" {
		t.Errorf("%s: ground truths %q/%q", r.PairID, r.GroundTruthOrder1, r.GroundTruthOrder2)
	}
	// Order 1 shows the chosen reply first, order 2 the rejected one.
	i1c, i1r := strings.Index(r.PromptOrder1, r.ChosenResponse), strings.LastIndex(r.PromptOrder1, orEmpty(r.RejectResponse))
	i2c, i2r := strings.LastIndex(r.PromptOrder2, r.ChosenResponse), strings.Index(r.PromptOrder2, orEmpty(r.RejectResponse))
	if i1c < 0 || i1r < 0 || i1c > i1r || i2c < 0 || i2r < 0 || i2r > i2c {
		t.Errorf("%s: replies not in the expected positions", r.PairID)
	}
	if !strings.Contains(r.PromptOrder1, "<choice>\n1\n</choice>") {
		t.Errorf("%s: prompt does not ask for the choice format", r.PairID)
	}
	var chat []judge.Message
	if err := json.Unmarshal([]byte(r.ChatHistoryJSON), &chat); err != nil || chat[0].Role != "system" || !strings.Contains(chat[0].Content, "<tools>") {
		t.Errorf("%s: chat history %q", r.PairID, r.ChatHistoryJSON)
	}
}

func orEmpty(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(empty reply)"
	}
	return s
}

func TestBuildFromFailingOutputs(t *testing.T) {
	store := blobtest.NewMemory()
	plan, m, err := build(t, store, trbench.Builder{}, datasets.Request{Source: trbench.Embedded})
	if err != nil {
		t.Fatal(err)
	}
	rows := readRows(t, store, m)
	if len(rows) != 8 {
		t.Fatalf("%d rows, want 8 (one per failing output)", len(rows))
	}
	var sb strings.Builder
	for i, r := range rows {
		checkRow(t, r)
		if r.UUID != int64(i) || r.ChosenResponseFrom != "ground truth" || r.ChosenReward != 1 || r.RejectReward != 0 ||
			r.RejectRewardMsg != r.ErrorType || r.ErrorType == "" || r.PairSource != "bfcl_failing" || r.SourceLine == 0 {
			t.Errorf("row %d = %+v", i, r)
		}
		if !strings.HasPrefix(r.ChosenResponse, "<tool_call>\n{\"name\": ") {
			t.Errorf("%s: chosen is not rendered ground truth: %q", r.PairID, r.ChosenResponse)
		}
		if r.ReferenceResponse != r.ChosenResponse {
			t.Errorf("%s: reference %q, want the chosen ground truth", r.PairID, r.ReferenceResponse)
		}
		fmt.Fprintf(&sb, "%d\t%s\t%s\t%s\t%s\n", r.UUID, r.PairID, r.TaskSource, r.RejectResponseFrom, r.ErrorType)
	}
	golden.Check(t, "testdata/fixtures_rows.golden.tsv", sb.String(), *update, "")
	again, _, _ := build(t, blobtest.NewMemory(), trbench.Builder{}, datasets.Request{Source: trbench.Embedded})
	if again.Version != plan.Version {
		t.Errorf("rebuild gave version %s, want %s", again.Version, plan.Version)
	}
}

func TestBuildFromToolPref(t *testing.T) {
	store := blobtest.NewMemory()
	_, tp, err := build(t, store, toolpref.Builder{}, datasets.Request{Source: toolpref.Embedded})
	if err != nil {
		t.Fatal(err)
	}
	plan, m, err := build(t, store, trbench.Builder{}, datasets.Request{Params: map[string]string{"toolpref": "latest"}})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Params["toolpref"] != tp.Version {
		t.Errorf("params %v: latest not pinned to %s", plan.Params, tp.Version)
	}
	rows := readRows(t, store, m)
	if int64(len(rows)) != tp.Rows {
		t.Fatalf("%d rows from %d toolpref pairs", len(rows), tp.Rows)
	}
	tpRows := map[string]schemas.ToolPrefPair{}
	for _, f := range tp.Files {
		prs, err := pq.ReadAll[schemas.ToolPrefPair](context.Background(), store, catalog.Dir(tp.Name, tp.Version)+f.Path)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range prs {
			tpRows[p.PairID] = p
		}
	}
	chosenNotReference := 0
	for _, r := range rows {
		checkRow(t, r)
		if r.ChosenReward <= r.RejectReward || r.PairSource != "toolpref@"+tp.Version {
			t.Errorf("%s: rewards %v/%v source %s", r.PairID, r.ChosenReward, r.RejectReward, r.PairSource)
		}
		// The reference is the item's ground truth, whatever the chosen
		// reply: the same for every pair of an item, and graded 1 by
		// toolpref's own scorer.
		it, err := toolpref.NewItem(r.TaskSource, fmt.Sprintf(`{"id": %q, "question": [%s], "function": %s}`, r.RawID, tpRows[r.PairID].MessagesJSON, r.ToolsJSON), tpRows[r.PairID].GroundTruthJSON)
		if err != nil {
			t.Fatal(err)
		}
		if score, errType, _ := it.Judge(r.ReferenceResponse); score != 1 || errType != "" {
			t.Errorf("%s: reference %q scores %v (%s)", r.PairID, r.ReferenceResponse, score, errType)
		}
		if r.ReferenceResponse != r.ChosenResponse {
			chosenNotReference++
		}
	}
	if chosenNotReference == 0 {
		t.Error("every chosen reply is the ground truth; the test does not cover references apart from chosen")
	}
}

func TestBuildBadInput(t *testing.T) {
	respLine := func(line string) func(t *testing.T, dir string) (string, int) {
		return func(t *testing.T, dir string) (string, int) {
			p := filepath.Join(dir, "responses.jsonl")
			f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(line + "\n")
			f.Close()
			b, _ := os.ReadFile(p)
			return "responses.jsonl", strings.Count(string(b), "\n")
		}
	}
	tests := []struct {
		name     string
		edit     func(t *testing.T, dir string) (string, int)
		req      datasets.Request
		contains string
	}{
		{"passing output", respLine(`{"id": "parallel_0", "model": "m/x", "response": "<tool_call>\n{\"name\": \"music.play\", \"arguments\": {\"artist\": \"Miles Davis\", \"minutes\": 15}}\n</tool_call>\n<tool_call>\n{\"name\": \"music.play\", \"arguments\": {\"artist\": \"Nina Simone\", \"minutes\": 20}}\n</tool_call>"}`),
			datasets.Request{}, "passes the BFCL checker"},
		{"unknown item", respLine(`{"id": "simple_python_9", "model": "m/x", "response": "no"}`), datasets.Request{}, `"simple_python_9" names no item`},
		{"bad JSON", respLine(`{"id": `), datasets.Request{}, "not a JSON object"},
		{"no responses file", func(t *testing.T, dir string) (string, int) {
			os.Remove(filepath.Join(dir, "responses.jsonl"))
			return "responses.jsonl", 0
		}, datasets.Request{}, "missing"},
		{"unknown param", func(*testing.T, string) (string, int) { return "params", 0 }, datasets.Request{Params: map[string]string{"seed": "1"}}, `unknown parameter "seed"`},
		{"no toolpref version", func(*testing.T, string) (string, int) { return "params", 0 }, datasets.Request{Params: map[string]string{"toolpref": "latest"}}, "toolpref=latest"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			filepath.Walk("fixtures", func(p string, info os.FileInfo, err error) error {
				if err != nil || info.IsDir() {
					return err
				}
				rel, _ := filepath.Rel("fixtures", p)
				b, _ := os.ReadFile(p)
				os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755)
				return os.WriteFile(filepath.Join(dir, rel), b, 0o644)
			})
			file, line := tc.edit(t, dir)
			req := tc.req
			if req.Params == nil {
				req.Source = dir
			}
			_, _, err := build(t, blobtest.NewMemory(), trbench.Builder{}, req)
			var ie *datasets.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v, want an InputError", err)
			}
			if !strings.HasSuffix(ie.File, file) || ie.Line != line || !strings.Contains(ie.Msg, tc.contains) {
				t.Errorf("got %s:%d %q, want %s:%d containing %q", ie.File, ie.Line, ie.Msg, file, line, tc.contains)
			}
		})
	}
}
