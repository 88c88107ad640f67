package taskfile

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/internal/toolcall"
	"github.com/benchline/benchline/scorers"
	"github.com/benchline/benchline/scorers/bfcl"
)

// Reply is a model's reply as the scorers see it: its text and, for a task
// that scores tool calls, the calls it makes, decoded.
type Reply struct {
	// Text is the first choice's content.
	Text string
	// Calls are the reply's function calls: its tool calls, or failing
	// those calls written in its text (Hermes <tool_call>, Python syntax,
	// JSON), as bfcl decodes them. Decoded only for a task with a
	// tool_calls scorer.
	Calls []toolcall.Call
	// CallsErr is set when the reply's calls do not decode.
	CallsErr error
	// ToolCalls are the first choice's tool calls as the endpoint returned
	// them (for scorers that grade them as they come, e.g. promptfoo's).
	ToolCalls []openai.ToolCall
}

// ReplyOf is resp as the scorers see it.
func (c *Compiled) ReplyOf(resp modelapi.Response) Reply {
	r := Reply{Text: resp.Text()}
	if len(resp.Choices) > 0 {
		r.ToolCalls = resp.Choices[0].ToolCalls
	}
	if c.toolCalls() == nil {
		return r
	}
	r.Calls, _, r.CallsErr = bfcl.ReplyCalls(resp)
	return r
}

// Shown is the reply as a result row shows it: its text, then its tool
// calls as name(arguments) lines.
func Shown(resp modelapi.Response) string {
	if len(resp.Choices) == 0 || len(resp.Choices[0].ToolCalls) == 0 {
		return resp.Text()
	}
	var sb strings.Builder
	if t := strings.TrimSpace(resp.Choices[0].Content); t != "" {
		sb.WriteString(t)
		sb.WriteByte('\n')
	}
	for _, tc := range resp.Choices[0].ToolCalls {
		fmt.Fprintf(&sb, "%s(%s)\n", tc.Function.Name, tc.Function.Arguments)
	}
	return strings.TrimSpace(sb.String())
}

// toolCalls is the tool_calls scorer: BFCL's AST checker (scorers/bfcl)
// on the reply's calls against the expected calls of a column, in BFCL's
// ground-truth format ([{func_name: {arg: [acceptable values]}}]).
type toolCalls struct {
	expected string
	// category is the BFCL category (auto when chosen by the row's
	// expected calls); catColumn, when set, names a column holding it.
	category, catColumn string
	// lang is the language; "" takes the category's (python unless it
	// names java or javascript).
	lang bfcl.Language
	// tools is the prompt.tools column: the functions offered.
	tools string
}

// ToolCategories are the values of tool_calls' category: auto (from the
// row's expected calls and functions) and BFCL's categories.
var ToolCategories = []string{"auto", "simple", "multiple", "parallel", "parallel_multiple", "irrelevance"}

// bfclCategories are BFCL's own category names, also accepted from a
// category column.
var bfclCategories = []string{"relevance", "simple_python", "simple_java", "simple_javascript", "live_simple",
	"live_multiple", "live_parallel", "live_parallel_multiple", "live_irrelevance", "live_relevance"}

func newToolCalls(s Scorer, spec *Spec) (scorer, error) {
	var p struct {
		Expected       string `yaml:"expected"`
		Category       string `yaml:"category"`
		CategoryColumn string `yaml:"category_column"`
		Language       string `yaml:"language"`
	}
	if err := params(s.Params, &p); err != nil {
		return nil, err
	}
	if spec.Prompt.Tools == "" {
		return nil, &paramError{key: "type", line: s.line, msg: "tool_calls checks calls against the functions offered: set prompt.tools"}
	}
	t := &toolCalls{expected: p.Expected, category: p.Category, catColumn: p.CategoryColumn, tools: spec.Prompt.Tools}
	switch {
	case p.Category != "" && p.CategoryColumn != "":
		return nil, &paramError{key: "category_column", line: paramLine(s.Params, "category_column"), msg: "give category or category_column, not both"}
	case p.Category == "" && p.CategoryColumn == "":
		t.category = "auto"
	case p.Category != "" && !slices.Contains(ToolCategories, p.Category):
		return nil, &paramError{key: "category", line: paramLine(s.Params, "category"), msg: fmt.Sprintf("%q: want one of %s (or category_column)", p.Category, strings.Join(ToolCategories, ", "))}
	}
	if p.Expected == "" && t.category != "irrelevance" {
		return nil, &paramError{key: "expected", line: s.line, msg: "is required: the column holding the expected calls ([{func_name: {arg: [acceptable values]}}])"}
	}
	if p.Language != "" {
		l, err := bfcl.ParseLanguage(p.Language)
		if err != nil {
			return nil, &paramError{key: "language", line: paramLine(s.Params, "language"), msg: fmt.Sprintf("%q: want python, java or javascript", p.Language)}
		}
		t.lang = l
	}
	return t, nil
}

