package bfcl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/internal/refkey"
	"github.com/benchline/benchline/internal/toolcall"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
)

// Task evaluates a model on the bfcl dataset the way BFCL's function-calling
// (FC) mode does: the item's functions are passed as tools (dots in names
// become underscores, BFCL types become JSON-schema types, Java and
// JavaScript parameters become strings), the reply's tool calls (or, failing
// those, calls written in the text) are decoded and checked by the AST
// checker. The metric is accuracy (1 valid, 0 not).
type Task struct{}

var _ scorers.Task = Task{}
var _ scorers.ReferenceProvider = Task{}

func (Task) Dataset() string   { return "bfcl" }
func (Task) Version() string   { return "1" }
func (Task) Metrics() []string { return []string{"accuracy"} }

// ReadSamples implements scorers.Task.
func (Task) ReadSamples(ctx context.Context, store blob.Store, key string, start, n int64, fn func(scorers.Sample) error) error {
	return scorers.ReadRows(ctx, store, key, start, n,
		func(it *schemas.BFCLItem) string { return it.ID }, func(it *schemas.BFCLItem) string { return it.Category }, fn)
}

// item is a decoded BFCL row.
type item struct {
	row     *schemas.BFCLItem
	lang    Language
	funcs   []Function
	answers []Answer
	Prompt
}

// Prompt is what BFCL's function-calling (FC) mode sends for an item: its
// first turn, with its functions as tools (dots in names become
// underscores, BFCL types become JSON-schema types, Java and JavaScript
// parameters become strings with a note). Names maps each tool name sent
// back to the BFCL function name.
type Prompt struct {
	Messages []openai.ChatCompletionMessage
	Tools    []openai.Tool
	Names    map[string]string
}

// NewPrompt builds the FC-mode prompt of an item of category whose first
// turn is messages and whose BFCL function list ("function") is
// functionsJSON. Evaluate sends exactly this; other users of BFCL-format
// items (the toolpref candidate sampler) send it too.
func NewPrompt(category string, messages []openai.ChatCompletionMessage, functionsJSON string) (Prompt, error) {
	var raw []map[string]any
	if err := json.Unmarshal([]byte(functionsJSON), &raw); err != nil {
		return Prompt{}, fmt.Errorf("bfcl: functions: %w", err)
	}
	p := Prompt{Messages: messages, Names: map[string]string{}}
	lang := LanguageForCategory(category)
	for _, f := range raw {
		t := toTool(f, lang)
		p.Names[t.Function.Name] = fmt.Sprint(f["name"])
		p.Tools = append(p.Tools, t)
	}
	return p, nil
}

// Reference is the baseline reference answer to the prompt: calls (BFCL
// function names, e.g. ReferenceCalls) as tool calls under the tool names
// sent, keyed by the conversation and the tools offered.
func (p Prompt) Reference(calls []Call) (scorers.Reference, error) {
	ref := scorers.Reference{Messages: p.Messages, ToolsHash: refkey.ToolsHash(p.Tools)}
	for _, c := range calls {
		args, err := toolcall.EncodeJSON(nil, c.Args)
		if err != nil {
			return ref, fmt.Errorf("bfcl: reference call %s: %w", c.Name, err)
		}
		ref.ToolCalls = append(ref.ToolCalls, scorers.ToolCall{Name: ToolName(c.Name), Arguments: args})
	}
	return ref, nil
}

