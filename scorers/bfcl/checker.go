// Package bfcl is a Go port of the Berkeley Function Calling Leaderboard
// (BFCL) AST checker: it decides whether a model's decoded function calls
// match a BFCL item's ground truth, and reports the same error-type strings
// as the reference (ShishirPatil/gorilla,
// berkeley-function-call-leaderboard/bfcl_eval/eval_checker/ast_eval/ast_checker.py).
//
// Values follow the toolcall value model (int64 vs float64 kept distinct,
// ordered *Object dicts, Tuple), so Python's type() rules apply exactly:
// an int is accepted where a float is expected, a bool is never an int.
package bfcl

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/benchline/benchline/internal/toolcall"
)

// Call is one decoded model call (function name and ordered arguments).
type Call = toolcall.Call

// Object is an ordered dict value.
type Object = toolcall.Object

// Tuple is a Python tuple value.
type Tuple = toolcall.Tuple

// Language selects the type rules: Python types are checked directly, Java
// and JavaScript values arrive as source strings and are converted first.
type Language string

// Languages supported by the checker.
const (
	Python     Language = "python"
	Java       Language = "java"
	JavaScript Language = "javascript"
)

// ParseLanguage maps "python", "java", "javascript" (or "js") to a Language.
func ParseLanguage(s string) (Language, error) {
	switch strings.ToLower(s) {
	case "python", "py":
		return Python, nil
	case "java":
		return Java, nil
	case "javascript", "js":
		return JavaScript, nil
	}
	return "", fmt.Errorf("bfcl: unsupported language %q", s)
}

// LanguageForCategory returns the language BFCL uses for a test category:
// Java for "simple_java", JavaScript for "simple_javascript", else Python.
func LanguageForCategory(category string) Language {
	switch {
	case strings.Contains(category, "javascript"):
		return JavaScript
	case strings.Contains(category, "java"):
		return Java
	}
	return Python
}

// Result is the verdict for one item.
type Result struct {
	// Valid reports whether the output matches the ground truth.
	Valid bool
	// ErrorType is the reference checker's error_type ("" when valid), e.g.
	// "simple_function_checker:missing_required". Where the reference would
	// raise an exception instead of returning, it is
	// "checker_error:<PythonExceptionClass>".
	ErrorType string

	// The detail is kept unformatted (a static reason and the parameter or
	// function at fault) so that a check allocates nothing; Detail renders
	// it on demand.
	reason, subject string
}

// fail builds a failed Result. reason may contain one %s, replaced by the
// quoted subject in Detail.
func fail(errorType, reason, subject string) Result {
	return Result{ErrorType: errorType, reason: reason, subject: subject}
}

// Detail returns a human-readable reason for a failure, naming the
// parameter or function at fault (the wording is not the reference's), or
// "" for a valid result.
func (r Result) Detail() string {
	if r.Valid || r.ErrorType == "" {
		return ""
	}
	if strings.Contains(r.reason, "%s") {
		return strings.Replace(r.reason, "%s", strconv.Quote(r.subject), 1)
	}
	return r.reason
}

var ok = Result{Valid: true}

// Checker holds the model-dependent options of the reference checker. The
// zero value is the default.
type Checker struct {
	// UnderscoreToDot mirrors the reference's per-model underscore_to_dot
	// flag: when set, an expected function name containing "." is matched
	// with every "." replaced by "_" (for APIs such as OpenAI's that forbid
	// dots in tool names).
	UnderscoreToDot bool
}

// Check scores one item with the default Checker. See Checker.Check.
func Check(lang Language, category string, funcs []Function, output []Call, possible []Answer) Result {
	return Checker{}.Check(lang, category, funcs, output, possible)
}

// sameString is a == b with a cheap first-byte test before the byte
// comparison, which pays off for the many equal-length parameter names.
func sameString(a, b string) bool {
	return len(a) == len(b) && (len(a) == 0 || a[0] == b[0]) && a == b
}

// Kind is the scoring procedure a category maps to.
type Kind int