// toolCalls is the task's first tool_calls scorer, nil when it has none.
func (c *Compiled) toolCalls() *toolCalls {
	for _, s := range c.scorers {
		if t, ok := s.(*toolCalls); ok {
			return t
		}
	}
	return nil
}

// toolItem is what the checker needs of a row.
type toolItem struct {
	category string
	lang     bfcl.Language
	funcs    []bfcl.Function
	answers  []bfcl.Answer
}

// item reads the row's category, functions and expected calls.
func (t *toolCalls) item(r Row) (toolItem, error) {
	it := toolItem{category: t.category}
	if t.catColumn != "" {
		v, ok := r.Fields[t.catColumn]
		s, isString := v.(string)
		if !ok || !isString || !(slices.Contains(ToolCategories, s) || slices.Contains(bfclCategories, s)) {
			return it, fmt.Errorf("column %q (category_column) is %v: want one of %s, %s", t.catColumn, v, strings.Join(ToolCategories, ", "), strings.Join(bfclCategories, ", "))
		}
		it.category = s
	}
	it.lang = t.lang
	if it.lang == "" {
		it.lang = bfcl.LanguageForCategory(it.category)
	}
	fv, err := columnValue(r.Fields, t.tools)
	if err != nil {
		return it, fmt.Errorf("column %q (prompt.tools): %w", t.tools, err)
	}
	if it.funcs, err = bfcl.FunctionsFromValue(bareFunctions(fv, it.lang)); err != nil {
		return it, fmt.Errorf("column %q (prompt.tools): %w", t.tools, err)
	}
	if t.expected != "" {
		if _, has := r.Fields[t.expected]; has || it.category != "irrelevance" {
			ev, err := columnValue(r.Fields, t.expected)
			if err != nil {
				return it, fmt.Errorf("column %q (expected): %w", t.expected, err)
			}
			if ev != nil {
				if it.answers, err = bfcl.AnswersFromValue(ev); err != nil {
					return it, fmt.Errorf("column %q (expected): %w", t.expected, err)
				}
			}
		}
	}
	if it.category == "auto" {
		switch {
		case len(it.answers) == 0:
			it.category = "irrelevance"
		case len(it.answers) > 1:
			it.category = "parallel"
		case len(it.funcs) == 1:
			it.category = "simple"
		default:
			it.category = "multiple"
		}
	}
	if len(it.answers) == 0 && !slices.Contains([]bfcl.Kind{bfcl.KindIrrelevance, bfcl.KindRelevance}, bfcl.CategoryKind(it.category)) {
		return it, fmt.Errorf("column %q (expected) lists no call, and the category is %s", t.expected, it.category)
	}
	return it, nil
}

// columnValue decodes a column holding JSON (or a string of JSON) in the
// checker's value model: whole numbers are ints, objects keep their order.
func columnValue(fields map[string]any, col string) (any, error) {
	v, ok := fields[col]
	if !ok {
		return nil, errors.New("is missing")
	}
	raw, isString := v.(string)
	if !isString {
		b, err := MarshalFields(v)
		if err != nil {
			return nil, err
		}
		raw = string(b)
	}
	return toolcall.DecodeJSON([]byte(raw))
}

// jsonSchemaTypes are JSON Schema's type names for BFCL's Python ones, so
// that functions written as OpenAI tools are checked as BFCL's are.
var jsonSchemaTypes = map[string]string{"object": "dict", "number": "float"}

// bareFunctions unwraps OpenAI tools ({"type": "function", "function":
// {...}}) into bare definitions and, for Python, names JSON Schema's types
// as BFCL does (object is dict, number is float).
func bareFunctions(v any, lang bfcl.Language) any {
	list, ok := v.([]any)
	if !ok {
		return v
	}
	out := make([]any, len(list))
	for i, x := range list {
		out[i] = x
		o, ok := x.(*toolcall.Object)
		if !ok {
			continue
		}
		if fn, ok := o.Get("function"); ok {
			if fo, ok := fn.(*toolcall.Object); ok {
				o = fo
				out[i] = fo
			}
		}
		if lang != bfcl.Python {
			continue
		}
		params, _ := o.Get("parameters")
		po, _ := params.(*toolcall.Object)
		props, _ := po.Get("properties")
		pr, _ := props.(*toolcall.Object)
		for j := 0; j < pr.Len(); j++ {
			_, p := pr.At(j)
			ps, _ := p.(*toolcall.Object)
			renameType(ps)
			if items, ok := ps.Get("items"); ok {
				io, _ := items.(*toolcall.Object)
				renameType(io)
			}
		}
	}
	return out
}

