package bfcl

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/toolcall"
)

// This file loads the real BFCL v4 data from the shared data directory and
// generates the conformance cases: each item's ground truth rendered as the
// decoded model output a correct model would produce, plus deterministic
// corruptions of it. The same cases, exported as JSON lines, were scored by
// the reference Python checker to produce testdata/reference_expected.jsonl
// (see testdata/README.md).

// astCategories are the single-turn AST categories with ground truth.
var astCategories = []string{
	"simple_python", "simple_java", "simple_javascript", "multiple", "parallel",
	"parallel_multiple", "live_simple", "live_multiple", "live_parallel",
	"live_parallel_multiple",
}

var relevanceCategories = []string{"irrelevance", "live_irrelevance", "live_relevance"}

// sharedBFCLDir finds shared/data/bfcl: $BENCHLINE_SHARED_DATA/bfcl if the
// variable is set, else a shared/data/bfcl next to some ancestor of the
// working directory (the repo root's sibling). It skips the test when the
// data is absent.
func sharedBFCLDir(tb testing.TB) string {
	tb.Helper()
	if env := os.Getenv("BENCHLINE_SHARED_DATA"); env != "" {
		dir := filepath.Join(env, "bfcl")
		if _, err := os.Stat(filepath.Join(dir, "possible_answer")); err != nil {
			tb.Skipf("BENCHLINE_SHARED_DATA=%s but %s is not readable: %v", env, dir, err)
		}
		return dir
	}
	wd, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		dir := filepath.Join(d, "shared", "data", "bfcl")
		if _, err := os.Stat(filepath.Join(dir, "possible_answer")); err == nil {
			return dir
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	tb.Skipf("BFCL data not found: set BENCHLINE_SHARED_DATA or place it at <ancestor of %s>/shared/data/bfcl", wd)
	return ""
}

type bfclItem struct {
	ID       string
	Category string
	Lang     Language
	FuncsRaw any // decoded "function" field
	Funcs    []Function
	GTRaw    any // decoded "ground_truth" (nil for relevance categories)
	Answers  []Answer
}

func readJSONLines(path string) ([]*toolcall.Object, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []*toolcall.Object
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		v, err := toolcall.DecodeJSON(sc.Bytes())
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out = append(out, v.(*toolcall.Object))
	}
	return out, sc.Err()
}

func loadCategory(tb testing.TB, dir, category string) []bfclItem {
	tb.Helper()
	qs, err := readJSONLines(filepath.Join(dir, "BFCL_v4_"+category+".json"))
	if err != nil {
		tb.Fatal(err)
	}
	answers := map[string]any{}
	if CategoryKind(category) != KindRelevance && CategoryKind(category) != KindIrrelevance {
		as, err := readJSONLines(filepath.Join(dir, "possible_answer", "BFCL_v4_"+category+".json"))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			tb.Fatal(err)
		}
		for _, a := range as {
			id, _ := a.Get("id")
			gt, _ := a.Get("ground_truth")
			answers[id.(string)] = gt
		}
	}
	items := make([]bfclItem, 0, len(qs))
	for _, q := range qs {
		idv, _ := q.Get("id")
		fv, _ := q.Get("function")
		it := bfclItem{ID: idv.(string), Category: category, Lang: LanguageForCategory(category), FuncsRaw: fv}
		if it.Funcs, err = FunctionsFromValue(fv); err != nil {
			tb.Fatalf("%s: %v", it.ID, err)
		}
		if gt, found := answers[it.ID]; found {
			it.GTRaw = gt
			if it.Answers, err = AnswersFromValue(gt); err != nil {
				tb.Fatalf("%s: %v", it.ID, err)
			}
		} else if CategoryKind(category) != KindRelevance && CategoryKind(category) != KindIrrelevance {
			tb.Fatalf("%s: no ground truth", it.ID)
		}
		items = append(items, it)
	}
	return items
}