// Category kinds.
const (
	KindSimple      Kind = iota // exactly one call, checked against funcs[0]
	KindMultiple                // one call chosen among several functions
	KindParallel                // several calls, matched in any order
	KindRelevance               // valid iff at least one call
	KindIrrelevance             // valid iff no call
)

// CategoryKind is the single place mapping a BFCL test category to its
// scoring procedure. Like the reference it matches substrings, so the
// live_ variants map to the same checkers: "irrelevance" and "relevance"
// first, then any "parallel" (including parallel_multiple), then
// "multiple", and everything else (simple_python, simple_java,
// simple_javascript, live_simple) is simple.
func CategoryKind(category string) Kind {
	switch category { // the BFCL v4 names, without substring searches
	case "simple", "simple_python", "simple_java", "simple_javascript", "live_simple":
		return KindSimple
	case "multiple", "live_multiple":
		return KindMultiple
	case "parallel", "live_parallel", "parallel_multiple", "live_parallel_multiple":
		return KindParallel
	case "irrelevance", "live_irrelevance":
		return KindIrrelevance
	case "live_relevance":
		return KindRelevance
	}
	switch {
	case strings.Contains(category, "irrelevance"):
		return KindIrrelevance
	case strings.Contains(category, "relevance"):
		return KindRelevance
	case strings.Contains(category, "parallel"):
		return KindParallel
	case strings.Contains(category, "multiple"):
		return KindMultiple
	}
	return KindSimple
}

// Check scores model output against the ground truth of one BFCL item of
// the given category. funcs is the item's function list, output the
// decoded calls and possible the ground truth (one Answer per expected
// call). For relevance categories only len(output) matters.
func (c Checker) Check(lang Language, category string, funcs []Function, output []Call, possible []Answer) (res Result) {
	defer func() {
		if r := recover(); r != nil {
			e, isPy := r.(pyException)
			if !isPy {
				panic(r)
			}
			res = fail("checker_error:"+e.kind, "the reference checker would raise %s", e.kind+": "+e.msg)
		}
	}()
	return c.check(lang, category, funcs, output, possible)
}

func (c Checker) check(lang Language, category string, funcs []Function, output []Call, possible []Answer) Result {
	switch CategoryKind(category) {
	case KindIrrelevance:
		if len(output) == 0 {
			return ok
		}
		return fail("irrelevance_error:decoder_success", "Valid syntax. Successfully decode AST when it should not.", "")
	case KindRelevance:
		if len(output) > 0 {
			return ok
		}
		return fail("relevance_error:decoder_failed", "Invalid syntax. Failed to decode AST when it should have.", "")
	case KindParallel:
		return c.parallelNoOrder(lang, funcs, output, possible)
	case KindMultiple:
		return c.multiple(lang, funcs, output, possible)
	}
	if len(output) != 1 {
		return fail("simple_function_checker:wrong_count", "Wrong number of functions.", "")
	}
	if len(funcs) == 0 || len(possible) == 0 {
		raise("IndexError", "list index out of range")
	}
	return c.simple(lang, &funcs[0], output[0], &possible[0])
}

func findDescription(funcs []Function, name string) *Function {
	for i := range funcs {
		if sameString(funcs[i].Name, name) {
			return &funcs[i]
		}
	}
	return nil
}

func (c Checker) multiple(lang Language, funcs []Function, output []Call, possible []Answer) Result {
	if len(output) != len(possible) {
		return fail("multiple_function_checker:wrong_count", "Wrong number of functions.", "")
	}
	if len(possible) == 0 {
		raise("IndexError", "list index out of range")
	}
	fn := findDescription(funcs, possible[0].Name)
	return c.simple(lang, fn, output[0], &possible[0])
}