func renameType(o *toolcall.Object) {
	if o == nil {
		return
	}
	if t, ok := o.Get("type"); ok {
		if s, ok := t.(string); ok && jsonSchemaTypes[s] != "" {
			o.Set("type", jsonSchemaTypes[s])
		}
	}
}

func (t *toolCalls) checkRow(r Row) error {
	_, err := t.item(r)
	return err
}

// score applies BFCL's rule (scorers/bfcl's task's): no call is right for
// irrelevance only, calls that do not decode are wrong, else the AST
// checker decides. Call names are compared with dots as underscores (the
// names OpenAI's API allows), as BFCL does for such models.
func (t *toolCalls) score(reply Reply, r Row) (float64, string) {
	it, err := t.item(r)
	if err != nil {
		return 0, err.Error()
	}
	calls := make([]toolcall.Call, len(reply.Calls))
	for i, c := range reply.Calls {
		calls[i] = toolcall.Call{Name: bfcl.ToolName(c.Name), Args: c.Args}
	}
	switch bfcl.CategoryKind(it.category) {
	case bfcl.KindIrrelevance:
		if len(calls) == 0 {
			return 1, ""
		}
		return 0, "irrelevance_error:decoder_success: the reply calls a function where none should be called"
	case bfcl.KindRelevance:
		if len(calls) > 0 {
			return 1, ""
		}
		return 0, "relevance_error:decoder_failed: the reply calls no function"
	}
	if reply.CallsErr != nil {
		return 0, "ast_decoder:decoder_failed: " + clip(reply.CallsErr.Error())
	}
	if len(calls) == 0 {
		return 0, "ast_decoder:decoder_failed: the reply calls no function"
	}
	// Every name with dots as underscores: the functions' (offered as
	// written, or as OpenAI tools by names without dots), the expected
	// calls' and the reply's.
	funcs := make([]bfcl.Function, len(it.funcs))
	for i, f := range it.funcs {
		f.Name = bfcl.ToolName(f.Name)
		funcs[i] = f
	}
	answers := make([]bfcl.Answer, len(it.answers))
	for i, a := range it.answers {
		a.Name = bfcl.ToolName(a.Name)
		answers[i] = a
	}
	res := bfcl.Checker{UnderscoreToDot: true}.Check(it.lang, it.category, funcs, calls, answers)
	if res.Valid {
		return 1, ""
	}
	return 0, res.ErrorType + ": " + clip(res.Detail())
}

// reference is what baseline/reference answers a row: the expected calls
// with their first acceptable values (bfcl.ReferenceCalls), under the
// names the functions are offered by (offered names those of tools). It is
// false when the row has none.
func (t *toolCalls) reference(r Row, offered []string) ([]scorers.ToolCall, bool, error) {
	it, err := t.item(r)
	if err != nil {
		return nil, false, err
	}
	var out []scorers.ToolCall
	for _, c := range bfcl.ReferenceCalls(it.lang, it.funcs, it.answers) {
		args, err := toolcall.EncodeJSON(nil, c.Args)
		if err != nil {
			return nil, false, fmt.Errorf("reference call %s: %w", c.Name, err)
		}
		name := c.Name
		if !slices.Contains(offered, name) {
			name = bfcl.ToolName(name)
			for _, o := range offered {
				if bfcl.ToolName(o) == name {
					name = o
					break
				}
			}
		}
		out = append(out, scorers.ToolCall{Name: name, Arguments: args})
	}
	return out, len(out) > 0, nil
}

// CheckRow checks what the task's scorers read of a row beyond the prompt
// (tool_calls' expected calls, functions and category): the build runs it
// on every row of the test split.
func (c *Compiled) CheckRow(r Row) error {
	for i, s := range c.scorers {
		if rc, ok := s.(rowChecker); ok {
			if err := rc.checkRow(r); err != nil {
				return fmt.Errorf("scorers[%d] (%s): %w", i, c.Spec.Scorers[i].Metric(), err)
			}
		}
	}
	return nil
}