func loadAll(tb testing.TB) []bfclItem {
	dir := sharedBFCLDir(tb)
	var all []bfclItem
	for _, c := range append(append([]string{}, astCategories...), relevanceCategories...) {
		all = append(all, loadCategory(tb, dir, c)...)
	}
	return all
}

// confCase is one generated conformance case.
type confCase struct {
	Item       *bfclItem
	Corruption string
	Output     []Call
	// UnderscoreToDot is the checker option the case is scored with.
	UnderscoreToDot bool
}

// groundTruthCalls renders the ground truth as decoded model output (see
// ReferenceCalls).
func groundTruthCalls(it *bfclItem) []Call {
	return ReferenceCalls(it.Lang, it.Funcs, it.Answers)
}

func cloneCalls(calls []Call) []Call {
	out := make([]Call, len(calls))
	for i, c := range calls {
		args := toolcall.NewObject(c.Args.Len())
		for j := 0; j < c.Args.Len(); j++ {
			k, v := c.Args.At(j)
			args.Set(k, v)
		}
		out[i] = Call{Name: c.Name, Args: args}
	}
	return out
}

func withoutArg(o *toolcall.Object, drop string) *toolcall.Object {
	out := toolcall.NewObject(o.Len())
	for i := 0; i < o.Len(); i++ {
		k, v := o.At(i)
		if k != drop {
			out.Set(k, v)
		}
	}
	return out
}

// firstArgOf returns the first argument of call whose schema type is in
// types (any type when types is empty).
func firstArgOf(fn *Function, c Call, pred func(schema Param, v any) bool) (string, any, bool) {
	if fn == nil {
		return "", nil, false
	}
	for i := 0; i < c.Args.Len(); i++ {
		k, v := c.Args.At(i)
		if pred(fn.Params[k], v) {
			return k, v, true
		}
	}
	return "", nil, false
}

func typeIs(types ...string) func(Param, any) bool {
	return func(p Param, _ any) bool {
		for _, t := range types {
			if p.Type == t {
				return true
			}
		}
		return false
	}
}

// wrongValue changes a value so that it is no longer acceptable (in
// general), keeping its type.
func wrongValue(v any) any {
	switch x := v.(type) {
	case string:
		return x + " zzq wrong"
	case int64:
		return x + 7
	case float64:
		return x + 7.25
	case bool:
		return !x
	case []any:
		return append(append([]any{}, x...), x...)
	case *toolcall.Object:
		o := toolcall.NewObject(x.Len() + 1)
		for i := 0; i < x.Len(); i++ {
			k, val := x.At(i)
			o.Set(k, val)
		}
		o.Set("zzq_extra_key", "x")
		return o
	}
	return "zzq"
}

// wrongSource changes a Java/JavaScript source string.
func wrongSource(s, typ string) string {
	switch typ {
	case "integer", "long", "short", "byte", "double", "float", "Bigint":
		return "7" + s
	case "boolean", "Boolean":
		if s == "true" {
			return "false"
		}
		return "true"
	}
	return s + " zzq wrong"
}

func normalisedVariant(s string) string {
	return strings.ToUpper(s) + " -_./"
}