// parallelNoOrder matches the expected calls greedily, in ground-truth
// order: each takes the first not-yet-matched output call that passes the
// simple check.
func (c Checker) parallelNoOrder(lang Language, funcs []Function, output []Call, possible []Answer) Result {
	if len(output) != len(possible) {
		return fail("parallel_function_checker_no_order:wrong_count", "Wrong number of functions.", "")
	}
	var matchedBuf [16]bool
	var matched []bool
	if len(output) > len(matchedBuf) {
		matched = make([]bool, len(output))
	} else {
		matched = matchedBuf[:len(output)]
	}
	for i := range possible {
		fn := findDescription(funcs, possible[i].Name)
		found := false
		for j := range output {
			if matched[j] {
				continue
			}
			r := c.simple(lang, fn, output[j], &possible[i])
			if r.Valid {
				matched[j] = true
				found = true
				break
			}
		}
		if !found {
			return fail("parallel_function_checker_no_order:cannot_find_match",
				"Could not find a matching model call for an expected call to %s.", possible[i].Name)
		}
	}
	return ok
}

// pythonType is the reference's PYTHON_TYPE_MAPPING.
func pythonType(name string) (pyType, bool) {
	switch name {
	case "string", "any":
		return tStr, true
	case "integer":
		return tInt, true
	case "float":
		return tFloat, true
	case "boolean":
		return tBool, true
	case "array", "tuple":
		return tList, true
	case "dict":
		return tDict, true
	}
	return 0, false
}

// javaType is the reference's JAVA_TYPE_CONVERSION.
func javaType(name string) (pyType, bool) {
	switch name {
	case "byte", "short", "integer", "long":
		return tInt, true
	case "float", "double":
		return tFloat, true
	case "boolean":
		return tBool, true
	case "char", "String", "any":
		return tStr, true
	case "Array", "ArrayList", "Queue", "Stack":
		return tList, true
	case "Set":
		return tSet, true
	case "HashMap", "Hashtable":
		return tDict, true
	}
	return 0, false
}

// jsType is the reference's JS_TYPE_CONVERSION.
func jsType(name string) (pyType, bool) {
	switch name {
	case "String", "any":
		return tStr, true
	case "integer", "Bigint":
		return tInt, true
	case "float":
		return tFloat, true
	case "Boolean":
		return tBool, true
	case "dict":
		return tDict, true
	case "array":
		return tList, true
	}
	return 0, false
}

// lookupType raises KeyError, as the reference's dict lookup does, for a
// type name the table lacks.
func lookupType(table func(string) (pyType, bool), name string) pyType {
	t, found := table(name)
	if !found {
		raise("KeyError", "%q", name)
	}
	return t
}

// funcName is the name a model must call fn by: with UnderscoreToDot,
// every "." replaced by "_".
func (c Checker) funcName(fn *Function) string {
	switch {
	case !c.UnderscoreToDot:
		return fn.Name
	case fn.dotOf == fn.Name:
		return fn.dotName
	}
	return strings.ReplaceAll(fn.Name, ".", "_")
}