func decodeSample(s scorers.Sample) (*item, error) {
	row, ok := s.Row.(*schemas.BFCLItem)
	if !ok {
		return nil, fmt.Errorf("bfcl: sample %s: %w: row is %T", s.ID, scorers.ErrBadSample, s.Row)
	}
	it := &item{row: row, lang: LanguageForCategory(row.Category)}
	fv, err := toolcall.DecodeJSON([]byte(row.FunctionsJSON))
	if err != nil {
		return nil, fmt.Errorf("bfcl: sample %s: %w: functions_json: %w", s.ID, scorers.ErrBadSample, err)
	}
	if it.funcs, err = FunctionsFromValue(fv); err != nil {
		return nil, fmt.Errorf("bfcl: sample %s: %w: %w", s.ID, scorers.ErrBadSample, err)
	}
	if row.GroundTruthJSON != nil {
		gv, err := toolcall.DecodeJSON([]byte(*row.GroundTruthJSON))
		if err != nil {
			return nil, fmt.Errorf("bfcl: sample %s: %w: ground_truth_json: %w", s.ID, scorers.ErrBadSample, err)
		}
		if it.answers, err = AnswersFromValue(gv); err != nil {
			return nil, fmt.Errorf("bfcl: sample %s: %w: %w", s.ID, scorers.ErrBadSample, err)
		}
	}
	var turns [][]openai.ChatCompletionMessage
	if err := json.Unmarshal([]byte(row.TurnsJSON), &turns); err != nil || len(turns) == 0 {
		return nil, fmt.Errorf("bfcl: sample %s: %w: turns_json is not a list of turns", s.ID, scorers.ErrBadSample)
	}
	// Single-turn categories: one turn.
	if it.Prompt, err = NewPrompt(row.Category, turns[0], row.FunctionsJSON); err != nil {
		return nil, fmt.Errorf("bfcl: sample %s: %w: functions_json: %w", s.ID, scorers.ErrBadSample, err)
	}
	return it, nil
}

// openAPIType maps BFCL parameter types to JSON-schema types (as BFCL's
// FC handlers do).
var openAPIType = map[string]string{
	"integer": "integer", "number": "number", "float": "number", "string": "string", "boolean": "boolean",
	"bool": "boolean", "array": "array", "list": "array", "dict": "object", "object": "object", "tuple": "array",
	"any": "string", "byte": "integer", "short": "integer", "long": "integer", "double": "number", "char": "string",
	"ArrayList": "array", "Array": "array", "HashMap": "object", "Hashtable": "object", "Queue": "array",
	"Stack": "array", "Any": "string", "String": "string", "Bigint": "integer",
}

// ToolName is the tool name sent for a BFCL function name (OpenAI allows
// only [a-zA-Z0-9_-] in names).
func ToolName(name string) string { return strings.ReplaceAll(name, ".", "_") }

func toTool(f map[string]any, lang Language) openai.Tool {
	name := fmt.Sprint(f["name"])
	desc, _ := f["description"].(string)
	params, _ := f["parameters"].(map[string]any)
	params = convertSchema(params, lang, true).(map[string]any)
	if lang == Java || lang == JavaScript {
		desc += fmt.Sprintf(" Note that the provided function is in %s. Give every argument as a string of %s source.", langName(lang), langName(lang))
	}
	return openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: ToolName(name), Description: desc, Parameters: params}}
}

func langName(l Language) string {
	if l == Java {
		return "Java 8 SDK syntax"
	}
	return "JavaScript"
}

