package reporteval

import (
	"bytes"
	"errors"
	"testing"

	"github.com/benchline/benchline/datasets"
)

// FuzzReadTopics reads arbitrary topics files: an error is an InputError
// naming the file and a line, and accepted topics are non-empty and
// distinct.
func FuzzReadTopics(f *testing.F) {
	for _, s := range []string{
		`{"category_str": "Science", "topic": "Why is the sky blue?"}` + "\n" + `{"category_str": "Law", "topic": "What is tort law?", "extra": 1}`,
		`{"category_str": "a", "topic": "t"}` + "\n\n" + `{"category_str": "b", "topic": "t"}`,
		`{"category_str": "", "topic": "t"}`, `{"topic": "t"}`, `[1]`, "\xff\xfe", `{"category_str": "a", "topic": "t"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		topics, err := ReadTopics(bytes.NewReader(data), "topics.jsonl")
		if err != nil {
			var ie *datasets.InputError
			if !errors.As(err, &ie) || ie.File != "topics.jsonl" || ie.Line < 1 {
				t.Fatalf("error does not name the file and line: %v", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, tp := range topics {
			if tp.Category == "" || tp.Topic == "" || seen[tp.Topic] {
				t.Fatalf("accepted topic %+v", tp)
			}
			seen[tp.Topic] = true
		}
	})
}
