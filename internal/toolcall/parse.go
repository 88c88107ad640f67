package toolcall

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// ErrNoCalls is returned (wrapped) when the text holds no function call in
// any recognised format. Scorers treat it like any other decode failure;
// relevance scoring treats it as "no call".
var ErrNoCalls = errors.New("toolcall: no function call found")

var reToolCall = regexp.MustCompile(`(?s)<tool_call>(.*?)</tool_call>`)

// ParseHermes decodes Hermes/Qwen-style tool calls: one or more
// `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` blocks, with
// any text around or between them. "arguments" may also be a JSON string
// holding the object (as OpenAI-style models emit), or be absent (no
// arguments). A reply without blocks is ErrNoCalls; an unterminated block
// or a block that is not such an object is an error.
func ParseHermes(text string) ([]Call, error) {
	blocks := reToolCall.FindAllStringSubmatchIndex(text, -1)
	last := 0
	if len(blocks) > 0 {
		last = blocks[len(blocks)-1][1]
	}
	if strings.Contains(text[last:], "<tool_call>") {
		return nil, errors.New("toolcall: unterminated <tool_call> block")
	}
	if len(blocks) == 0 {
		return nil, ErrNoCalls
	}
	calls := make([]Call, 0, len(blocks))
	for i, b := range blocks {
		v, err := DecodeJSON([]byte(strings.TrimSpace(text[b[2]:b[3]])))
		if err != nil {
			return nil, fmt.Errorf("toolcall: <tool_call> block %d: %w", i, err)
		}
		c, err := callFromNameArgs(v)
		if err != nil {
			return nil, fmt.Errorf("toolcall: <tool_call> block %d: %w", i, err)
		}
		calls = append(calls, c)
	}
	return calls, nil
}

// callFromNameArgs reads {"name": ..., "arguments"|"parameters": {...}}.
func callFromNameArgs(v any) (Call, error) {
	obj, isObj := v.(*Object)
	if !isObj {
		return Call{}, errors.New(`want an object {"name": ..., "arguments": {...}}`)
	}
	nv, _ := obj.Get("name")
	name, isStr := nv.(string)
	if !isStr || name == "" {
		return Call{}, errors.New(`missing string "name"`)
	}
	av, found := obj.Get("arguments")
	if !found {
		av, found = obj.Get("parameters")
	}
	args, err := argumentsValue(av, found)
	if err != nil {
		return Call{}, fmt.Errorf("call %s: %w", name, err)
	}
	return Call{Name: name, Args: args}, nil
}

func argumentsValue(av any, found bool) (*Object, error) {
	if !found || av == nil {
		return NewObject(0), nil
	}
	if s, isStr := av.(string); isStr {
		if strings.TrimSpace(s) == "" {
			return NewObject(0), nil
		}
		decoded, err := DecodeJSON([]byte(s))
		if err != nil {
			return nil, fmt.Errorf("arguments string: %w", err)
		}
		av = decoded
	}
	args, isObj := av.(*Object)
	if !isObj {
		return nil, errors.New("arguments are not an object")
	}
	return args, nil
}

// ParseOpenAI decodes an OpenAI chat-completions tool-call payload: either
// the "tool_calls" array ([{"type": "function", "function": {"name",
// "arguments"}}]) or an assistant message object holding it. The
// "arguments" field is the JSON string the API returns (an object is
// accepted too). An empty or missing tool_calls is ErrNoCalls.
func ParseOpenAI(data []byte) ([]Call, error) {
	v, err := DecodeJSON(data)
	if err != nil {
		return nil, err
	}
	if obj, isObj := v.(*Object); isObj {
		tc, found := obj.Get("tool_calls")
		if !found {
			return nil, ErrNoCalls
		}
		v = tc
	}
	items, isList := v.([]any)
	if !isList {
		if v == nil {
			return nil, ErrNoCalls
		}
		return nil, errors.New("toolcall: tool_calls is not a list")
	}
	if len(items) == 0 {
		return nil, ErrNoCalls
	}
	calls := make([]Call, 0, len(items))
	for i, it := range items {
		obj, isObj := it.(*Object)
		if !isObj {
			return nil, fmt.Errorf("toolcall: tool_calls[%d] is not an object", i)
		}
		fn, _ := obj.Get("function")
		fo, isObj := fn.(*Object)
		if !isObj {
			return nil, fmt.Errorf("toolcall: tool_calls[%d] has no function object", i)
		}
		c, err := callFromNameArgs(fo)
		if err != nil {
			return nil, fmt.Errorf("toolcall: tool_calls[%d]: %w", i, err)
		}
		calls = append(calls, c)
	}
	return calls, nil
}

