package taskfile

import (
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/internal/toolcall"
	"github.com/benchline/benchline/scorers/bfcl"
	openai "github.com/sashabaranov/go-openai"
)

const toolBase = `name: t
description: a tool task
data:
  test: {path: data/test.jsonl}
prompt:
  messages:
    - {role: user, content: "{{ question }}"}
  tools: functions
`

// builtRow is fields as a built row's scorers see them: written to
// fields_json and read back.
func builtRow(t *testing.T, fields map[string]any) Row {
	t.Helper()
	raw, err := MarshalFields(fields)
	if err != nil {
		t.Fatal(err)
	}
	f, err := decodeFields(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	return Row{ID: "r1", Fields: f}
}

func toolReply(t *testing.T, calls ...string) Reply {
	t.Helper()
	var tcs []openai.ToolCall
	for _, c := range calls {
		name, args, _ := strings.Cut(c, " ")
		tcs = append(tcs, openai.ToolCall{Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: name, Arguments: args}})
	}
	c, err := Load("t.yaml", []byte(toolBase+"scorers: [{type: tool_calls, expected: gt}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	return c.ReplyOf(modelapi.Response{Choices: []modelapi.Choice{{ToolCalls: tcs}}})
}

// TestToolCalls: the tool_calls scorer's verdict on rows as built (the
// data's whole floats kept floats) equals BFCL's checker's on the item's
// own JSON, and the cases BFCL's checker does not decide (no call, names
// with dots) follow its task's rules.
func TestToolCalls(t *testing.T) {
	funcs := `[{"name": "stats.mean", "description": "Mean.", "parameters": {"type": "dict", "properties": {"xs": {"type": "array", "items": {"type": "float"}}, "w": {"type": "float"}}, "required": ["xs"]}}]`
	gt := `[{"stats.mean": {"xs": [[1.0, 2.0]], "w": [1.0, ""]}}]`
	openAITools := `[{"type": "function", "function": {"name": "stats_mean", "parameters": {"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "number"}}, "w": {"type": "number"}}, "required": ["xs"]}}}]`
	cases := []struct {
		name    string
		tools   string
		scorer  string
		gt      string
		reply   []string
		want    float64
		checker bool // compare with bfcl.Check on the item's own JSON
	}{
		{"right", funcs, "{type: tool_calls, expected: gt}", gt, []string{`stats_mean {"xs": [1.0, 2.0]}`}, 1, true},
		{"dotted name", funcs, "{type: tool_calls, expected: gt}", gt, []string{`stats.mean {"xs": [1.0, 2.0]}`}, 1, false},
		{"ints in a float array", funcs, "{type: tool_calls, expected: gt}", gt, []string{`stats_mean {"xs": [1, 2]}`}, 0, true},
		{"an int for a float", funcs, "{type: tool_calls, expected: gt}", gt, []string{`stats_mean {"xs": [1.0, 2.0], "w": 1}`}, 1, true},
		{"wrong value", funcs, "{type: tool_calls, expected: gt}", gt, []string{`stats_mean {"xs": [1.0, 3.0]}`}, 0, true},
		{"two calls", funcs, "{type: tool_calls, expected: gt}", gt, []string{`stats_mean {"xs": [1.0, 2.0]}`, `stats_mean {"xs": [1.0, 2.0]}`}, 0, true},
		{"no call", funcs, "{type: tool_calls, expected: gt}", gt, nil, 0, false},
		{"OpenAI tools", openAITools, "{type: tool_calls, expected: gt}", gt, []string{`stats_mean {"xs": [1.0, 2.0], "w": 1.0}`}, 1, false},
		{"OpenAI tools, multiple", openAITools, "{type: tool_calls, expected: gt, category: multiple}", gt, []string{`stats_mean {"xs": [1.0, 2.0]}`}, 1, false},
		{"irrelevance by auto", funcs, "{type: tool_calls, expected: gt}", `[]`, nil, 1, false},
		{"irrelevance called", funcs, "{type: tool_calls, expected: gt}", `[]`, []string{`stats_mean {"xs": [1.0]}`}, 0, false},
		{"parallel", funcs, "{type: tool_calls, expected: gt, category: parallel}", `[{"stats.mean": {"xs": [[1.0]]}}, {"stats.mean": {"xs": [[2.0]]}}]`,
			[]string{`stats_mean {"xs": [2.0]}`, `stats_mean {"xs": [1.0]}`}, 1, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Load("t.yaml", []byte(toolBase+"scorers: ["+tc.scorer+"]\n"))
			if err != nil {
				t.Fatal(err)
			}
			fields := map[string]any{"question": "q"}
			for k, v := range map[string]string{"functions": tc.tools, "gt": tc.gt} {
				x, err := decodeFields(`{"v": ` + v + `}`)
				if err != nil {
					t.Fatal(err)
				}
				fields[k] = x["v"]
			}
			reply := toolReply(t, tc.reply...)
			m, vs := c.Score(builtRow(t, fields), reply)
			if m["tool_calls"] != tc.want {
				t.Errorf("score %v (%s), want %v", m["tool_calls"], vs[0].Why, tc.want)
			}
			if tc.want == 0 && vs[0].Why == "" {
				t.Error("a 0 without a reason")
			}
			if !tc.checker {
				return
			}
			fv, _ := toolcall.DecodeJSON([]byte(tc.tools))
			gv, _ := toolcall.DecodeJSON([]byte(tc.gt))
			fs, err := bfcl.FunctionsFromValue(fv)
			if err != nil {
				t.Fatal(err)
			}
			as, err := bfcl.AnswersFromValue(gv)
			if err != nil {
				t.Fatal(err)
			}
			cat := "simple"
			if len(as) > 1 {
				cat = "parallel"
			}
			r := bfcl.Checker{UnderscoreToDot: true}.Check(bfcl.Python, cat, fs, reply.Calls, as)
			if r.Valid != (m["tool_calls"] == 1) {
				t.Errorf("score %v (%s), BFCL's checker %v (%s)", m["tool_calls"], vs[0].Why, r.Valid, r.ErrorType)
			}
		})
	}
}

// TestToolCallsBadParams: tool_calls' parameters fail at compile naming
// the key.
func TestToolCallsBadParams(t *testing.T) {
	cases := []struct {
		name, file string
		want       []string
	}{
		{"unknown parameter", toolBase + "scorers: [{type: tool_calls, expected: gt, expect: gt}]\n", []string{"t.yaml:9", "scorers[0].expect", "not a parameter"}},
		{"no tools", strings.Replace(toolBase, "  tools: functions\n", "", 1) + "scorers: [{type: tool_calls, expected: gt}]\n", []string{"scorers[0].type", "prompt.tools"}},
		{"no expected", toolBase + "scorers: [{type: tool_calls}]\n", []string{"scorers[0].expected", "required"}},
		{"bad category", toolBase + "scorers: [{type: tool_calls, expected: gt, category: live}]\n", []string{"scorers[0].category", `"live"`, "parallel_multiple"}},
		{"both categories", toolBase + "scorers: [{type: tool_calls, expected: gt, category: simple, category_column: c}]\n", []string{"scorers[0].category_column", "not both"}},
		{"bad language", toolBase + "scorers: [{type: tool_calls, expected: gt, language: rust}]\n", []string{"scorers[0].language", `"rust"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load("t.yaml", []byte(tc.file))
			if err == nil {
				t.Fatal("loaded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestToolCallsCheckRow: a row whose expected calls, functions or category
// the scorer cannot read fails CheckRow (the build) naming the column.
func TestToolCallsCheckRow(t *testing.T) {
	c, err := Load("t.yaml", []byte(toolBase+"scorers: [{type: tool_calls, expected: gt, category_column: cat}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	fn := []any{map[string]any{"name": "f", "parameters": map[string]any{"type": "dict", "properties": map[string]any{}}}}
	good := []any{map[string]any{"f": map[string]any{}}}
	cases := []struct {
		name   string
		fields map[string]any
		want   string // "" when the row is good
	}{
		{"good", map[string]any{"functions": fn, "gt": good, "cat": "simple"}, ""},
		{"BFCL category", map[string]any{"functions": fn, "gt": good, "cat": "live_simple"}, ""},
		{"irrelevance needs no expected", map[string]any{"functions": fn, "cat": "irrelevance"}, ""},
		{"expected missing", map[string]any{"functions": fn, "cat": "simple"}, `column "gt" (expected): is missing`},
		{"expected not calls", map[string]any{"functions": fn, "gt": "f(x=1)", "cat": "simple"}, `column "gt" (expected)`},
		{"expected empty", map[string]any{"functions": fn, "gt": []any{}, "cat": "simple"}, "lists no call"},
		{"unknown category", map[string]any{"functions": fn, "gt": good, "cat": "simpel"}, `column "cat" (category_column)`},
		{"functions not a list", map[string]any{"functions": "x", "gt": good, "cat": "simple"}, `column "functions" (prompt.tools)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := c.CheckRow(Row{ID: "r1", Fields: tc.fields})
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("CheckRow: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "scorers[0] (tool_calls)")):
				t.Errorf("CheckRow: %v, want an error naming the scorer and %q", err, tc.want)
			}
		})
	}
}
