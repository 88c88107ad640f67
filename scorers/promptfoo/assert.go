package promptfoo

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/dop251/goja"
	"github.com/santhosh-tekuri/jsonschema/v6"
	openai "github.com/sashabaranov/go-openai"
	"gopkg.in/yaml.v3"
)

// Types are the deterministic assertion types benchline grades (each
// also as not-TYPE).
var Types = []string{"equals", "contains", "icontains", "contains-any", "contains-all", "icontains-any",
	"icontains-all", "starts-with", "regex", "is-json", "contains-json", "is-valid-openai-tools-call",
	"levenshtein", "javascript"}

// Judged are promptfoo's model-graded types benchline grades by asking
// the run's judges (see judged.go); of their not- forms only
// not-llm-rubric, as promptfoo's other two handlers ignore not-.
// model-graded-factuality is promptfoo's other name of factuality.
var Judged = []string{"llm-rubric", "model-graded-closedqa", "factuality", "model-graded-factuality"}

// Bounds of the JavaScript engine.
var (
	// JSTimeout stops a javascript assertion that runs longer.
	JSTimeout = 2 * time.Second
	// MaxJSBytes bounds a javascript assertion's source and the output it
	// is given.
	MaxJSBytes = 1 << 20
)

// Component is one assertion's verdict.
type Component struct {
	Type   string  `json:"type"`
	Pass   bool    `json:"pass"`
	Score  float64 `json:"score"`
	Reason string  `json:"reason,omitempty"`
}

// Result is a test's verdict, as promptfoo's gradingResult.
type Result struct {
	Pass       bool        `json:"pass"`
	Score      float64     `json:"score"`
	Reason     string      `json:"reason"`
	Components []Component `json:"components,omitempty"`
}

// Output is what the model answered: its text, and its tool calls as
// OpenAI returns them (then the output promptfoo's assertions see).
type Output struct {
	Text      string
	ToolCalls []ToolCall
}

// ToolCall is one OpenAI tool call.
type ToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Grade grades one reply to sample s of test t, as promptfoo's
// runAssertions does. A judged assertion fails here (it needs the run's
// judges: see gradeJudged).
func Grade(t Test, p Provider, s Sample, out Output) Result {
	res, _ := grade(t, p, s, out, nil)
	return res
}

// judgeFunc grades judged assertion i of a test, whose value rendered to
// value: ok is false when no judge gave a verdict.
type judgeFunc func(i int, a Assertion, value string) (c Component, ok bool)

// grade is Grade with jf grading the judged assertions; judged is false
// when one of them got no verdict: the test then has no pass or score.
func grade(t Test, p Provider, s Sample, out Output, jf judgeFunc) (res Result, judged bool) {
	if len(t.Assert) == 0 {
		return Result{Pass: true, Score: 1, Reason: "No assertions"}, true
	}
	var total, weight float64
	var failed string
	judged = true
	for i, a := range t.Assert {
		var c Component
		if base := strings.TrimPrefix(a.Type, "not-"); !slices.Contains(Judged, base) {
			c = gradeOne(a, t, p, s, out)
		} else {
			c = Component{Type: a.Type, Reason: "a judged assertion: graded by the run's judges (benchline eval)"}
			if v, err := renderValue(a.Value, t.Vars); err != nil {
				c.Reason = fmt.Sprintf("the value does not render: %v", err)
			} else if jf != nil {
				var ok bool
				// An assertion of weight 0 passes and counts for
				// nothing: its judge errors leave the test graded.
				if c, ok = jf(i, a, jsString(v)); !ok && a.Weight != 0 {
					judged = false
				}
			}
		}
		if a.Weight == 0 {
			c.Pass = true
		}
		total += c.Score * a.Weight
		weight += a.Weight
		res.Components = append(res.Components, c)
		if !c.Pass {
			failed = c.Reason
		}
	}
	if weight > 0 {
		res.Score = total / weight
	}
	res.Pass, res.Reason = failed == "", failed
	if failed == "" {
		res.Reason = "All assertions passed"
	}
	if t.Threshold != nil {
		res.Pass = res.Score >= *t.Threshold
		res.Reason = fmt.Sprintf("Aggregate score %.2f against the threshold %v", res.Score, *t.Threshold)
	}
	return res, judged
}

func verdict(typ string, pass bool, reason string) Component {
	c := Component{Type: typ, Pass: pass, Reason: reason}
	if pass {
		c.Score, c.Reason = 1, ""
	}
	return c
}

