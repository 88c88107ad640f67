package toolcall

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// obj builds an ordered object from alternating keys and values.
func obj(kv ...any) *Object {
	o := NewObject(len(kv) / 2)
	for i := 0; i < len(kv); i += 2 {
		o.Set(kv[i].(string), kv[i+1])
	}
	return o
}

func call(name string, kv ...any) Call { return Call{Name: name, Args: obj(kv...)} }

// sameCalls compares calls including argument order and Go value types
// (int64 vs float64, Tuple vs []any).
func sameCalls(a, b []Call) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || !sameValue(a[i].Args, b[i].Args) {
			return false
		}
	}
	return true
}

func sameValue(a, b any) bool {
	ao, aIsObj := a.(*Object)
	bo, bIsObj := b.(*Object)
	if aIsObj || bIsObj {
		if !aIsObj || !bIsObj || ao.Len() != bo.Len() {
			return false
		}
		for i := 0; i < ao.Len(); i++ {
			ka, va := ao.At(i)
			kb, vb := bo.At(i)
			if ka != kb || !sameValue(va, vb) {
				return false
			}
		}
		return true
	}
	if reflect.TypeOf(a) != reflect.TypeOf(b) {
		return false
	}
	switch x := a.(type) {
	case []any:
		y := b.([]any)
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	case Tuple:
		return sameValue([]any(x), []any(b.(Tuple)))
	}
	return a == b
}

func show(calls []Call) string {
	var parts []string
	for _, c := range calls {
		s, _ := RenderHermes([]Call{c})
		parts = append(parts, s)
	}
	return strings.Join(parts, " | ")
}

func TestDecodeJSONKeepsIntFloatAndOrder(t *testing.T) {
	tests := []struct {
		in   string
		want any
	}{
		{`5`, int64(5)},
		{`5.0`, float64(5)},
		{`-1e3`, float64(-1000)},
		{`1E2`, float64(100)},
		{`true`, true},
		{`null`, nil},
		{`"a\u00e9"`, "aé"},
		{`[1, 2.5, "x"]`, []any{int64(1), 2.5, "x"}},
		{`{"b": 1, "a": 2}`, obj("b", int64(1), "a", int64(2))},
		{`{"a": 1, "b": 2, "a": 3}`, obj("a", int64(3), "b", int64(2))}, // first position, last value
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := DecodeJSON([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !sameValue(got, tt.want) {
				t.Fatalf("got %#v, want %#v", got, tt.want)
			}
		})
	}
	for _, bad := range []string{`{"a": }`, `[1,]`, `1 2`, `99999999999999999999`, ``} {
		if _, err := DecodeJSON([]byte(bad)); err == nil {
			t.Errorf("DecodeJSON(%q): want error", bad)
		}
	}
}