// simple is simple_function_checker: one output call against one expected
// call described by fn.
func (c Checker) simple(lang Language, fn *Function, out Call, ans *Answer) Result {
	if fn == nil {
		raise("TypeError", "'NoneType' object is not subscriptable")
	}
	name := c.funcName(fn)
	if out.Name != name {
		return fail("simple_function_checker:wrong_func_name", "Function name %s not found in model output.", name)
	}
	args := out.Args
	for _, p := range fn.Required {
		if !args.Has(p) {
			return fail("simple_function_checker:missing_required", "Missing required parameter: %s.", p)
		}
	}
	for i := 0; i < args.Len(); i++ {
		param, value := args.At(i)
		schema, declared := fn.param(param)
		acceptable, expected := ans.get(param)
		if !declared || !expected {
			return fail("simple_function_checker:unexpected_param", "Unexpected parameter: %s.", param)
		}
		if !schema.HasType {
			raise("KeyError", "'type'")
		}
		typeDesc := schema.Type
		var want, nested pyType
		hasNested := false
		switch lang {
		case Java, JavaScript:
			table, errType := javaType, "type_error:java"
			if lang == JavaScript {
				table, errType = jsType, "type_error:js"
			}
			want = lookupType(table, typeDesc)
			s, isStr := value.(string)
			if !isStr {
				return fail(errType, "Incorrect type for parameter %s. Expected type String.", param)
			}
			if typeDesc == "Array" || typeDesc == "ArrayList" || typeDesc == "array" {
				if !schema.HasItems {
					raise("KeyError", "'items'")
				}
				nested, hasNested = lookupType(table, schema.ItemsType), true
				value = convert(lang, s, typeDesc, schema.ItemsType)
			} else {
				value = convert(lang, s, typeDesc, "")
			}
		case Python:
			want = lookupType(pythonType, typeDesc)
			if typeDesc == "array" || typeDesc == "tuple" {
				if !schema.HasItems {
					raise("KeyError", "'items'")
				}
				nested, hasNested = lookupType(pythonType, schema.ItemsType), true
			}
		default:
			raise("ValueError", "Unsupported language: %s", lang)
		}
		if t, isTuple := value.(toolcall.Tuple); isTuple && typeDesc == "tuple" {
			value = []any(t)
		}
		if lang == Python && typeDesc == "float" {
			if n, isInt := value.(int64); isInt {
				value = float64(n)
			}
		}

		isVariable, errType := typeCheck(value, acceptable, want, nested, hasNested)
		if errType != "" {
			if errType == "type_error:nested" || errType == nestedThenSimple {
				if errType == nestedThenSimple {
					errType = "type_error:simple"
				}
				return fail(errType, "Nested type checking failed for parameter %s.", param)
			}
			return fail(errType, "Incorrect type for parameter %s (not the schema's type, nor the ground truth's).", param)
		}
		if !isVariable {
			var r Result
			switch {
			case want == tDict:
				r = dictChecker(param, value, acceptable)
			case want == tList && hasNested && nested == tDict:
				r = listDictChecker(param, value, acceptable)
			case want == tStr:
				r = stringChecker(param, value.(string), acceptable)
			case want == tList:
				r = listChecker(param, value.([]any), acceptable)
			default:
				if !pyIn(value, acceptable) {
					return fail("value_error:others", "Invalid value for parameter %s.", param)
				}
				continue
			}
			if !r.Valid {
				return r
			}
			continue
		}
		if !pyIn(value, acceptable) {
			return fail("value_error:others", "Invalid value for parameter %s.", param)
		}
	}
	for _, p := range ans.Params {
		if !args.Has(p.Name) && !pyIn("", p.Acceptable) {
			return fail("simple_function_checker:missing_optional", "Optional parameter %s not provided and not marked as optional.", p.Name)
		}
	}
	return ok
}

// possibleAnswerType is the type of the first acceptable value that is not
// "" (the reference's get_possible_answer_type); ok is false when all are "".
func possibleAnswerType(acceptable []any) (pyType, bool) {
	for _, a := range acceptable {
		if s, isStr := a.(string); isStr && s == "" {
			continue
		}
		return typeOf(a), true
	}
	return 0, false
}

// nestedThenSimple marks a failed nested item check that then also failed
// the variable rule: the reference reports it as type_error:simple.
const nestedThenSimple = "nested+simple"

// typeCheck is the reference's type_checker, including its fall-through
// from a failed nested check to the "variable" rule. It returns whether
// the value counts as a variable and the error type ("" when the type is
// acceptable).
func typeCheck(value any, acceptable []any, want, nested pyType, hasNested bool) (isVariable bool, errType string) {
	paType, havePA := possibleAnswerType(acceptable)
	isVariable = havePA && paType != want
	vt := typeOf(value)
	if vt == want {
		if !hasNested {
			return isVariable, ""
		}
		for _, item := range acceptable {
			flag := true
			if inner, isList := item.([]any); isList {
				for _, v := range pyIndexItems(value) {
					if _, e := typeCheck(v, inner, nested, 0, false); e != "" {
						flag = false
						break
					}
				}
			}
			if flag {
				return isVariable, ""
			}
		}
		if havePA && vt == paType {
			return true, "type_error:nested"
		}
		return false, nestedThenSimple
	}
	if havePA && vt == paType {
		return true, ""
	}
	return false, "type_error:simple"
}

