package bfcl

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/benchline/benchline/internal/toolcall"
)

// This file ports the reference's java_type_converter and js_type_converter:
// a Java or JavaScript argument arrives as source text and is converted by
// regular expressions; text that does not fit the expected type stays a
// string (and then fails the type check). Python's `$` also matches before a
// final "\n", which the patterns below spell as `\n?$`. Differences: `\d`,
// `\w` and `\s` are ASCII here and Unicode in Python.

func convert(lang Language, s, typ, nested string) any {
	if lang == Java {
		return javaConvert(s, typ, nested)
	}
	return jsConvert(s, typ, nested)
}

var (
	reJavaInt    = regexp.MustCompile(`^-?[0-9]+\n?$`)
	reJavaFloat  = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?[fF]\n?$`)
	reJavaDouble = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?\n?$`)
	reJavaLong   = regexp.MustCompile(`^-?[0-9]+[lL]\n?$`)

	reArrayListAsList = regexp.MustCompile(`new\s+ArrayList<\w*>\(Arrays\.asList\((.+?)\)\)`)
	reArrayListAdd    = regexp.MustCompile(`(?s)new\s+ArrayList<\w*>\(\)\s*\{\{\s*(.+?)\s*\}\}`)
	reAdd             = regexp.MustCompile(`add\((.+?)\)`)
	reArrayListEmpty  = regexp.MustCompile(`new\s+ArrayList<\w*>\(\)`)
	reJavaArray       = regexp.MustCompile(`new\s+\w+\[\]\s*\{(.*?)\}`)
	reHashMap         = regexp.MustCompile(`(?s)new\s+HashMap<.*?>\s*\(\)\s*\{\s*\{?\s*(.*?)\s*\}?\s*\}`)
	rePut             = regexp.MustCompile(`put\("(.*?)",\s*(.*?)\)`)
	reHashMapEmpty    = regexp.MustCompile(`new\s+HashMap<.*?>\s*\(\)`)
)

// pyStrip is Python's str.strip() with no arguments.
func pyStrip(s string) string { return strings.TrimSpace(s) }

// pyInner is Python's s[1:-1] on code points.
func pyInner(s string) string {
	if utf8.RuneCountInString(s) < 2 {
		return ""
	}
	_, first := utf8.DecodeRuneInString(s)
	_, last := utf8.DecodeLastRuneInString(s)
	return s[first : len(s)-last]
}

var (
	rePyInt   = regexp.MustCompile(`^[+-]?[0-9](_?[0-9])*$`)
	rePyFloat = regexp.MustCompile(`^[+-]?(([0-9](_?[0-9])*)?\.?[0-9](_?[0-9])*|[0-9](_?[0-9])*\.)([eE][+-]?[0-9](_?[0-9])*)?$`)
	rePyInf   = regexp.MustCompile(`(?i)^[+-]?(inf|infinity|nan)$`)
)

// pyInt is Python's int(s) for base 10; ok is false where Python raises
// ValueError. Values beyond int64 raise (Python would use a big int).
func pyInt(s string) (int64, bool) {
	s = pyStrip(s)
	if !rePyInt.MatchString(s) {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64)
	if err != nil {
		raise("OverflowError", "integer %s beyond int64", s)
	}
	return n, true
}