// OutputOf is the output promptfoo's assertions grade of a reply with
// text and tool calls (as an OpenAI-compatible endpoint returns them).
func OutputOf(text string, calls []openai.ToolCall) Output {
	out := Output{Text: text}
	for _, tc := range calls {
		var c ToolCall
		c.ID, c.Type, c.Function.Name, c.Function.Arguments = tc.ID, string(tc.Type), tc.Function.Name, tc.Function.Arguments
		out.ToolCalls = append(out.ToolCalls, c)
	}
	return out
}

// outputString is promptfoo's coerceString of the output: the text, or
// the tool calls as JSON when the reply has them.
func (o Output) outputString() string {
	if len(o.ToolCalls) > 0 {
		b, _ := json.Marshal(o.ToolCalls)
		return string(b)
	}
	return o.Text
}

func gradeOne(a Assertion, t Test, p Provider, s Sample, out Output) (c Component) {
	inverse := strings.HasPrefix(a.Type, "not-")
	base := strings.TrimPrefix(a.Type, "not-")
	fail := func(format string, args ...any) Component {
		return Component{Type: a.Type, Reason: fmt.Sprintf(format, args...)}
	}
	value, err := renderValue(a.Value, t.Vars)
	if err != nil {
		return fail("the value does not render: %v", err)
	}
	output := out.outputString()
	switch base {
	case "equals":
		var pass bool
		switch value.(type) {
		case map[string]any, []any, nil:
			var got any
			if json.Unmarshal([]byte(output), &got) == nil {
				pass = reflect.DeepEqual(jsonNumbers(value), got) != inverse
			} else {
				pass = inverse
			}
		default:
			pass = (jsString(value) == output) != inverse
		}
		return verdict(a.Type, pass, fmt.Sprintf("expected output %sto equal %q", not(inverse), jsString(value)))
	case "contains", "icontains":
		if !containsValue(value) {
			return fail("%s must have a string or number value", base)
		}
		v, o := jsString(value), output
		if base == "icontains" {
			v, o = strings.ToLower(v), strings.ToLower(o)
		}
		pass := strings.Contains(o, v) != inverse
		return verdict(a.Type, pass, fmt.Sprintf("expected output %sto contain %q", not(inverse), jsString(value)))
	case "contains-any", "contains-all", "icontains-any", "icontains-all":
		list, err := valueList(value)
		if err != nil {
			return fail("%s: %v", base, err)
		}
		o := output
		fold := strings.HasPrefix(base, "i")
		if fold {
			o = strings.ToLower(o)
		}
		has := func(v string) bool {
			if fold {
				v = strings.ToLower(v)
			}
			return strings.Contains(o, v)
		}
		var pass bool
		if strings.HasSuffix(base, "-any") {
			pass = slices.ContainsFunc(list, has)
		} else {
			pass = !slices.ContainsFunc(list, func(v string) bool { return !has(v) })
		}
		pass = pass != inverse
		return verdict(a.Type, pass, fmt.Sprintf("expected output %sto %s %q", not(inverse), base, list))
	case "starts-with":
		v, ok := value.(string)
		if !ok || v == "" {
			return fail("starts-with must have a string value")
		}
		return verdict(a.Type, strings.HasPrefix(output, v) != inverse, fmt.Sprintf("expected output %sto start with %q", not(inverse), v))
	case "regex":
		v, ok := value.(string)
		if !ok || v == "" {
			return fail("regex must have a string value")
		}
		match, err := jsRegexTest(v, output)
		if err != nil {
			return fail("invalid regex pattern: %v", err)
		}
		return verdict(a.Type, match != inverse, fmt.Sprintf("expected output %sto match regex %q", not(inverse), v))
	case "is-json":
		var parsed any
		err := json.Unmarshal([]byte(output), &parsed)
		pass := (err == nil) != inverse
		if err == nil && truthy(value) {
			valid, err := validates(value, parsed)
			if err != nil {
				return fail("is-json: %v", err)
			}
			if pass = valid != inverse; !pass {
				return fail("JSON does not conform to the schema")
			}
		}
		return verdict(a.Type, pass, fmt.Sprintf("expected output %sto be valid JSON", not(inverse)))
	case "contains-json":
		objs, cut := extractJSONObjectsCut(output, MaxJSONStarts)
		pass := (len(objs) > 0) != inverse
		if truthy(value) {
			for _, o := range objs {
				valid, err := validates(value, o)
				if err != nil {
					return fail("contains-json: %v", err)
				}
				pass = valid != inverse
				if valid {
					break
				}
			}
		}
		why := fmt.Sprintf("expected output %sto contain valid JSON", not(inverse))
		if cut {
			why += fmt.Sprintf(" (the search stopped at the output's first %d \"{\" that begin no object)", MaxJSONStarts)
		}
		return verdict(a.Type, pass, why)
	case "is-valid-openai-tools-call":
		// promptfoo's handler ignores not-: the not- form grades the same.
		return toolsCall(a.Type, p, out)
	case "levenshtein":
		v, ok := value.(string)
		if !ok {
			return fail("levenshtein must have a string value")
		}
		th := 5.0
		if a.Threshold != nil {
			th = *a.Threshold
		}
		d := levenshtein(output, v)
		return verdict(a.Type, (float64(d) <= th) != inverse, fmt.Sprintf("Levenshtein distance %d against the threshold %v", d, th))
	case "javascript":
		return javascript(a, value, inverse, s, out)
	}
	return fail("assertion type %q is not supported", a.Type)
}