func stringChecker(param, value string, acceptable []any) Result {
	for _, a := range acceptable {
		if s, isStr := a.(string); isStr && standardEqual(value, s) {
			return ok
		}
	}
	return fail("value_error:string", "Invalid value for parameter %s (compared after standardisation).", param)
}

// stdMatch is `standardize(a) == standardize(b)` for two strings and
// Python == otherwise, which is how the list and dict checkers compare
// (standardized) elements: a str never equals a non-str.
func stdMatch(a, b any) bool {
	as, aStr := a.(string)
	bs, bStr := b.(string)
	if aStr || bStr {
		return aStr && bStr && standardEqual(as, bs)
	}
	return pyEqual(a, b)
}

func listChecker(param string, value []any, acceptable []any) Result {
	for _, a := range acceptable {
		items := pyIndexItems(a)
		if len(items) != len(value) {
			continue
		}
		same := true
		for i := range value {
			if !stdMatch(value[i], items[i]) {
				same = false
				break
			}
		}
		if same {
			return ok
		}
	}
	return fail("value_error:list/tuple", "Invalid list value for parameter %s.", param)
}

// dictChecker is the reference's dict_checker: the model dict must match
// one acceptable dict, key by key (no unknown keys; a missing key is fine
// only when "" is acceptable for it; string values are standardized).
func dictChecker(param string, value any, acceptable []any) Result {
	res := fail("dict_checker:unclear", "No acceptable dictionary matched parameter %s.", param)
	for _, cand := range acceptable {
		if s, isStr := cand.(string); isStr && s == "" {
			continue
		}
		res = Result{ErrorType: "dict_checker:unclear"}
		flag := true
		model, isDict := value.(*toolcall.Object)
		if !isDict {
			raise("AttributeError", "'%s' object has no attribute 'items'", typeOf(value))
		}
		for i := 0; i < model.Len(); i++ {
			key, v := model.At(i)
			if !pyIn(key, cand) {
				res = fail("value_error:dict_key", "Unexpected dict key parameter: %s.", key)
				flag = false
				break
			}
			candObj, isObj := cand.(*toolcall.Object)
			if !isObj {
				raise("TypeError", "%s indices must be integers", typeOf(cand))
			}
			accv, _ := candObj.Get(key)
			found := false
			for _, it := range pyIndexItems(accv) {
				if stdMatch(v, it) {
					found = true
					break
				}
			}
			if !found {
				res = fail("value_error:dict_value", "Invalid value for dict key %s.", key)
				flag = false
				break
			}
		}
		candObj, isObj := cand.(*toolcall.Object)
		if !isObj {
			raise("AttributeError", "'%s' object has no attribute 'items'", typeOf(cand))
		}
		for i := 0; i < candObj.Len(); i++ {
			key, accv := candObj.At(i)
			if !model.Has(key) && !pyIn("", accv) {
				res = fail("value_error:dict_key", "Missing dict key parameter: %s.", key)
				flag = false
				break
			}
		}
		if flag {
			return ok
		}
	}
	return res
}

// listDictChecker is the reference's list_dict_checker: same length as one
// acceptable list of dicts, each dict matching in order.
func listDictChecker(param string, value any, acceptable []any) Result {
	res := fail("list_dict_checker:unclear", "No acceptable list of dictionaries matched parameter %s.", param)
	model := value.([]any)
	for _, cand := range acceptable {
		if len(model) != pyLen(cand) {
			res = fail("value_error:list_dict_count", "Wrong number of dictionaries in the list.", "")
			continue
		}
		items := pyIndexItems(cand)
		flag := true
		for k := range model {
			res = dictChecker(param, model[k], []any{items[k]})
			if !res.Valid {
				flag = false
				break
			}
		}
		if flag {
			return ok
		}
	}
	return res
}
