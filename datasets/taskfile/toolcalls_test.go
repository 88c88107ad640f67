package taskfile

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/internal/toolcall"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
	scorer "github.com/benchline/benchline/scorers/bfcl"
	task "github.com/benchline/benchline/scorers/taskfile"
)

// bfclItem is one BFCL item as a task file's data row and as the bfcl
// dataset's row.
type bfclItem struct {
	row  schemas.BFCLItem
	line map[string]json.RawMessage
}

// readBFCLItems reads the Python single-turn items benchline carries: the
// embedded fixtures (datasets/bfcl/fixtures) and the slice of gorilla's
// release (datasets/bfcl/testdata/upstream).
func readBFCLItems(t *testing.T) []bfclItem {
	t.Helper()
	var out []bfclItem
	for _, dir := range []string{"../bfcl/fixtures", "../bfcl/testdata/upstream/data"} {
		for _, cat := range []string{"simple_python", "multiple", "parallel", "parallel_multiple"} {
			name := "BFCL_v4_" + cat + ".json"
			q, err := os.ReadFile(filepath.Join(dir, name))
			if os.IsNotExist(err) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			a, err := os.ReadFile(filepath.Join(dir, "possible_answer", name))
			if err != nil {
				t.Fatal(err)
			}
			answers := map[string]json.RawMessage{}
			for _, l := range lines(a) {
				var x struct {
					ID          string          `json:"id"`
					GroundTruth json.RawMessage `json:"ground_truth"`
				}
				if err := json.Unmarshal([]byte(l), &x); err != nil {
					t.Fatal(err)
				}
				answers[x.ID] = x.GroundTruth
			}
			for _, l := range lines(q) {
				var x struct {
					ID       string                           `json:"id"`
					Question [][]openai.ChatCompletionMessage `json:"question"`
					Function json.RawMessage                  `json:"function"`
				}
				if err := json.Unmarshal([]byte(l), &x); err != nil {
					t.Fatal(err)
				}
				gt, ok := answers[x.ID]
				if !ok || len(x.Question) == 0 {
					t.Fatalf("%s: %s has no answer or question", dir, x.ID)
				}
				turns, _ := json.Marshal(x.Question[:1])
				gts := string(gt)
				id := filepath.Base(filepath.Dir(dir)) + "-" + x.ID
				msgs := x.Question[0]
				q, _ := json.Marshal(msgs[len(msgs)-1].Content)
				c, _ := json.Marshal(cat)
				idj, _ := json.Marshal(id)
				out = append(out, bfclItem{
					row:  schemas.BFCLItem{ID: id, Category: cat, TurnsJSON: string(turns), FunctionsJSON: string(x.Function), GroundTruthJSON: &gts},
					line: map[string]json.RawMessage{"id": idj, "category": c, "question": q, "functions": x.Function, "ground_truth": gt},
				})
			}
		}
	}
	return out
}

func lines(b []byte) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			out = append(out, sc.Text())
		}
	}
	return out
}

// replyWith answers every request with resp.
type replyWith struct{ resp modelapi.Response }

func (r replyWith) Complete(context.Context, modelapi.Request) (modelapi.Response, error) {
	return r.resp, nil
}

func callsResponse(calls []scorers.ToolCall) modelapi.Response {
	ch := modelapi.Choice{}
	for i, c := range calls {
		ch.ToolCalls = append(ch.ToolCalls, openai.ToolCall{ID: fmt.Sprint("call_", i), Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: c.Name, Arguments: string(c.Arguments)}})
	}
	return modelapi.Response{Choices: []modelapi.Choice{ch}}
}

// perturb returns calls with the first call's arguments edited by edit.
func perturb(t *testing.T, calls []scorers.ToolCall, edit func(*toolcall.Object)) []scorers.ToolCall {
	t.Helper()
	out := append([]scorers.ToolCall(nil), calls...)
	v, err := toolcall.DecodeJSON(out[0].Arguments)
	if err != nil {
		t.Fatal(err)
	}
	o := v.(*toolcall.Object)
	edit(o)
	b, err := toolcall.EncodeJSON(nil, o)
	if err != nil {
		t.Fatal(err)
	}
	out[0].Arguments = b
	return out
}