func convertSchema(v any, lang Language, top bool) any {
	m, ok := v.(map[string]any)
	if !ok {
		if v == nil && top {
			return map[string]any{"type": "object", "properties": map[string]any{}}
		}
		return v
	}
	out := make(map[string]any, len(m))
	for k, val := range m {
		switch k {
		case "type":
			if t, ok := val.(string); ok {
				if mapped, ok := openAPIType[t]; ok {
					out[k] = mapped
					continue
				}
			}
			out[k] = val
		case "properties":
			props, _ := val.(map[string]any)
			np := make(map[string]any, len(props))
			for pk, pv := range props {
				c := convertSchema(pv, lang, false)
				if cm, ok := c.(map[string]any); ok && top && (lang == Java || lang == JavaScript) {
					// Java and JavaScript values are given as source strings.
					cm = cloneMap(cm)
					cm["type"] = "string"
					delete(cm, "items")
					delete(cm, "properties")
					c = cm
				}
				np[pk] = c
			}
			out[k] = np
		case "items":
			out[k] = convertSchema(val, lang, false)
		default:
			out[k] = val
		}
	}
	return out
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Evaluate asks the model with the item's functions as tools and checks the
// calls it makes.
func (Task) Evaluate(ctx context.Context, env scorers.Env, s scorers.Sample) (scorers.Outcome, error) {
	it, err := decodeSample(s)
	if err != nil {
		return scorers.Outcome{}, err
	}
	req := env.Request(it.Messages, it.Tools)
	resp, err := env.Models.Complete(ctx, req)
	out := scorers.Outcome{PromptHash: promptHash(it)}
	if err != nil {
		return out, err
	}
	out.Usage.Add(resp.Usage)
	calls, text, perr := ReplyCalls(resp)
	out.Response = text
	valid, errorType := score(it, calls, perr)
	if valid {
		out.Metrics = map[string]float64{"accuracy": 1}
	} else {
		out.Metrics = map[string]float64{"accuracy": 0}
	}
	details := map[string]any{"error_type": errorType}
	// A reply that holds no decodable call is the right answer to an
	// irrelevance item, not a parse failure.
	if perr != nil && CategoryKind(it.row.Category) != KindIrrelevance {
		out.ModelError, out.ModelMsg = "unparseable", perr.Error()
		details["parse_error"] = perr.Error()
	}
	out.Details = details
	return out, nil
}

// score applies BFCL's rule for the item's category. A reply with no
// decodable calls is "no call": valid for irrelevance, invalid otherwise.
func score(it *item, calls []Call, perr error) (bool, string) {
	switch CategoryKind(it.row.Category) {
	case KindIrrelevance:
		if len(calls) == 0 {
			return true, ""
		}
		return false, "irrelevance_error:decoder_success"
	case KindRelevance:
		if len(calls) > 0 {
			return true, ""
		}
		return false, "relevance_error:decoder_failed"
	}
	if perr != nil || len(calls) == 0 {
		return false, "ast_decoder:decoder_failed"
	}
	r := Checker{UnderscoreToDot: true}.Check(it.lang, it.row.Category, it.funcs, calls, it.answers)
	return r.Valid, r.ErrorType
}

// ReplyCalls decodes the model's calls: OpenAI tool_calls first, else calls
// written in the reply text (Hermes <tool_call>, Python syntax, JSON). It
// also returns the reply as text (tool calls as "name(arguments)" lines).
// Call names are as the model wrote them (tool names sent, see
// Prompt.Names). A reply without any call returns no calls and no error; a
// reply that does not decode returns the parser's error.
func ReplyCalls(resp modelapi.Response) ([]Call, string, error) {
	if len(resp.Choices) == 0 {
		return nil, "", errors.New("bfcl: the reply has no choices")
	}
	ch := resp.Choices[0]
	if len(ch.ToolCalls) > 0 {
		var calls []Call
		var sb strings.Builder
		for _, tc := range ch.ToolCalls {
			c, err := toolcall.FromOpenAI(tc.Function.Name, tc.Function.Arguments)
			if err != nil {
				return nil, tc.Function.Name + "(" + tc.Function.Arguments + ")", err
			}
			calls = append(calls, c)
			fmt.Fprintf(&sb, "%s(%s)\n", tc.Function.Name, tc.Function.Arguments)
		}
		return calls, strings.TrimSpace(sb.String()), nil
	}
	if strings.TrimSpace(ch.Content) == "" {
		return nil, "", nil
	}
	calls, _, err := toolcall.Parse(ch.Content)
	if errors.Is(err, toolcall.ErrNoCalls) {
		return nil, ch.Content, nil
	}
	return calls, ch.Content, err
}

func promptHash(it *item) string {
	b, _ := json.Marshal(struct {
		M []openai.ChatCompletionMessage
		T []openai.Tool
	}{it.Messages, it.Tools})
	return scorers.PromptHash(string(b))
}

// Reference is the answer baseline/reference gives: the ground truth's
// calls (first acceptable values) as tool calls; no call for irrelevance;
// a call to the first function for relevance.
func (Task) Reference(s scorers.Sample) (scorers.Reference, bool) {
	it, err := decodeSample(s)
	if err != nil {
		return scorers.Reference{}, false
	}
	ref := scorers.Reference{Messages: it.Messages, ToolsHash: refkey.ToolsHash(it.Tools)}
	switch CategoryKind(it.row.Category) {
	case KindIrrelevance:
		ref.Content = "None of the available functions can answer this request."
		return ref, true
	case KindRelevance:
		if len(it.Tools) == 0 {
			return ref, false
		}
		ref.ToolCalls = []scorers.ToolCall{{Name: it.Tools[0].Function.Name, Arguments: json.RawMessage("{}")}}
		return ref, true
	}
	ref, err = it.Prompt.Reference(ReferenceCalls(it.lang, it.funcs, it.answers))
	return ref, err == nil
}
