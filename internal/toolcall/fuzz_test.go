package toolcall

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

var pythonSeeds = []string{
	`[func(a=1, b="x"), mod.f2(c=[1,2], d={"k": True})]`,
	`calculate_triangle_area(base=10, height=5, unit='units')`,
	`f(x=-5, y=+3, z=2**10, w=np.array([1,2]), v=a[1:2:3], u=g(h(k=1)), t=(1,), s=None, r=..., q='it\'s')`,
	"```\n[f(a='''x\ny''', b=r'\\d', c=0x1F, d=1_0.5e-3)]\n```",
	`[f(a={"k": [1, {"n": (2, 3)}]}, b=-0.0, c=7 // -2, d=-7 % 3, e='a' * 3)]`,
	`[f(a=1), # comment
	g(b=2)]`,
	`f(a=1`, `f(a='\N{DASH}')`, `f(a=b'x')`, `[1, 2]`, `'`, `[[`, `f(a=2**99)`, `f(a=(1)(2))`,
}

// FuzzParsePython checks that arbitrary text never panics the Python-call
// parser, and that whatever parses renders to Hermes blocks that parse back
// to the same calls.
func FuzzParsePython(f *testing.F) {
	for _, s := range pythonSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		calls, err := ParsePython(s)
		if err != nil {
			return
		}
		roundTrip(t, calls)
	})
}

var hermesSeeds = []string{
	"<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1, \"b\": [1.5, \"x\"]}}\n</tool_call>",
	"text <tool_call>{\"name\": \"g\", \"arguments\": \"{\\\"x\\\": null}\"}</tool_call> more <tool_call>{\"name\": \"h\"}</tool_call>",
	"<tool_call>{\"name\": \"f\"", "<tool_call></tool_call>", "<tool_call>{\"name\": 1}</tool_call>",
}

// FuzzParseHermes checks the Hermes parser never panics and round-trips.
func FuzzParseHermes(f *testing.F) {
	for _, s := range hermesSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		calls, err := ParseHermes(s)
		if err != nil {
			return
		}
		roundTrip(t, calls)
	})
}

var jsonSeeds = []string{
	`{"name": "f", "arguments": {"a": 1}}`, `[{"f": {"a": 2.0}}]`, `[]`, `{"a": 1, "b": 2}`,
	"```json\n[{\"name\": \"f\", \"parameters\": {}}]\n```",
	`[{"type": "function", "function": {"name": "f", "arguments": "{\"a\": [1, {\"b\": true}]}"}}]`,
}

// FuzzParseJSON checks the bare-JSON parser never panics and round-trips.
func FuzzParseJSON(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		calls, err := ParseJSON(s)
		if err != nil {
			return
		}
		roundTrip(t, calls)
	})
}

// FuzzParse checks format detection over all seeds: no panic, and a
// failure is an error (ErrNoCalls only for text without any call).
func FuzzParse(f *testing.F) {
	for _, seeds := range [][]string{pythonSeeds, hermesSeeds, jsonSeeds} {
		for _, s := range seeds {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		calls, format, err := Parse(s)
		if err != nil {
			if calls != nil {
				t.Fatalf("error %v with calls %v", err, calls)
			}
			return
		}
		if format == "" {
			t.Fatal("no format reported")
		}
		roundTrip(t, calls)
	})
}

func roundTrip(t *testing.T, calls []Call) {
	t.Helper()
	text, err := RenderHermes(calls)
	if err != nil {
		// Only non-finite floats (from arithmetic such as 1e308*10) cannot
		// be rendered as JSON.
		if !strings.Contains(err.Error(), "cannot encode") {
			t.Fatalf("render: %v", err)
		}
		return
	}
	if len(calls) == 0 {
		return
	}
	back, err := ParseHermes(text)
	if err != nil {
		if errors.Is(err, ErrNoCalls) {
			t.Fatalf("rendered calls not found again: %q", text)
		}
		if strings.Contains(err.Error(), "<tool_call>") || strings.Contains(err.Error(), "unterminated") {
			return // a string argument contains a literal tool-call tag
		}
		t.Fatalf("parse rendered %q: %v", text, err)
	}
	if !sameCalls(back, normaliseTuples(calls)) {
		t.Fatalf("round trip changed calls:\n%s\n%s", show(calls), show(back))
	}
}

// normaliseTuples turns tuples into lists, as JSON rendering does.
func normaliseTuples(calls []Call) []Call {
	out := make([]Call, len(calls))
	for i, c := range calls {
		out[i] = Call{Name: c.Name, Args: normTuple(c.Args).(*Object)}
	}
	return out
}

func normTuple(v any) any {
	switch x := v.(type) {
	case Tuple:
		return normTuple([]any(x))
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normTuple(e)
		}
		return out
	case *Object:
		o := NewObject(x.Len())
		for i := 0; i < x.Len(); i++ {
			k, val := x.At(i)
			o.Set(k, normTuple(val))
		}
		return o
	}
	return v
}

// FuzzDecodeJSON checks the hand-written JSON decoder against
// encoding/json: it accepts exactly the valid documents (plus Python's
// NaN/Infinity extensions, minus integers beyond int64), and whatever it
// decodes re-encodes and decodes to the same value.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range append(append([]string{}, jsonSeeds...), `{"a": "\ud83d\ude00\u00e9\n"}`, `[1e400, -0.0, 0]`, `"\xff"`, `[NaN]`, `{"a":1,"a":2}`) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := DecodeJSON([]byte(s))
		valid := json.Valid([]byte(s))
		if err == nil && !valid && !strings.ContainsAny(s, "NI") {
			t.Fatalf("accepted invalid JSON %q", s)
		}
		if err != nil {
			if valid && !strings.Contains(err.Error(), "int64") {
				t.Fatalf("rejected valid JSON %q: %v", s, err)
			}
			return
		}
		b, err := EncodeJSON(nil, v)
		if err != nil {
			return // NaN or Inf
		}
		w, err := DecodeJSON(b)
		if err != nil {
			t.Fatalf("re-decode %q: %v", b, err)
		}
		if !sameValue(v, w) {
			t.Fatalf("round trip of %q changed %#v to %#v", s, v, w)
		}
	})
}

var openAISeeds = []string{
	`[{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\": 1, \"b\": [true, null]}"}}]`,
	`{"role": "assistant", "content": null, "tool_calls": [{"type": "function", "function": {"name": "g", "arguments": {"x": "y"}}}]}`,
	`{"tool_calls": []}`, `{"tool_calls": [1]}`, `[{"function": {"name": "", "arguments": "{}"}}]`, `[{"function": {"name": "f", "arguments": "{"}}]`,
	`[{"function": {"name": "f", "arguments": "` + strings.Repeat("[", 600) + `"}}]`,
}

// FuzzParseOpenAI checks the OpenAI tool-call payload parser never panics
// and round-trips what it accepts.
func FuzzParseOpenAI(f *testing.F) {
	for _, s := range openAISeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		calls, err := ParseOpenAI(data)
		if err != nil {
			if calls != nil {
				t.Fatalf("error %v with calls %v", err, calls)
			}
			return
		}
		if len(calls) == 0 {
			t.Fatal("no calls and no error")
		}
		roundTrip(t, calls)
	})
}
