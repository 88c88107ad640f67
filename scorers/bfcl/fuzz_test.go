package bfcl

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzScoreLines feeds arbitrary input to the `score bfcl-ast` path: it
// must never panic, and must write exactly one result line per non-blank
// input line.
func FuzzScoreLines(f *testing.F) {
	compact := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	seeds := []string{
		`{"id": "a", "category": "simple_python", "functions": ` + compact(triangleFuncs) + `, "model_output": [{"calculate_triangle_area": {"base": 10, "height": 5}}], "possible_answer": ` + compact(triangleGT) + `}`,
		`{"id": "b", "category": "parallel", "functions": ` + compact(spotifyFuncs) + `, "model_output": [{"spotify.play": {"artist": "x", "duration": 1.5}}], "possible_answer": ` + compact(spotifyGT) + `}`,
		`{"id": "c", "category": "simple_java", "functions": [{"name": "J.m", "parameters": {"properties": {"m": {"type": "HashMap"}, "l": {"type": "ArrayList", "items": {"type": "long"}}}, "required": []}}], "model_output": [{"J.m": {"m": "new HashMap<>() {{ put(\"k\", 1L); }}", "l": "new ArrayList<>(Arrays.asList(1L, 2))"}}], "possible_answer": [{"J.m": {"m": [{"k": [1]}], "l": [[1, 2]]}}]}`,
		`{"id": "d", "category": "simple_javascript", "functions": [{"name": "f", "parameters": {"properties": {"d": {"type": "dict"}, "a": {"type": "array", "items": {"type": "Bigint"}}}, "required": []}}], "model_output": [{"f": {"d": "{a: [1, 2], b: {c: 1}}", "a": "[[1n], 2n]"}}], "possible_answer": [{"f": {"d": [{"a": [[1, 2]], "b": ["x", ""]}], "a": [[1, 2]]}}]}`,
		`{"id": "e", "category": "live_irrelevance", "model_output": [{}]}`,
		"not json\n\n{}",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var out bytes.Buffer
		_ = ScoreLines(strings.NewReader(s), &out)
		want := 0
		for _, l := range strings.Split(s, "\n") {
			if len(bytes.TrimSpace([]byte(l))) > 0 {
				want++
			}
		}
		if got := strings.Count(out.String(), "\n"); got != want {
			t.Fatalf("%d result lines for %d input lines", got, want)
		}
	})
}

// FuzzConvert runs the Java and JavaScript converters on arbitrary source
// text: they may only fail the way the reference raises (pyException).
func FuzzConvert(f *testing.F) {
	for _, s := range []string{"new int[]{1, 2}", `new ArrayList<String>() {{ add("a"); }}`, `new HashMap<String, Object>() {{ put("k", 1.5f); }}`,
		"{a: 1, 'b': [1, 2], c: {d: e}}", "[[1, 2], [3]]", "new Array(1n, 2)", "12\n", "-3.5e2f", `"q"`, "1_0"} {
		f.Add(s, uint8(0))
	}
	types := []struct {
		lang        Language
		typ, nested string
	}{
		{Java, "Array", "integer"}, {Java, "Array", "String"}, {Java, "ArrayList", "long"}, {Java, "ArrayList", "char"},
		{Java, "HashMap", ""}, {Java, "float", ""}, {Java, "long", ""}, {Java, "double", ""},
		{JavaScript, "dict", ""}, {JavaScript, "array", "Bigint"}, {JavaScript, "array", "array"}, {JavaScript, "array", "dict"},
		{JavaScript, "String", ""}, {JavaScript, "float", ""}, {JavaScript, "Bigint", ""},
	}
	f.Fuzz(func(t *testing.T, s string, which uint8) {
		tc := types[int(which)%len(types)]
		defer func() {
			if r := recover(); r != nil {
				if _, isPy := r.(pyException); !isPy {
					t.Fatalf("convert(%q, %s, %s) panicked: %v", s, tc.typ, tc.nested, r)
				}
			}
		}()
		_ = convert(tc.lang, s, tc.typ, tc.nested)
	})
}
