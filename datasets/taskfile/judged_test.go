package taskfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets"
	task "github.com/benchline/benchline/scorers/taskfile"
)

// TestJudgedBadRow: a row whose rubric criteria do not parse, or that a
// scale's prompt cannot render, fails the read naming the data file, its
// line, the row and the scorer.
func TestJudgedBadRow(t *testing.T) {
	good := `{"qid": "a", "question": "q", "answer": "x", "hint": "h", "rubric": [{"category": "essential", "text": "t"}]}`
	cases := []struct {
		name, scorer, row string
		want              []string
	}{
		{"criteria not a list", "{type: rubric, criteria_column: rubric}", `{"qid": "b", "question": "q", "answer": "x", "rubric": {"category": "essential"}}`,
			[]string{"a.jsonl:2", "row b", "scorers[0] (rubric)", `column "rubric"`}},
		{"criterion's category", "{type: rubric, criteria_column: rubric}", `{"qid": "b", "question": "q", "answer": "x", "rubric": [{"category": "vital", "text": "t"}]}`,
			[]string{"a.jsonl:2", "row b", "vital"}},
		{"scale prompt reads a missing field", "{type: scale, prompt: '{{ reply }} {{ hint }}'}", `{"qid": "b", "question": "q", "answer": "x"}`,
			[]string{"a.jsonl:2", "row b", "scorers[0] (scale)", "hint"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "a.jsonl", good+"\n"+tc.row+"\n")
			body := "name: t\ndescription: d\ndata:\n  test: {path: a.jsonl}\ncolumns: {id: qid, target: answer}\n" +
				"prompt:\n  messages: [{role: user, content: \"{{ question }}\"}]\nscorers: [" + tc.scorer + "]\n"
			file := filepath.Join(dir, "task.yaml")
			if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			c, err := task.Load(file, []byte(body))
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = collect(t, c)
			var ie *datasets.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v, want an InputError", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