func not(inverse bool) string {
	if inverse {
		return "not "
	}
	return ""
}

// renderValue renders string values (and the strings of a list) over
// the vars, as promptfoo renders assertion values with Nunjucks.
func renderValue(v any, vars map[string]any) (any, error) {
	switch t := v.(type) {
	case string:
		return render(t, vars)
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			if s, ok := x.(string); ok {
				r, err := render(s, vars)
				if err != nil {
					return nil, err
				}
				out[i] = r
				continue
			}
			out[i] = x
		}
		return out, nil
	}
	return v, nil
}

func containsValue(v any) bool {
	switch t := v.(type) {
	case string:
		return t != ""
	case int, float64:
		return true
	}
	return false
}

func truthy(v any) bool {
	switch t := v.(type) {
	case nil:
		return false
	case string:
		return t != ""
	case bool:
		return t
	case int:
		return t != 0
	case float64:
		return t != 0
	}
	return true
}

// valueList is the value of a contains-any/all: a list, or a string of
// comma-separated values (a value in double quotes may hold commas).
func valueList(v any) ([]string, error) {
	if !truthy(v) {
		return nil, errors.New("must have a value")
	}
	if s, ok := v.(string); ok {
		return splitValues(s)
	}
	list, ok := v.([]any)
	if !ok {
		return nil, errors.New("must have a list value")
	}
	out := make([]string, len(list))
	for i, x := range list {
		out[i] = jsString(x)
	}
	return out, nil
}

func splitValues(s string) ([]string, error) {
	var out []string
	i := 0
	for i < len(s) {
		for i < len(s) && (s[i] == ',' || s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
			i++
		}
		if i >= len(s) {
			break
		}
		if s[i] == '"' {
			var b strings.Builder
			j := i + 1
			for j < len(s) {
				if s[j] == '"' {
					if j+1 < len(s) && s[j+1] == '"' {
						b.WriteByte('"')
						j += 2
						continue
					}
					j++
					break
				}
				b.WriteByte(s[j])
				j++
			}
			out = append(out, b.String())
			for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r') {
				j++
			}
			if j < len(s) && s[j] != ',' {
				return nil, errors.New("expected a comma after a quoted value")
			}
			i = j
			continue
		}
		j := strings.IndexByte(s[i:], ',')
		if j < 0 {
			j = len(s) - i
		}
		out = append(out, strings.TrimSpace(s[i:i+j]))
		i += j
	}
	return out, nil
}

// jsString is JavaScript's String(v).
func jsString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return goja.New().ToValue(v).String()
}

