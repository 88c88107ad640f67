package toolcall

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"testing"
)

// tagged renders decoded calls in the tagged form used by
// testdata/python_syntax_reference.jsonl: tuples, dicts (ordered pairs) and
// floats (Python repr) are tagged so that JSON can tell them apart.
func tagged(v any) any {
	switch x := v.(type) {
	case Tuple:
		return map[string]any{"__tuple__": tagged([]any(x))}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = tagged(e)
		}
		return out
	case *Object:
		pairs := []any{}
		for i := 0; i < x.Len(); i++ {
			k, val := x.At(i)
			pairs = append(pairs, []any{k, tagged(val)})
		}
		return map[string]any{"__dict__": pairs}
	case float64:
		return map[string]any{"__float__": PyFloatRepr(x)}
	case int64:
		return json.Number(strconv.FormatInt(x, 10))
	}
	return v
}

func canonicalJSON(t *testing.T, b []byte) string {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// TestParsePythonMatchesReference compares ParsePython with the output of
// BFCL's own decoder (default_decode_ast_prompting, run with Python 3.11 on
// the same inputs; see testdata/README.md) on edge cases of the syntax.
func TestParsePythonMatchesReference(t *testing.T) {
	f, err := os.Open("testdata/python_syntax_reference.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e struct {
			In  string          `json:"in"`
			OK  bool            `json:"ok"`
			Out json.RawMessage `json:"out"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		t.Run(e.In, func(t *testing.T) {
			calls, err := ParsePython(e.In)
			if (err == nil) != e.OK {
				t.Fatalf("error %v, reference decodes: %v", err, e.OK)
			}
			if err != nil {
				return
			}
			got := []any{}
			for _, c := range calls {
				o := NewObject(1)
				o.Set(c.Name, c.Args)
				got = append(got, tagged(o))
			}
			gb, _ := json.Marshal(got)
			if g, w := canonicalJSON(t, gb), canonicalJSON(t, e.Out); g != w {
				t.Fatalf("got  %s\nwant %s", g, w)
			}
		})
	}
}
