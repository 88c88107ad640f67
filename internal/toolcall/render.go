package toolcall

import (
	"errors"
	"fmt"
	"strings"
)

// GroundTruthCalls turns a BFCL ground truth (the decoded "ground_truth"
// field: a list of {func_name: {param: [acceptable values]}}) into the
// calls a correct model would make: each parameter takes its first
// acceptable value, and parameters whose first acceptable value is "" are
// omitted. Dict values (and lists of dicts) hold acceptable-value lists per
// key themselves and are collapsed the same way.
func GroundTruthCalls(gt any) ([]Call, error) {
	items, isList := gt.([]any)
	if !isList {
		return nil, errors.New("toolcall: ground truth is not a list")
	}
	calls := make([]Call, 0, len(items))
	for i, it := range items {
		obj, isObj := it.(*Object)
		if !isObj || obj.Len() != 1 {
			return nil, fmt.Errorf("toolcall: ground truth %d is not {func_name: {...}}", i)
		}
		name, pv := obj.At(0)
		params, isObj := pv.(*Object)
		if !isObj {
			return nil, fmt.Errorf("toolcall: ground truth %d: parameters of %s are not an object", i, name)
		}
		args := NewObject(params.Len())
		for j := 0; j < params.Len(); j++ {
			k, acc := params.At(j)
			l, isList := acc.([]any)
			if !isList {
				return nil, fmt.Errorf("toolcall: ground truth %d: %s.%s is not a list of acceptable values", i, name, k)
			}
			if v, ok := FirstAcceptable(l); ok {
				args.Set(k, v)
			}
		}
		calls = append(calls, Call{Name: name, Args: args})
	}
	return calls, nil
}

// FirstAcceptable renders a BFCL acceptable-values list as the value a
// correct model would send: its first entry, with dicts (and lists of
// dicts) collapsed the same way key by key. ok is false when the first
// entry is "" (the parameter may be omitted).
func FirstAcceptable(acc []any) (any, bool) {
	if len(acc) == 0 {
		return nil, false
	}
	if s, isStr := acc[0].(string); isStr && s == "" {
		return nil, false
	}
	return collapse(acc[0]), true
}

func collapse(v any) any {
	switch x := v.(type) {
	case *Object:
		out := NewObject(x.Len())
		for i := 0; i < x.Len(); i++ {
			k, val := x.At(i)
			if l, isList := val.([]any); isList {
				if fv, ok := FirstAcceptable(l); ok {
					out.Set(k, fv)
				}
				continue
			}
			out.Set(k, val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			if o, isObj := e.(*Object); isObj {
				out[i] = collapse(o)
			} else {
				out[i] = e
			}
		}
		return out
	}
	return v
}

// RenderHermes renders calls as Hermes/Qwen tool-call blocks, one per
// call, separated by newlines:
//
//	<tool_call>
//	{"name": "f", "arguments": {"a": 1}}
//	</tool_call>
//
// Argument order is kept and floats keep a '.', so ParseHermes returns the
// same calls. A Tuple renders as a JSON array.
func RenderHermes(calls []Call) (string, error) {
	var sb strings.Builder
	buf := make([]byte, 0, 256)
	for i, c := range calls {
		if i > 0 {
			sb.WriteByte('\n')
		}
		buf = buf[:0]
		buf = append(buf, `{"name": `...)
		var err error
		if buf, err = EncodeJSON(buf, c.Name); err != nil {
			return "", err
		}
		buf = append(buf, `, "arguments": `...)
		args := c.Args
		if args == nil {
			args = NewObject(0)
		}
		if buf, err = EncodeJSON(buf, args); err != nil {
			return "", fmt.Errorf("toolcall: render %s: %w", c.Name, err)
		}
		buf = append(buf, '}')
		sb.WriteString("<tool_call>\n")
		sb.Write(buf)
		sb.WriteString("\n</tool_call>")
	}
	return sb.String(), nil
}
