package bfcl

import (
	"fmt"
	"strings"

	"github.com/benchline/benchline/internal/toolcall"
)

// Function is a function description from a BFCL item ("function" field),
// reduced to what the checker uses.
type Function struct {
	// Name is the function name, e.g. "math.factorial".
	Name string
	// Params maps each declared parameter to its schema.
	Params map[string]Param
	// params lists Params in schema order for cache-friendly lookup (see param).
	params []namedParam
	// Required lists the required parameters.
	Required []string

	// dotName is dotOf with every "." replaced by "_" (the name a model
	// with underscore_to_dot calls), computed once by FunctionsFromValue
	// for dotOf = Name; the checker uses it only while Name is still dotOf.
	dotOf, dotName string
}

type namedParam struct {
	name string
	Param
}

// param looks a parameter up; Functions built by hand (without
// FunctionsFromValue) fall back to the map.
func (f *Function) param(name string) (*Param, bool) {
	if len(f.params) != len(f.Params) {
		p, ok := f.Params[name]
		return &p, ok
	}
	for i := range f.params {
		if sameString(f.params[i].name, name) {
			return &f.params[i].Param, true
		}
	}
	return nil, false
}

// Param is the schema of one parameter.
type Param struct {
	// Type is the BFCL type name ("integer", "string", "array", "Array",
	// "HashMap", "Boolean", ...). HasType is false when the schema has none.
	Type    string
	HasType bool
	// ItemsType is items.type for collection parameters; HasItems is false
	// when the schema has no items.type.
	ItemsType string
	HasItems  bool
}

// Answer is one expected call of a ground truth: the function name and,
// per parameter, the list of acceptable values. A "" among the acceptable
// values means the parameter may be omitted.
type Answer struct {
	Name   string
	Params []AnswerParam
}

// AnswerParam is one parameter of an Answer.
type AnswerParam struct {
	Name       string
	Acceptable []any
}

func (a *Answer) get(name string) ([]any, bool) {
	for i := range a.Params {
		if sameString(a.Params[i].Name, name) {
			return a.Params[i].Acceptable, true
		}
	}
	return nil, false
}

// FunctionsFromValue converts a decoded "function" field (a list of
// function-description objects, or a single one) into Functions.
func FunctionsFromValue(v any) ([]Function, error) {
	var items []any
	switch x := v.(type) {
	case []any:
		items = x
	case *toolcall.Object:
		items = []any{x}
	default:
		return nil, fmt.Errorf("bfcl: functions: want a list of objects, got %s", typeOf(v))
	}
	out := make([]Function, 0, len(items))
	for i, it := range items {
		obj, ok := it.(*toolcall.Object)
		if !ok {
			return nil, fmt.Errorf("bfcl: functions[%d]: want an object, got %s", i, typeOf(it))
		}
		var f Function
		name, _ := obj.Get("name")
		if f.Name, ok = name.(string); !ok {
			return nil, fmt.Errorf("bfcl: functions[%d]: missing string name", i)
		}
		params, _ := obj.Get("parameters")
		pobj, _ := params.(*toolcall.Object)
		props, _ := pobj.Get("properties")
		propObj, _ := props.(*toolcall.Object)
		f.Params = make(map[string]Param, propObj.Len())
		for j := 0; j < propObj.Len(); j++ {
			k, pv := propObj.At(j)
			ps, _ := pv.(*toolcall.Object)
			var p Param
			if t, ok := getString(ps, "type"); ok {
				p.Type, p.HasType = t, true
			}
			if items, ok := ps.Get("items"); ok {
				if io, ok := items.(*toolcall.Object); ok {
					if t, ok := getString(io, "type"); ok {
						p.ItemsType, p.HasItems = t, true
					}
				}
			}
			f.Params[k] = p
			f.params = append(f.params, namedParam{k, p})
		}
		if req, ok := pobj.Get("required"); ok {
			rl, ok := req.([]any)
			if !ok {
				return nil, fmt.Errorf("bfcl: functions[%d]: required is not a list", i)
			}
			for _, r := range rl {
				s, ok := r.(string)
				if !ok {
					return nil, fmt.Errorf("bfcl: functions[%d]: required entry is not a string", i)
				}
				f.Required = append(f.Required, s)
			}
		}
		f.dotOf, f.dotName = f.Name, strings.ReplaceAll(f.Name, ".", "_")
		out = append(out, f)
	}
	return out, nil
}

func getString(o *toolcall.Object, key string) (string, bool) {
	v, ok := o.Get(key)
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	return s, ok
}

// AnswersFromValue converts a decoded ground truth (a list of
// {func_name: {param: [acceptable values]}} objects) into Answers.
func AnswersFromValue(v any) ([]Answer, error) {
	items, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("bfcl: possible_answer: want a list, got %s", typeOf(v))
	}
	out := make([]Answer, 0, len(items))
	for i, it := range items {
		obj, ok := it.(*toolcall.Object)
		if !ok || obj.Len() != 1 {
			return nil, fmt.Errorf("bfcl: possible_answer[%d]: want an object with one function name", i)
		}
		name, pv := obj.At(0)
		params, ok := pv.(*toolcall.Object)
		if !ok {
			return nil, fmt.Errorf("bfcl: possible_answer[%d]: parameters of %q are not an object", i, name)
		}
		a := Answer{Name: name, Params: make([]AnswerParam, 0, params.Len())}
		for j := 0; j < params.Len(); j++ {
			k, acc := params.At(j)
			l, ok := acc.([]any)
			if !ok {
				return nil, fmt.Errorf("bfcl: possible_answer[%d]: acceptable values of %q.%q are not a list", i, name, k)
			}
			a.Params = append(a.Params, AnswerParam{Name: k, Acceptable: l})
		}
		out = append(out, a)
	}
	return out, nil
}

// CallsFromValue converts decoded model output in BFCL's format, a list of
// {func_name: {arg: value}} objects, into Calls. It reports false when the
// value is not in that format (the reference's
// is_function_calling_format_output check).
func CallsFromValue(v any) ([]Call, bool) {
	items, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]Call, 0, len(items))
	for _, it := range items {
		obj, ok := it.(*toolcall.Object)
		if !ok || obj.Len() != 1 {
			return nil, false
		}
		name, args := obj.At(0)
		ao, ok := args.(*toolcall.Object)
		if !ok {
			return nil, false
		}
		out = append(out, Call{Name: name, Args: ao})
	}
	return out, true
}