// generateCases returns the ground-truth case and the applicable
// corruptions for one item, in a fixed order.
func generateCases(it *bfclItem) []confCase {
	kind := CategoryKind(it.Category)
	if kind == KindRelevance || kind == KindIrrelevance {
		var call Call
		if len(it.Funcs) > 0 {
			args := toolcall.NewObject(1)
			args.Set("query", "something")
			call = Call{Name: it.Funcs[0].Name, Args: args}
		}
		return []confCase{
			{Item: it, Corruption: "no_call"},
			{Item: it, Corruption: "one_call", Output: []Call{call}},
			{Item: it, Corruption: "two_calls", Output: []Call{call, call}},
		}
	}
	gt := groundTruthCalls(it)
	out := []confCase{{Item: it, Corruption: "ground_truth", Output: gt}}
	add := func(name string, calls []Call) {
		out = append(out, confCase{Item: it, Corruption: name, Output: calls})
	}
	if len(gt) == 0 {
		return out
	}
	fn := findDescription(it.Funcs, gt[0].Name)

	c := cloneCalls(gt)
	c[0].Name += "_zz"
	add("wrong_func_name", c)

	if strings.Contains(gt[0].Name, ".") {
		c = cloneCalls(gt)
		c[0].Name = strings.ReplaceAll(c[0].Name, ".", "_")
		add("dot_to_underscore_name", c)
		out = append(out, confCase{Item: it, Corruption: "dot_to_underscore_name_u2d", Output: c, UnderscoreToDot: true})
	}

	if fn != nil {
		for _, r := range fn.Required {
			if gt[0].Args.Has(r) {
				c = cloneCalls(gt)
				c[0].Args = withoutArg(c[0].Args, r)
				add("missing_required", c)
				break
			}
		}
		// Drop the non-required arguments: passes only when all are optional.
		c = cloneCalls(gt)
		dropped := false
		for _, k := range gt[0].Args.Keys() {
			req := false
			for _, r := range fn.Required {
				req = req || r == k
			}
			if !req {
				c[0].Args = withoutArg(c[0].Args, k)
				dropped = true
			}
		}
		if dropped {
			add("drop_optional_args", c)
		}
	}

	c = cloneCalls(gt)
	if it.Lang == Python {
		c[0].Args.Set("zz_unknown_param", int64(1))
	} else {
		c[0].Args.Set("zz_unknown_param", "1")
	}
	add("extra_param", c)

	// Optional parameter that the ground truth omits (acceptable only "").
	if fn != nil {
		names := make([]string, 0, len(fn.Params))
		for k := range fn.Params {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			if !gt[0].Args.Has(k) {
				c = cloneCalls(gt)
				if it.Lang == Python {
					c[0].Args.Set(k, "zzq")
				} else {
					c[0].Args.Set(k, "zzq")
				}
				add("extra_declared_param", c)
				break
			}
		}
	}

	if it.Lang == Python {
		if k, v, found := firstArgOf(fn, gt[0], typeIs("integer")); found {
			c = cloneCalls(gt)
			c[0].Args.Set(k, scalarSource(v))
			add("type_str_for_int", c)
			c = cloneCalls(gt)
			c[0].Args.Set(k, true)
			add("type_bool_for_int", c)
			if n, isInt := v.(int64); isInt {
				c = cloneCalls(gt)
				c[0].Args.Set(k, float64(n))
				add("type_float_for_int", c)
			}
		}
		if k, v, found := firstArgOf(fn, gt[0], typeIs("float")); found {
			if f, isFloat := v.(float64); isFloat {
				c = cloneCalls(gt)
				c[0].Args.Set(k, int64(math.Round(f)))
				add("type_int_for_float", c)
			}
		}
		if k, v, found := firstArgOf(fn, gt[0], typeIs("boolean")); found {
			if b, isBool := v.(bool); isBool {
				c = cloneCalls(gt)
				n := int64(0)
				if b {
					n = 1
				}
				c[0].Args.Set(k, n)
				add("type_int_for_bool", c)
			}
		}
		if k, _, found := firstArgOf(fn, gt[0], typeIs("string")); found {
			c = cloneCalls(gt)
			c[0].Args.Set(k, int64(12345))
			add("type_int_for_string", c)
		}
		if k, v, found := firstArgOf(fn, gt[0], typeIs("array", "tuple")); found {
			if l, isList := v.([]any); isList && len(l) > 0 {
				c = cloneCalls(gt)
				c[0].Args.Set(k, []any{int64(1), "mixed", true})
				add("list_wrong_item_types", c)
				for i, e := range l {
					if s, isStr := e.(string); isStr {
						c = cloneCalls(gt)
						nl := append([]any{}, l...)
						nl[i] = normalisedVariant(s)
						c[0].Args.Set(k, nl)
						add("normalise_list_string", c)
						break
					}
				}
			}
		}
		if k, v, found := firstArgOf(fn, gt[0], typeIs("dict")); found {
			if o, isObj := v.(*toolcall.Object); isObj && o.Len() > 0 {
				c = cloneCalls(gt)
				c[0].Args.Set(k, withoutArg(o, o.Keys()[0]))
				add("dict_missing_key", c)
				c = cloneCalls(gt)
				no := cloneCalls([]Call{{Args: o}})[0].Args
				k0, v0 := o.At(0)
				no.Set(k0, wrongValue(v0))
				c[0].Args.Set(k, no)
				add("dict_wrong_value", c)
			}
		}
	} else {
		if k, _, found := firstArgOf(fn, gt[0], func(Param, any) bool { return true }); found {
			c = cloneCalls(gt)
			c[0].Args.Set(k, int64(1))
			add("type_non_string_source", c)
		}
	}

	if k, v, found := firstArgOf(fn, gt[0], func(Param, any) bool { return true }); found {
		c = cloneCalls(gt)
		if s, isStr := v.(string); isStr && it.Lang != Python {
			c[0].Args.Set(k, wrongSource(s, fn.Params[k].Type))
		} else {
			c[0].Args.Set(k, wrongValue(v))
		}
		add("wrong_value", c)
	}
	if k, v, found := firstArgOf(fn, gt[0], func(p Param, v any) bool {
		_, isStr := v.(string)
		return isStr && (p.Type == "string" || p.Type == "String" || p.Type == "any")
	}); found {
		c = cloneCalls(gt)
		c[0].Args.Set(k, normalisedVariant(v.(string)))
		add("normalise_string", c)
		c = cloneCalls(gt)
		c[0].Args.Set(k, strings.ReplaceAll(v.(string), "'", `"`)+"'")
		add("string_quote_swap", c)
	}

	add("empty_output", nil)
	c = cloneCalls(gt)
	add("duplicate_first_call", append(c, cloneCalls(gt[:1])...))
	if len(gt) > 1 {
		c = cloneCalls(gt)
		add("drop_last_call", c[:len(c)-1])
		c = cloneCalls(gt)
		for i, j := 0, len(c)-1; i < j; i, j = i+1, j-1 {
			c[i], c[j] = c[j], c[i]
		}
		add("reverse_calls", c)
		c = cloneCalls(gt)
		c[len(c)-1] = cloneCalls(gt[:1])[0]
		add("replace_last_with_first", c)
	}
	if len(it.Funcs) > 1 {
		for _, f := range it.Funcs {
			if f.Name != gt[0].Name {
				c = cloneCalls(gt)
				c[0].Name = f.Name
				add("call_other_function", c)
				break
			}
		}
	}
	return out
}

// encodeCalls renders calls in BFCL's decoded format.
func encodeCalls(calls []Call) any {
	out := make([]any, len(calls))
	for i, c := range calls {
		o := toolcall.NewObject(1)
		args := c.Args
		if args == nil {
			args = toolcall.NewObject(0)
		}
		o.Set(c.Name, args)
		out[i] = o
	}
	return out
}

// caseLine is the JSON line of a case, in the `benchline score bfcl-ast`
// input format plus a "corruption" field.
func caseLine(c confCase) ([]byte, error) {
	o := toolcall.NewObject(8)
	o.Set("id", c.Item.ID)
	o.Set("corruption", c.Corruption)
	o.Set("category", c.Item.Category)
	o.Set("language", string(c.Item.Lang))
	o.Set("functions", c.Item.FuncsRaw)
	o.Set("model_output", encodeCalls(c.Output))
	if c.Item.GTRaw != nil {
		o.Set("possible_answer", c.Item.GTRaw)
	}
	if c.UnderscoreToDot {
		o.Set("underscore_to_dot", true)
	}
	b, err := toolcall.EncodeJSON(nil, o)
	return append(b, '\n'), err
}