// FromOpenAI builds a Call from one OpenAI tool call's function name and
// JSON arguments string (e.g. go-openai's ToolCall.Function fields).
func FromOpenAI(name, arguments string) (Call, error) {
	if name == "" {
		return Call{}, errors.New("toolcall: empty function name")
	}
	args, err := argumentsValue(arguments, true)
	if err != nil {
		return Call{}, fmt.Errorf("toolcall: %s: %w", name, err)
	}
	return Call{Name: name, Args: args}, nil
}

// ParseJSON decodes bare JSON calls: an object or a list of objects, each
// either {"name": ..., "arguments"|"parameters": {...}} or BFCL's decoded
// form {func_name: {arg: value}}. A ```json fence around the JSON is
// ignored. An empty list is ErrNoCalls.
func ParseJSON(text string) ([]Call, error) {
	s := stripFence(text)
	v, err := DecodeJSON([]byte(s))
	if err != nil {
		return nil, err
	}
	items, isList := v.([]any)
	if !isList {
		items = []any{v}
	}
	if len(items) == 0 {
		return nil, ErrNoCalls
	}
	calls := make([]Call, 0, len(items))
	for i, it := range items {
		obj, isObj := it.(*Object)
		if !isObj {
			return nil, fmt.Errorf("toolcall: JSON call %d is not an object", i)
		}
		var c Call
		if obj.Has("name") {
			c, err = callFromNameArgs(obj)
		} else if fn, found := obj.Get("function"); found && obj.Len() <= 3 {
			c, err = callFromNameArgs(fn)
		} else if obj.Len() == 1 {
			name, args := obj.At(0)
			ao, isObj := args.(*Object)
			if !isObj {
				err = fmt.Errorf("arguments of %s are not an object", name)
			}
			c = Call{Name: name, Args: ao}
		} else {
			err = errors.New("not a recognised call object")
		}
		if err != nil {
			return nil, fmt.Errorf("toolcall: JSON call %d: %w", i, err)
		}
		calls = append(calls, c)
	}
	return calls, nil
}

func stripFence(text string) string {
	s := strings.TrimSpace(text)
	if strings.HasPrefix(s, "```") {
		s = strings.TrimPrefix(s, "```")
		if nl := strings.IndexByte(s, '\n'); nl >= 0 && !strings.ContainsAny(s[:nl], "{[") {
			s = s[nl+1:]
		}
		s = strings.TrimSuffix(strings.TrimSpace(s), "```")
	}
	return strings.TrimSpace(s)
}

// Format names a model-output syntax.
type Format string

// Output formats recognised by Parse.
const (
	FormatHermes Format = "hermes" // <tool_call> JSON blocks
	FormatJSON   Format = "json"   // bare JSON object(s)
	FormatPython Format = "python" // BFCL's [f(a=1), g(b=2)] syntax
)

// Parse decodes a model reply in whichever format it uses: Hermes blocks
// if it contains "<tool_call>", else bare JSON if it is a JSON object or
// list of call objects, else BFCL's Python-call syntax. It returns the
// format it used. Text that parses in no format is an error wrapping the
// Python parser's reason (or ErrNoCalls for empty text).
func Parse(text string) ([]Call, Format, error) {
	if strings.Contains(text, "<tool_call>") {
		calls, err := ParseHermes(text)
		return calls, FormatHermes, err
	}
	s := stripFence(text)
	if s == "" {
		return nil, FormatPython, ErrNoCalls
	}
	if s[0] == '{' || (s[0] == '[' && strings.HasPrefix(strings.TrimSpace(s[1:]), "{")) {
		if calls, err := ParseJSON(s); err == nil || errors.Is(err, ErrNoCalls) {
			return calls, FormatJSON, err
		}
	}
	calls, err := ParsePython(text)
	return calls, FormatPython, err
}
