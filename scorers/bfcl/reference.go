package bfcl

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/benchline/benchline/internal/toolcall"
)

func isOmittable(v any) bool { s, ok := v.(string); return ok && s == "" }

// ReferenceCalls renders a ground truth as the decoded output of a model
// that answers it correctly: each parameter takes its first acceptable value
// (a required one its first non-"" value), omittable ones are left out, and
// Java and JavaScript values become the source strings BFCL's decoders
// yield. baseline/reference answers with these calls.
func ReferenceCalls(lang Language, funcs []Function, answers []Answer) []Call {
	calls := make([]Call, 0, len(answers))
	for _, a := range answers {
		fn := findDescription(funcs, a.Name)
		args := toolcall.NewObject(len(a.Params))
		for _, p := range a.Params {
			v, ok := toolcall.FirstAcceptable(p.Acceptable)
			if !ok && fn != nil && slices.Contains(fn.Required, p.Name) {
				// A required parameter cannot be omitted: use its first
				// non-"" acceptable value (some items list "" first).
				for i, a := range p.Acceptable {
					if !isOmittable(a) {
						v, ok = toolcall.FirstAcceptable(p.Acceptable[i:])
						break
					}
				}
			}
			if !ok {
				continue
			}
			if lang != Python && fn != nil {
				sch := fn.Params[p.Name]
				if lang == Java {
					v = javaSource(v, sch.Type, sch.ItemsType)
				} else {
					v = jsSource(v, sch.Type, sch.ItemsType)
				}
			}
			args.Set(p.Name, v)
		}
		calls = append(calls, Call{Name: a.Name, Args: args})
	}
	return calls
}

func scalarSource(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return toolcall.PyFloatRepr(x)
	}
	b, _ := toolcall.EncodeJSON(nil, v)
	return string(b)
}

var javaElemTypes = map[string]string{
	"String": "String", "char": "char", "integer": "int", "long": "long", "float": "float",
	"double": "double", "boolean": "boolean", "byte": "byte", "short": "short", "any": "Object",
}

// javaLiteral renders an element inside a Java collection literal.
func javaLiteral(v any, typ string) string {
	switch x := v.(type) {
	case string:
		if typ == "char" {
			return "'" + x + "'"
		}
		return strconv.Quote(x)
	case int64:
		switch typ {
		case "long":
			return strconv.FormatInt(x, 10) + "L"
		case "float":
			return strconv.FormatInt(x, 10) + "f"
		}
	case float64:
		if typ == "float" {
			return toolcall.PyFloatRepr(x) + "f"
		}
	}
	return scalarSource(v)
}

// javaSource renders a value the way BFCL's Java decoder returns a correct
// Java argument: top-level string literals lose their quotes, everything
// else is the literal's source text.
func javaSource(v any, typ, items string) string {
	switch x := v.(type) {
	case []any:
		elems := make([]string, len(x))
		for i, e := range x {
			elems[i] = javaLiteral(e, items)
		}
		if typ == "ArrayList" {
			if len(x) == 0 {
				return "new ArrayList<>()"
			}
			return "new ArrayList<>(Arrays.asList(" + strings.Join(elems, ", ") + "))"
		}
		et := javaElemTypes[items]
		if et == "" {
			et = "Object"
		}
		return "new " + et + "[]{" + strings.Join(elems, ", ") + "}"
	case *toolcall.Object:
		var sb strings.Builder
		sb.WriteString("new HashMap<String, Object>() {{ ")
		for i := 0; i < x.Len(); i++ {
			k, val := x.At(i)
			fmt.Fprintf(&sb, "put(%s, %s); ", strconv.Quote(k), javaLiteral(val, ""))
		}
		sb.WriteString("}}")
		return sb.String()
	case int64:
		if typ == "double" {
			return strconv.FormatInt(x, 10) + ".0"
		}
		return javaLiteral(v, typ)
	case float64:
		return javaLiteral(v, typ)
	}
	return scalarSource(v)
}

// jsSource renders a value the way BFCL's JavaScript decoder returns a
// correct JavaScript argument.
func jsSource(v any, typ, items string) string {
	switch x := v.(type) {
	case []any:
		elems := make([]string, len(x))
		for i, e := range x {
			elems[i] = jsLiteral(e)
		}
		return "[" + strings.Join(elems, ", ") + "]"
	case *toolcall.Object:
		parts := make([]string, 0, x.Len())
		for i := 0; i < x.Len(); i++ {
			k, val := x.At(i)
			parts = append(parts, strconv.Quote(k)+": "+jsLiteral(val))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return scalarSource(v)
}

func jsLiteral(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case []any, *toolcall.Object:
		return jsSource(x, "", "")
	}
	return scalarSource(v)
}