// jsonNumbers makes a YAML value's numbers float64, as JSON decoding has them.
func jsonNumbers(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

func jsRegexTest(pattern, s string) (bool, error) {
	vm := goja.New()
	vm.Set("pattern", pattern)
	vm.Set("s", s)
	t := time.AfterFunc(JSTimeout, func() { vm.Interrupt("time limit") })
	defer t.Stop()
	v, err := vm.RunString("new RegExp(pattern).test(s)")
	if err != nil {
		var ex *goja.Exception
		if errors.As(err, &ex) {
			return false, errors.New(ex.Value().String())
		}
		return false, err
	}
	return v.ToBoolean(), nil
}

// validates checks parsed against a JSON schema given as a mapping or as
// YAML/JSON text.
func validates(schema any, parsed any) (bool, error) {
	if s, ok := schema.(string); ok {
		var v any
		if err := yaml.Unmarshal([]byte(s), &v); err != nil {
			return false, fmt.Errorf("the schema: %w", err)
		}
		schema = v
	}
	doc := jsonNumbers(schema)
	c := jsonschema.NewCompiler()
	if err := c.AddResource("schema.json", doc); err != nil {
		return false, fmt.Errorf("the schema: %w", err)
	}
	sch, err := c.Compile("schema.json")
	if err != nil {
		return false, fmt.Errorf("the schema: %w", err)
	}
	return sch.Validate(jsonNumbers(parsed)) == nil, nil
}

// MaxJSONStarts bounds contains-json's search of an output: promptfoo
// tries every "{" as the start of an object, each a scan of up to 100,000
// characters and a parse, which is quadratic in a reply of braces; benchline
// gives up after this many "{" that begin no object (objects found before
// count; the reason says the search was cut).
const MaxJSONStarts = 1000

// extractJSONObjectsN finds the JSON objects in s as promptfoo does (see
// extractJSONObjects3), trying at most starts "{"
// (0: every one) and stopping at the first object when starts is set.
func extractJSONObjectsN(s string, starts int) []any {
	objs, _ := extractJSONObjects3(s, starts, 0)
	return objs
}

// extractJSONObjectsCut finds every JSON object in s as promptfoo does
// (see extractJSONObjects3), giving up after failed "{" that begin no
// object (0: never); cut says it gave up.
func extractJSONObjectsCut(s string, failed int) ([]any, bool) {
	return extractJSONObjects3(s, 0, failed)
}

// extractJSONObjects3 finds the JSON objects in s as promptfoo does: from
// each "{", the shortest balanced span that parses (an unbalanced tail is
// closed), skipping past an object once found. At most starts "{" are
// tried, stopping
// at the first object (starts 0: every one, every object), and at most
// failed "{" that begin no object (0: no bound).
func extractJSONObjects3(s string, starts, failed int) ([]any, bool) {
	const maxLen = 100_000
	var out []any
	u := utf16.Encode([]rune(s))
	tried, misses := 0, 0
	for i := 0; i < len(u); i++ {
		if u[i] != '{' {
			continue
		}
		if starts > 0 && (tried == starts || len(out) > 0) {
			break
		}
		if failed > 0 && misses == failed {
			return out, true
		}
		tried++
		found := len(out)
		open, closed := 1, 0
		for j := i + 1; j < min(i+maxLen, len(u)) && open > closed; {
			if u[j] == '{' {
				open++
			}
			if u[j] == '}' {
				closed++
			}
			j++
			if open == closed || j == len(u) || j == i+maxLen {
				cand := string(utf16.Decode(u[i:j])) + strings.Repeat("}", max(0, open-closed))
				var v any
				if err := yaml.Unmarshal([]byte(cand), &v); err == nil {
					if m, ok := v.(map[string]any); ok {
						out = append(out, m)
						i = j - 1
						break
					}
				} else if open == closed {
					break
				}
			}
		}
		if len(out) == found {
			misses++
		}
	}
	return out, false
}

// levenshtein is the edit distance over UTF-16 code units, as
// JavaScript strings count.
func levenshtein(a, b string) int {
	x, y := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	prev := make([]int, len(y)+1)
	cur := make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(y)]
}

// toolsCall grades is-valid-openai-tools-call: the reply has tool calls,
// each names a function of the provider's tools and its arguments are JSON
// that its parameters' schema accepts.
func toolsCall(typ string, p Provider, out Output) Component {
	fail := func(format string, a ...any) Component {
		return Component{Type: typ, Reason: fmt.Sprintf(format, a...)}
	}
	if len(out.ToolCalls) == 0 {
		return fail("the reply has no tool calls")
	}
	if len(p.Tools) == 0 {
		return fail("no tools configured in the provider, but the output has tool calls")
	}
	for _, tc := range out.ToolCalls {
		var params any
		found := false
		for _, t := range p.Tools {
			if t.Function.Name == tc.Function.Name {
				params, found = t.Function.Parameters, true
				break
			}
		}
		if !found {
			return fail("function %q is not among the provider's tools", tc.Function.Name)
		}
		var args any
		if err := json.Unmarshal([]byte(tc.Function.Arguments), &args); err != nil {
			return fail("function %q: its arguments are not JSON", tc.Function.Name)
		}
		if params != nil {
			ok, err := validates(params, args)
			if err != nil || !ok {
				return fail("function %q: its arguments do not match its parameters", tc.Function.Name)
			}
		}
	}
	return verdict(typ, true, "")
}

var (
	declRE        = regexp.MustCompile(`^(const|let|var)\s`)
	trailingSemis = regexp.MustCompile(`;+\s*$`)
)

