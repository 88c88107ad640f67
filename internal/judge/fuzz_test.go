package judge

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzExtract checks, for any reply, that Extract does not panic, that a
// result is a JSON object found verbatim in the reply, that extracting from
// the result gives it back, and that a failure is a *ParseError. The seed
// corpus is the golden replies plus hostile shapes.
func FuzzExtract(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "extract", "*.txt"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	for _, s := range []string{
		"", "{", "}", "{}", `{"`, `{"a":`, `{"a":1}`, `{"a":{"b":[1,2,{"c":null}]}}`,
		"```json\n{\"a\":1}\n```", "```\n{\"a\":1}", `<think>{"a":1}`, `</think>{"a":1}</think>`,
		strings.Repeat(`{"a":[`, 200), strings.Repeat("{\"", 300) + `{"ok":true}`,
		"{\"a\":\"\xff\xfe\"}", `{"a":"\u0000"} trailing`, `\frac{1}{2}{"x":"y"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		obj, err := Extract(reply)
		if err != nil {
			var perr *ParseError
			if !errors.As(err, &perr) || !errors.Is(err, ErrUnparseable) {
				t.Fatalf("Extract(%q) error %v is not a *ParseError", reply, err)
			}
			return
		}
		if !strings.Contains(reply, obj) {
			t.Fatalf("Extract(%q) = %q, not a substring of the reply", reply, obj)
		}
		var m map[string]json.RawMessage
		if obj == "" || obj[0] != '{' || json.Unmarshal([]byte(obj), &m) != nil {
			t.Fatalf("Extract(%q) = %q, not a JSON object", reply, obj)
		}
		again, err := Extract(obj)
		if err != nil || again != obj {
			t.Fatalf("Extract(Extract(%q)) = %q, %v; want %q", reply, again, err, obj)
		}
	})
}