// sameArgs reports whether two calls' arguments are the same values
// (ints and floats told apart), whatever their order.
func sameArgs(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	x, err1 := toolcall.DecodeJSON(a)
	y, err2 := toolcall.DecodeJSON(b)
	if err1 != nil || err2 != nil {
		t.Fatalf("arguments %s, %s: %v %v", a, b, err1, err2)
	}
	return reflect.DeepEqual(toolcall.Plain(x), toolcall.Plain(y))
}

// intsForFloats is v with whole floats as ints, in lists too.
func intsForFloats(v any) any {
	switch x := v.(type) {
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = intsForFloats(e)
		}
		return out
	}
	return v
}

// otherValue is a value unlike v of the same kind.
func otherValue(v any) any {
	switch x := v.(type) {
	case string:
		return x + " (not it)"
	case int64:
		return x + 17
	case float64:
		return x + 0.5
	case bool:
		return !x
	}
	return "not it"
}

// TestToolCallsScoreAsBFCL: a task file over BFCL items (the question as
// the prompt, the functions as its tools column, the ground truth as a
// tool_calls scorer's expected column), built as a build builds it and
// evaluated by its task, gives each reply the verdict the bfcl task gives
// the same reply on the same item: the reference calls and perturbed ones
// (wrong function, wrong value, missing argument, an extra call, no call),
// with the category from a column and chosen by the row (auto). The task
// file's baseline/reference answer is the bfcl task's, under the names
// each offers the functions by.
func TestToolCallsScoreAsBFCL(t *testing.T) {
	items := readBFCLItems(t)
	cats := map[string]bool{}
	for _, it := range items {
		cats[it.row.Category] = true
	}
	if len(items) < 10 || len(cats) != 4 {
		t.Fatalf("read %d items of categories %v: want the fixtures' and the upstream slice's, four categories", len(items), cats)
	}
	dir := t.TempDir()
	var data strings.Builder
	for _, it := range items {
		b, err := json.Marshal(it.line)
		if err != nil {
			t.Fatal(err)
		}
		data.Write(b)
		data.WriteByte('\n')
	}
	write(t, dir, "items.jsonl", data.String())
	write(t, dir, "tools.yaml", `name: tools
description: BFCL items as a task file
data: {test: {path: items.jsonl}}
columns: {category: category}
prompt:
  messages: [{role: user, content: "{{ question }}"}]
  tools: functions
scorers:
  - {type: tool_calls, expected: ground_truth, category_column: category}
  - {type: tool_calls, name: auto, expected: ground_truth}
`)
	ctx := context.Background()
	env := datasets.Env{Store: blobtest.NewMemory()}
	b := Builder{Dataset: "tools"}
	plan, err := b.Plan(ctx, env, datasets.Request{Source: filepath.Join(dir, "tools.yaml"), Task: true})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "tools.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := task.Load("tools.yaml", raw)
	if err != nil {
		t.Fatal(err)
	}
	tk := task.NewTask(c)
	byID := map[string]bfclItem{}
	for _, it := range items {
		byID[it.row.ID] = it
	}
	seen := 0
	for _, p := range plan.Parts {
		key := catalog.PartKey(plan.Dataset, plan.Version, p.Index)
		if _, err := b.WritePart(ctx, env, plan, p, key, func(int64) {}); err != nil {
			t.Fatal(err)
		}
		err := tk.ReadSamples(ctx, env.Store, key, 0, p.Rows, func(s scorers.Sample) error {
			seen++
			it, ok := byID[s.ID]
			if !ok {
				t.Fatalf("sample %s is no item's", s.ID)
			}
			bs := scorers.Sample{ID: it.row.ID, Category: it.row.Category, Row: &it.row}
			want, ok := scorer.Task{}.Reference(bs)
			if !ok {
				t.Fatalf("%s: the bfcl task has no reference", s.ID)
			}
			got, ok := tk.Reference(s)
			if !ok || len(got.ToolCalls) != len(want.ToolCalls) || got.ToolsHash == "" {
				t.Fatalf("%s: task file reference %+v, bfcl's %+v", s.ID, got, want)
			}
			for i := range got.ToolCalls {
				if scorer.ToolName(got.ToolCalls[i].Name) != want.ToolCalls[i].Name || !sameArgs(t, got.ToolCalls[i].Arguments, want.ToolCalls[i].Arguments) {
					t.Errorf("%s: reference call %d: task file %s(%s), bfcl %s(%s)", s.ID, i, got.ToolCalls[i].Name, got.ToolCalls[i].Arguments, want.ToolCalls[i].Name, want.ToolCalls[i].Arguments)
				}
			}
			ref := want.ToolCalls
			replies := map[string]modelapi.Response{
				"reference":      callsResponse(ref),
				"wrong function": callsResponse(append([]scorers.ToolCall{{Name: ref[0].Name + "_v2", Arguments: ref[0].Arguments}}, ref[1:]...)),
				"wrong value": callsResponse(perturb(t, ref, func(o *toolcall.Object) {
					k, v := o.At(0)
					o.Set(k, otherValue(v))
				})),
				"missing argument": callsResponse(perturb(t, ref, func(o *toolcall.Object) {
					n := toolcall.NewObject(o.Len())
					for i := 1; i < o.Len(); i++ {
						n.Set(o.At(i))
					}
					*o = *n
				})),
				"ints for floats": callsResponse(perturb(t, ref, func(o *toolcall.Object) {
					for i := 0; i < o.Len(); i++ {
						k, v := o.At(i)
						o.Set(k, intsForFloats(v))
					}
				})),
				"extra call":     callsResponse(append(append([]scorers.ToolCall(nil), ref...), ref[0])),
				"one call fewer": callsResponse(ref[:len(ref)-1]),
				"no call":        {Choices: []modelapi.Choice{{Content: "I cannot help with that."}}},
				"python text":    {Choices: []modelapi.Choice{{Content: "[" + ref[0].Name + "(x=1)]"}}},
			}
			for name, resp := range replies {
				bo, err := scorer.Task{}.Evaluate(ctx, scorers.Env{Models: replyWith{resp}}, bs)
				if err != nil {
					t.Fatal(err)
				}
				to, err := tk.Evaluate(ctx, scorers.Env{Models: replyWith{resp}}, s)
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range []string{"tool_calls", "auto"} {
					if to.Metrics[m] != bo.Metrics["accuracy"] {
						t.Errorf("%s (%s), reply %q: task file %s = %v (%+v), bfcl %v (%v)", s.ID, it.row.Category, name, m, to.Metrics[m], to.Details, bo.Metrics["accuracy"], bo.Details)
					}
				}
				if name == "reference" && to.Metrics["tool_calls"] != 1 {
					t.Errorf("%s: the reference scores %v: %+v", s.ID, to.Metrics["tool_calls"], to.Details)
				}
				if name == "reference" && to.Response != bo.Response {
					t.Errorf("%s: response %q, bfcl shows %q", s.ID, to.Response, bo.Response)
				}
			}
			// The task file's own reference (the names as offered) scores 1.
			to, err := tk.Evaluate(ctx, scorers.Env{Models: replyWith{callsResponse(got.ToolCalls)}}, s)
			if err != nil {
				t.Fatal(err)
			}
			if to.Metrics["tool_calls"] != 1 || to.Metrics["auto"] != 1 {
				t.Errorf("%s: the task file's reference scores %v: %+v", s.ID, to.Metrics, to.Details)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if seen != len(items) {
		t.Fatalf("evaluated %d samples of %d items", seen, len(items))
	}
}