func TestEncodeJSONFloatsStayFloats(t *testing.T) {
	for _, tt := range []struct {
		in   any
		want string
	}{
		{5.0, "5.0"}, {int64(5), "5"}, {2.5, "2.5"}, {1e21, "1e+21"},
		{obj("z", 1.0, "a", []any{"x", nil, true}), `{"z": 1.0, "a": ["x", null, true]}`},
		{Tuple{int64(1), "a"}, `[1, "a"]`},
	} {
		got, err := EncodeJSON(nil, tt.in)
		if err != nil || string(got) != tt.want {
			t.Errorf("EncodeJSON(%v) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

func TestParsePython(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Call
	}{
		{"single call without brackets", `calculate_triangle_area(base=10, height=5, unit='units')`,
			[]Call{call("calculate_triangle_area", "base", int64(10), "height", int64(5), "unit", "units")}},
		{"list of calls with dotted names", `[func(a=1, b="x"), mod.f2(c=[1,2], d={"k": True})]`,
			[]Call{call("func", "a", int64(1), "b", "x"), call("mod.f2", "c", []any{int64(1), int64(2)}, "d", obj("k", true))}},
		{"floats and negatives", `[f(x=1.0, y=-2, z=-2.5, w=1e3, v=.5)]`,
			[]Call{call("f", "x", 1.0, "y", int64(-2), "z", -2.5, "w", 1000.0, "v", 0.5)}},
		{"BFCL quirk: unary plus negates", `f(x=+3)`, []Call{call("f", "x", int64(-3))}},
		{"string escapes and quotes", `f(a='it\'s', b="say \"hi\"\n", c=r'\d+', d='\x41\u00e9', e='a' 'b')`,
			[]Call{call("f", "a", "it's", "b", "say \"hi\"\n", "c", `\d+`, "d", "Aé", "e", "ab")}},
		{"triple quoted", "f(a='''x\ny''')", []Call{call("f", "a", "x\ny")}},
		{"None True False Ellipsis", `f(a=None, b=True, c=False, d=...)`,
			[]Call{call("f", "a", nil, "b", true, "c", false, "d", "...")}},
		{"tuple stays a tuple", `f(t=(1, 'a'), u=(2,), v=())`,
			[]Call{call("f", "t", Tuple{int64(1), "a"}, "u", Tuple{int64(2)}, "v", Tuple{})}},
		{"bare name is its identifier", `f(x=some_var)`, []Call{call("f", "x", "some_var")}},
		{"arithmetic is evaluated", `f(a=2**10, b=1/2, c=7//2, d=-7%3, e="ab"*2, g=3*1.5)`,
			[]Call{call("f", "a", int64(1024), "b", 0.5, "c", int64(3), "d", int64(2), "e", "abab", "g", 4.5)}},
		{"precedence and left associativity", `f(a=10-2-3, b=2+3*4, c=100//7%4, d=2*3-1)`,
			[]Call{call("f", "a", int64(5), "b", int64(14), "c", int64(2), "d", int64(5))}},
		{"nested call with keywords becomes a dict", `f(x=g(y=1))`,
			[]Call{call("f", "x", obj("g", obj("y", int64(1))))}},
		{"nested call without keywords becomes source", `f(x=np.array([1,2]), y=len( 'ab' ))`,
			[]Call{call("f", "x", "np.array([1, 2])", "y", "len('ab')")}},
		{"subscript becomes source", `f(x=data['k'][0:2])`, []Call{call("f", "x", "data['k'][0:2]")}},
		{"positional args ignored", `f(1, 2, a=3)`, []Call{call("f", "a", int64(3))}},
		{"code fence and backticks stripped", "```\n[f(a=1)]\n```", []Call{call("f", "a", int64(1))}},
		{"empty output is no calls", ``, []Call{}},
		{"multi-line list with comments", "[f(a=1),  # first\n g(b=[\n 1,\n 2,\n])]",
			[]Call{call("f", "a", int64(1)), call("g", "b", []any{int64(1), int64(2)})}},
		{"underscored and hex ints", `f(a=1_000, b=0x10)`, []Call{call("f", "a", int64(1000), "b", int64(16))}},
		{"no arguments", `[f()]`, []Call{call("f")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePython(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !sameCalls(got, tt.want) {
				t.Fatalf("got %s\nwant %s", show(got), show(tt.want))
			}
		})
	}
}

func TestParsePythonErrors(t *testing.T) {
	for _, in := range []string{
		`I cannot help with that.`,
		`[f(a=1), 3]`,
		`f(a=1`,
		`f(a=1, a=2)`,
		`f(a=b'x')`,
		`f(a=f"x")`,
		`f(a=1j)`,
		`f(a=x > 1)`,
		`f(a=lambda: 1)`,
		`f(a={1: 2})`,
		`f(a={1, 2})`,
		`f(a='unterminated)`,
		`f(**kw)`,
		`f(a=--1)`,
		`f(a=99999999999999999999)`,
		`f(a=1/0)`,
		`f(if=1)`,
		`f(a=1)\ng(b=2)`,
		`f(x=math.pi)`, // attribute values are unsupported by BFCL's resolver
		`'[f(a=1)]'`,   // becomes ['[f(a=1)]'] after BFCL's bracket wrapping
	} {
		t.Run(in, func(t *testing.T) {
			if calls, err := ParsePython(in); err == nil {
				t.Fatalf("want error, got %s", show(calls))
			}
		})
	}
}

func TestParseHermes(t *testing.T) {
	reply := "Sure.\n<tool_call>\n{\"name\": \"spotify.play\", \"arguments\": {\"artist\": \"Taylor Swift\", \"duration\": 20}}\n</tool_call>\n" +
		"<tool_call>{\"name\": \"g\", \"arguments\": \"{\\\"x\\\": 1.5}\"}</tool_call><tool_call>{\"name\": \"h\"}</tool_call>"
	got, err := ParseHermes(reply)
	if err != nil {
		t.Fatal(err)
	}
	want := []Call{call("spotify.play", "artist", "Taylor Swift", "duration", int64(20)), call("g", "x", 1.5), call("h")}
	if !sameCalls(got, want) {
		t.Fatalf("got %s", show(got))
	}
	for name, in := range map[string]string{
		"unterminated":    `<tool_call>{"name": "f", "arguments": {}}`,
		"not json":        `<tool_call>f(a=1)</tool_call>`,
		"no name":         `<tool_call>{"arguments": {}}</tool_call>`,
		"args not object": `<tool_call>{"name": "f", "arguments": [1]}</tool_call>`,
	} {
		if _, err := ParseHermes(in); err == nil || errors.Is(err, ErrNoCalls) {
			t.Errorf("%s: want a decode error, got %v", name, err)
		}
	}
	if _, err := ParseHermes("just text"); !errors.Is(err, ErrNoCalls) {
		t.Errorf("no blocks: want ErrNoCalls, got %v", err)
	}
}

func TestParseOpenAI(t *testing.T) {
	msg := `{"role": "assistant", "content": null, "tool_calls": [
	  {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\", \"days\": 3, \"temp\": 20.0}"}},
	  {"id": "c2", "type": "function", "function": {"name": "noop", "arguments": ""}}]}`
	got, err := ParseOpenAI([]byte(msg))
	if err != nil {
		t.Fatal(err)
	}
	want := []Call{call("get_weather", "city", "Paris", "days", int64(3), "temp", 20.0), call("noop")}
	if !sameCalls(got, want) {
		t.Fatalf("got %s", show(got))
	}
	if _, err := ParseOpenAI([]byte(`{"role": "assistant", "content": "hi"}`)); !errors.Is(err, ErrNoCalls) {
		t.Errorf("no tool_calls: want ErrNoCalls, got %v", err)
	}
	if _, err := ParseOpenAI([]byte(`[{"function": {"name": "f", "arguments": "{bad"}}]`)); err == nil {
		t.Error("bad arguments string: want error")
	}
	c, err := FromOpenAI("f", `{"a": [1, 2.0]}`)
	if err != nil || !sameCalls([]Call{c}, []Call{call("f", "a", []any{int64(1), 2.0})}) {
		t.Errorf("FromOpenAI: %v %v", c, err)
	}
}

func TestParseJSON(t *testing.T) {
	tests := []struct {
		name, in string
		want     []Call
	}{
		{"name/arguments object", `{"name": "f", "arguments": {"a": 1}}`, []Call{call("f", "a", int64(1))}},
		{"name/parameters list", `[{"name": "f", "parameters": {"a": 1.0}}, {"name": "g", "arguments": {}}]`,
			[]Call{call("f", "a", 1.0), call("g")}},
		{"BFCL decoded form", `[{"f": {"a": "x"}}, {"g.h": {}}]`, []Call{call("f", "a", "x"), call("g.h")}},
		{"fenced", "```json\n{\"name\": \"f\", \"arguments\": {\"a\": true}}\n```", []Call{call("f", "a", true)}},
		{"openai tool call item", `[{"type": "function", "function": {"name": "f", "arguments": "{\"a\": 2}"}}]`,
			[]Call{call("f", "a", int64(2))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseJSON(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !sameCalls(got, tt.want) {
				t.Fatalf("got %s", show(got))
			}
		})
	}
	for _, bad := range []string{`{"a": 1, "b": 2}`, `[1]`, `{"f": 3}`, `{`} {
		if _, err := ParseJSON(bad); err == nil {
			t.Errorf("ParseJSON(%q): want error", bad)
		}
	}
	if _, err := ParseJSON(`[]`); !errors.Is(err, ErrNoCalls) {
		t.Errorf("empty list: want ErrNoCalls, got %v", err)
	}
}

func TestParseDetectsFormat(t *testing.T) {
	tests := []struct {
		in     string
		format Format
		name   string
	}{
		{"<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>", FormatHermes, "f"},
		{`[{"name": "f", "arguments": {}}]`, FormatJSON, "f"},
		{`{"f": {"a": 1}}`, FormatJSON, "f"},
		{`[f(a=1)]`, FormatPython, "f"},
		{`[f(a={"k": 1})]`, FormatPython, "f"},
	}
	for _, tt := range tests {
		calls, format, err := Parse(tt.in)
		if err != nil || format != tt.format || len(calls) != 1 || calls[0].Name != tt.name {
			t.Errorf("Parse(%q) = %v, %s, %v; want one call %s in %s", tt.in, calls, format, err, tt.name, tt.format)
		}
	}
	if _, _, err := Parse("   "); !errors.Is(err, ErrNoCalls) {
		t.Errorf("blank: want ErrNoCalls, got %v", err)
	}
	if _, _, err := Parse("The weather is nice."); err == nil {
		t.Error("prose: want an error")
	}
}

func TestRenderHermesRoundTrip(t *testing.T) {
	gt, err := DecodeJSON([]byte(`[{"spotify.play": {"artist": ["Taylor Swift", "taylor swift"], "duration": [20], "shuffle": ["", false]}},
		{"calc": {"x": [5.0], "opts": [{"mode": ["fast"], "level": ["", 2]}], "rows": [[{"a": [1]}, {"a": [2.5]}]], "tags": [["x", "y"]]}}]`))
	if err != nil {
		t.Fatal(err)
	}
	calls, err := GroundTruthCalls(gt)
	if err != nil {
		t.Fatal(err)
	}
	want := []Call{
		call("spotify.play", "artist", "Taylor Swift", "duration", int64(20)),
		call("calc", "x", 5.0, "opts", obj("mode", "fast"), "rows", []any{obj("a", int64(1)), obj("a", 2.5)}, "tags", []any{"x", "y"}),
	}
	if !sameCalls(calls, want) {
		t.Fatalf("GroundTruthCalls = %s", show(calls))
	}
	text, err := RenderHermes(calls)
	if err != nil {
		t.Fatal(err)
	}
	wantText := "<tool_call>\n{\"name\": \"spotify.play\", \"arguments\": {\"artist\": \"Taylor Swift\", \"duration\": 20}}\n</tool_call>\n" +
		"<tool_call>\n{\"name\": \"calc\", \"arguments\": {\"x\": 5.0, \"opts\": {\"mode\": \"fast\"}, \"rows\": [{\"a\": 1}, {\"a\": 2.5}], \"tags\": [\"x\", \"y\"]}}\n</tool_call>"
	if text != wantText {
		t.Fatalf("RenderHermes =\n%s\nwant\n%s", text, wantText)
	}
	back, err := ParseHermes(text)
	if err != nil {
		t.Fatal(err)
	}
	if !sameCalls(back, calls) {
		t.Fatalf("round trip: %s", show(back))
	}
}

func TestPyReprs(t *testing.T) {
	for _, tt := range []struct {
		in   any
		want string
	}{
		{"it's", `"it's"`}, {`say "hi"`, `'say "hi"'`}, {"both ' \"", `'both \' "'`}, {"a\nb\x01é", `'a\nb\x01é'`},
		{1.0, "1.0"}, {1e16, "1e+16"}, {123456789.0, "123456789.0"}, {0.0001, "0.0001"}, {0.00001, "1e-05"},
	} {
		if got := pyConstRepr(tt.in); got != tt.want {
			t.Errorf("repr(%#v) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestDecodeJSONDropping(t *testing.T) {
	in := `{"id": "x", "functions": [{"name": "f", "description": "long {text}", "parameters": {"properties": {"a": {"type": "string", "description": ["nested", {"x": 1}]}}}}],
		"model_output": [{"f": {"description": "kept"}}]}`
	v, err := DecodeJSONDropping([]byte(in), "functions", "description")
	if err != nil {
		t.Fatal(err)
	}
	want := obj("id", "x",
		"functions", []any{obj("name", "f", "parameters", obj("properties", obj("a", obj("type", "string"))))},
		"model_output", []any{obj("f", obj("description", "kept"))})
	if !sameValue(v, want) {
		b, _ := EncodeJSON(nil, v)
		t.Fatalf("got %s", b)
	}
	if _, err := DecodeJSONDropping([]byte(`{"functions": [{"description": [1,}]}`), "functions", "description"); err == nil {
		t.Fatal("a malformed skipped value must still be an error")
	}
}