// functionBody is promptfoo's body of a one-line javascript assertion: a
// return before the expression (after the declarations).
func functionBody(code string) string {
	trimmed := trailingSemis.ReplaceAllString(strings.TrimSpace(code), "")
	if declRE.MatchString(trimmed) {
		if i := lastStatementSemicolon(trimmed); i >= 0 {
			if expr := strings.TrimSpace(trimmed[i+1:]); expr != "" {
				return trimmed[:i+1] + " return " + expr
			}
		}
		return trimmed
	}
	return "return " + trimmed
}

// lastStatementSemicolon is the index of the last ";" outside strings,
// template literals and brackets, or -1.
func lastStatementSemicolon(s string) int {
	last, depth := -1, 0
	var quote byte
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if quote != 0 {
			if ch == '\\' {
				i++
			} else if ch == quote {
				quote = 0
			}
			continue
		}
		switch ch {
		case '"', '\'', '`':
			quote = ch
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case ';':
			if depth == 0 {
				last = i
			}
		}
	}
	return last
}

const gradingCheck = `(function(r){return typeof r==="object"&&r!==null&&typeof r.pass==="boolean"&&typeof r.score==="number"&&typeof r.reason==="string"})`

// javascript runs a javascript assertion in goja: the code is a function
// of output and context (context.vars, context.prompt, context.test), with
// no I/O (no require, process is an empty object), stopped past JSTimeout.
func javascript(a Assertion, value any, inverse bool, s Sample, out Output) Component {
	fail := func(format string, args ...any) Component {
		return Component{Type: a.Type, Reason: fmt.Sprintf(format, args...)}
	}
	code, ok := value.(string)
	if !ok {
		return fail("javascript assertion must have a string value")
	}
	code = strings.TrimRight(code, " \t\r\n")
	if len(code) > MaxJSBytes {
		return fail("the code has %d bytes, more than %d, the limit", len(code), MaxJSBytes)
	}
	text := out.outputString()
	if len(text) > MaxJSBytes {
		return fail("the output has %d bytes, more than %d, the limit the JavaScript engine is given", len(text), MaxJSBytes)
	}
	body := code
	if !strings.Contains(code, "\n") {
		body = functionBody(code)
	}
	vm := goja.New()
	timer := time.AfterFunc(JSTimeout, func() { vm.Interrupt(fmt.Sprintf("ran longer than %v, the limit", JSTimeout)) })
	defer timer.Stop()
	var output any = text
	if len(out.ToolCalls) > 0 {
		output = jsonNumbers(out.ToolCalls)
	}
	ctx := map[string]any{"prompt": s.Rendered, "vars": s.Vars, "test": map[string]any{"vars": s.Vars}}
	fn, err := vm.RunString("(function(output, context, process) {\n" + body + "\n})")
	if err != nil {
		return fail("Custom function threw error: %v", jsError(err))
	}
	call, ok := goja.AssertFunction(fn)
	if !ok {
		return fail("not a function")
	}
	res, err := call(goja.Undefined(), vm.ToValue(output), vm.ToValue(ctx), vm.NewObject())
	if err != nil {
		return fail("Custom function threw error: %v", jsError(err))
	}
	if p, ok := res.Export().(*goja.Promise); ok {
		if p.State() != goja.PromiseStateFulfilled {
			return fail("the function's promise did not resolve")
		}
		res = p.Result()
	}
	switch res.ExportType() {
	case reflect.TypeOf(true):
		pass := res.ToBoolean() != inverse
		return verdict(a.Type, pass, "Custom function returned "+fmt.Sprint(res.ToBoolean()))
	case reflect.TypeOf(int64(0)), reflect.TypeOf(float64(0)):
		score := res.ToFloat()
		raw := score > 0
		if a.Threshold != nil {
			raw = score >= *a.Threshold
		}
		pass := raw != inverse
		c := Component{Type: a.Type, Pass: pass, Score: score}
		if !pass {
			c.Reason = "Custom function returned " + fmt.Sprint(raw)
		}
		return c
	}
	check, _ := vm.RunString(gradingCheck)
	isGR, _ := goja.AssertFunction(check)
	ok2, err := isGR(goja.Undefined(), res)
	if err != nil || !ok2.ToBoolean() {
		return fail("Custom function must return a boolean, number, or GradingResult object")
	}
	o := res.ToObject(vm)
	pass := o.Get("pass").ToBoolean()
	c := Component{Type: a.Type, Pass: pass != inverse, Score: o.Get("score").ToFloat(), Reason: o.Get("reason").String()}
	return c
}

func jsError(err error) string {
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return ex.Value().String()
	}
	var in *goja.InterruptedError
	if errors.As(err, &in) {
		return fmt.Sprint(in.Value())
	}
	return err.Error()
}