// pyFloat is Python's float(s); ok is false where Python raises ValueError.
func pyFloat(s string) (float64, bool) {
	s = pyStrip(s)
	if rePyInf.MatchString(s) {
		f, _ := strconv.ParseFloat(s, 64)
		return f, true
	}
	if !rePyFloat.MatchString(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	if err != nil && !math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

func mustInt(s string) int64 {
	n, ok := pyInt(s)
	if !ok {
		raise("ValueError", "invalid literal for int() with base 10: %q", s)
	}
	return n
}

func mustFloat(s string) float64 {
	f, ok := pyFloat(s)
	if !ok {
		raise("ValueError", "could not convert string to float: %q", s)
	}
	return f
}

// trimSuffixPy is re.sub(r"[<set>]$", "", s) for a set of ASCII letters:
// it drops one of them at the end or just before a final newline.
func trimSuffixPy(s, set string) string {
	if strings.HasSuffix(s, "\n") {
		body := s[:len(s)-1]
		if body != "" && strings.ContainsRune(set, rune(body[len(body)-1])) {
			return body[:len(body)-1] + "\n"
		}
	}
	if s != "" && strings.ContainsRune(set, rune(s[len(s)-1])) {
		return s[:len(s)-1]
	}
	return s
}

func javaConvert(value, typ, nested string) any {
	if _, known := javaType(typ); !known {
		raise("ValueError", "Unsupported type: %s", typ)
	}
	switch typ {
	case "byte", "short", "integer":
		if !reJavaInt.MatchString(value) {
			return value
		}
		return mustInt(value)
	case "float":
		if !reJavaFloat.MatchString(value) {
			return value
		}
		return mustFloat(trimSuffixPy(value, "fF"))
	case "double":
		if !reJavaDouble.MatchString(value) {
			return value
		}
		return mustFloat(value)
	case "long":
		if !reJavaLong.MatchString(value) {
			return value
		}
		return mustInt(trimSuffixPy(value, "lL"))
	case "boolean":
		if value != "true" && value != "false" {
			return value
		}
		return value == "true"
	case "char", "String", "any":
		// The reference's char pattern ^\'.$\' can never match, so a char
		// always stays the given string.
		return value
	case "Array":
		return javaParseArray(value, nested)
	case "ArrayList":
		return javaParseArrayList(value, nested)
	case "HashMap":
		return javaParseHashMap(value)
	case "Set", "Hashtable", "Queue", "Stack":
		raise("NotImplementedError", "%s conversion is not implemented", typ)
	}
	raise("ValueError", "Unsupported type: %s", typ)
	return nil
}

func javaElement(s, nested string) any {
	switch {
	case nested == "char" || nested == "String":
		return pyInner(s)
	case nested != "":
		return javaConvert(s, nested, "")
	}
	return javaParseValue(s)
}

func javaParseArrayList(s, nested string) any {
	if m := reArrayListAsList.FindStringSubmatch(s); m != nil {
		parts := strings.Split(m[1], ",")
		out := make([]any, 0, len(parts))
		for _, p := range parts {
			out = append(out, javaElement(pyStrip(p), nested))
		}
		return out
	}
	if m := reArrayListAdd.FindStringSubmatch(s); m != nil {
		adds := reAdd.FindAllStringSubmatch(m[1], -1)
		out := make([]any, 0, len(adds))
		for _, a := range adds {
			out = append(out, javaElement(pyStrip(a[1]), nested))
		}
		return out
	}
	if reArrayListEmpty.MatchString(s) {
		return []any{}
	}
	return s
}

func javaParseArray(s, nested string) any {
	m := reJavaArray.FindStringSubmatch(s)
	if m == nil {
		return s
	}
	out := []any{}
	for _, p := range strings.Split(m[1], ",") {
		p = pyStrip(p)
		if p == "" {
			continue
		}
		if nested != "" {
			out = append(out, javaConvert(p, nested, ""))
		} else {
			out = append(out, javaParseValue(p))
		}
	}
	return out
}

func javaParseHashMap(s string) any {
	if m := reHashMap.FindStringSubmatch(s); m != nil {
		obj := toolcall.NewObject(4)
		if pyStrip(m[1]) != "" {
			for _, p := range rePut.FindAllStringSubmatch(m[1], -1) {
				obj.Set(p[1], javaParseValue(pyStrip(p[2])))
			}
		}
		return obj
	}
	if reHashMapEmpty.MatchString(s) {
		return toolcall.NewObject(0)
	}
	return s
}

func javaParseValue(s string) any {
	switch {
	case s == "true":
		return true
	case s == "false":
		return false
	case strings.HasPrefix(s, `"`) && strings.HasSuffix(s, `"`):
		return pyInner(s)
	case reJavaLong.MatchString(s):
		return mustInt(trimSuffixPy(s, "lL"))
	case reJavaFloat.MatchString(s):
		return mustFloat(trimSuffixPy(s, "fF"))
	}
	if n, ok := pyInt(s); ok {
		return n
	}
	if f, ok := pyFloat(s); ok {
		return f
	}
	return s
}

var (
	reJSInt    = regexp.MustCompile(`^-?[0-9]+\n?$`)
	reJSFloat  = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?\n?$`)
	reJSBigint = regexp.MustCompile(`^-?[0-9]+n\n?$`)
	reJS2D     = regexp.MustCompile(`^(?:\[\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\]|\bnew\s+Array\(\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\))`)
	reJS1D     = regexp.MustCompile(`^(?:\[(.*?)\]|\bnew\s+Array\((.*?)\))`)
	reJSInner  = regexp.MustCompile(`\[(.*?)\]`)
	reJSDict   = regexp.MustCompile(`^\{(.*?)\}`)
)

func jsConvert(value, typ, nested string) any {
	if _, known := jsType(typ); !known {
		raise("ValueError", "Unsupported type: %s", typ)
	}
	switch typ {
	case "String":
		if !(strings.HasPrefix(value, `"`) && strings.HasSuffix(value, `"`)) &&
			!(strings.HasPrefix(value, "'") && strings.HasSuffix(value, "'")) {
			return value
		}
		return pyInner(value)
	case "integer":
		if !reJSInt.MatchString(value) {
			return value
		}
		return mustInt(value)
	case "float":
		if !reJSFloat.MatchString(value) {
			return value
		}
		return mustFloat(value)
	case "Bigint":
		if !reJSBigint.MatchString(value) {
			return value
		}
		r := []rune(value)
		return mustInt(string(r[:len(r)-1]))
	case "Boolean":
		if value != "true" && value != "false" {
			return value
		}
		return value == "true"
	case "dict":
		return jsParseDict(value)
	case "array":
		return jsParseArray(value, nested)
	}
	return value // "any"
}

// jsParseArray is parse_js_collection(code, "array", nested). Any exception
// inside falls back to returning the stripped code, as the reference's bare
// `except:` does.
func jsParseArray(code, nested string) (result any) {
	code = pyStrip(code)
	defer func() {
		if r := recover(); r != nil {
			if _, isPy := r.(pyException); !isPy {
				panic(r)
			}
			result = code
		}
	}()
	if loc := reJS2D.FindStringIndex(code); loc != nil {
		m := code[loc[0]:loc[1]]
		inner := reJSInner.FindAllStringSubmatch(m, -1)
		out := make([]any, 0, len(inner))
		for idx, in := range inner {
			s := pyStrip(in[1])
			if idx == 0 && strings.HasPrefix(s, "[") {
				s = s[1:]
			}
			parts := strings.Split(s, ",")
			row := make([]any, 0, len(parts))
			for _, e := range parts {
				row = append(row, jsParseValue(pyStrip(e)))
			}
			out = append(out, row)
		}
		return out
	}
	m := reJS1D.FindStringSubmatchIndex(code)
	if m == nil {
		return code
	}
	var elems []string
	switch {
	case m[2] >= 0:
		if s := pyStrip(code[m[2]:m[3]]); s != "" {
			elems = strings.Split(s, ",")
		}
	case m[4] >= 0:
		if s := pyStrip(code[m[4]:m[5]]); s != "" {
			elems = strings.Split(s, ",")
		}
	}
	out := make([]any, 0, len(elems))
	for _, e := range elems {
		e = pyStrip(e)
		if nested != "" {
			// The reference passes "String" as a third argument for quoted
			// elements; it only matters for nested arrays, which it ignores.
			out = append(out, jsConvert(e, nested, ""))
		} else {
			out = append(out, jsParseValue(e))
		}
	}
	return out
}

// jsParseDict is parse_js_collection(code, "dict").
func jsParseDict(code string) (result any) {
	code = pyStrip(code)
	if code == "{}" {
		return toolcall.NewObject(0)
	}
	m := reJSDict.FindStringSubmatch(code)
	if m == nil {
		return code
	}
	defer func() {
		if r := recover(); r != nil {
			if _, isPy := r.(pyException); !isPy {
				panic(r)
			}
			result = code
		}
	}()
	obj := toolcall.NewObject(4)
	for _, kv := range jsFindPairs(m[1]) {
		key := strings.Trim(pyStrip(kv[0]), `'"`)
		val := pyStrip(kv[1])
		switch {
		case strings.HasPrefix(val, "[") && strings.HasSuffix(val, "]"):
			obj.Set(key, jsParseArray(val, ""))
		case strings.HasPrefix(val, "{") && strings.HasSuffix(val, "}"):
			obj.Set(key, jsParseDict(val))
		default:
			obj.Set(key, jsParseValue(strings.Trim(val, `'"`)))
		}
	}
	return obj
}

// jsFindPairs is re.findall(r"([^:]+):\s*(.*?)(?:,\s*(?=[^,]+:)|$)", s)
// for a string without newlines (the dict content can hold none). Go's
// regexp has no look-ahead, so the backtracking search is spelled out.
func jsFindPairs(s string) [][2]string {
	var out [][2]string
	pos := 0
	for pos < len(s) {
		colon := strings.IndexByte(s[pos:], ':')
		if colon < 0 {
			break
		}
		colon += pos
		if colon == pos { // [^:]+ needs at least one character
			pos++
			continue
		}
		key := s[pos:colon]
		d := colon + 1
		for d < len(s) && isPySpace(s[d]) {
			d++
		}
		end, valEnd := len(s), len(s)
		for e := d; e < len(s); e++ {
			if s[e] != ',' {
				continue
			}
			f := e + 1
			for f < len(s) && isPySpace(s[f]) {
				f++
			}
			// \s* backtracks from f down to e+1 until the look-ahead
			// [^,]+: holds.
			found := false
			for g := f; g >= e+1; g-- {
				if lookaheadKey(s, g) {
					end, valEnd, found = g, e, true
					break
				}
			}
			if found {
				break
			}
		}
		out = append(out, [2]string{key, s[d:valEnd]})
		pos = end
	}
	return out
}

// lookaheadKey reports whether [^,]+: matches at g.
func lookaheadKey(s string, g int) bool {
	for q := g + 1; q < len(s); q++ {
		if s[q-1] == ',' {
			return false
		}
		if s[q] == ':' {
			return true
		}
	}
	return false
}

func isPySpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func jsParseValue(s string) any {
	s = pyStrip(s)
	switch {
	case s == "true":
		return true
	case s == "false":
		return false
	case (strings.HasPrefix(s, `"`) && strings.HasSuffix(s, `"`)) ||
		(strings.HasPrefix(s, "'") && strings.HasSuffix(s, "'")):
		return pyInner(s)
	}
	if n, ok := pyInt(s); ok {
		return n
	}
	if f, ok := pyFloat(s); ok {
		return f
	}
	return s
}
