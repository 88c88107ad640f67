package taskfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/benchline/benchline/datasets"
	task "github.com/benchline/benchline/scorers/taskfile"
)

// writeTask writes a task file over one test source and returns it compiled.
func writeTask(t *testing.T, dir, src, extra string) *task.Compiled {
	t.Helper()
	file := filepath.Join(dir, "task.yaml")
	body := `name: t
description: d
data:
  test: ` + src + `
columns: {id: qid, target: answer, category: topic}
prompt:
  messages: [{role: user, content: "{{ question }}"}]
scorers: [{type: exact_match}]
` + extra
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := task.Load(file, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func write(t *testing.T, dir, name, body string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func collect(t *testing.T, c *task.Compiled) ([]task.Row, map[string]int, error) {
	t.Helper()
	var rows []task.Row
	skipped, err := Local(c, "test", 0, func(r task.Row) error { rows = append(rows, r); return nil })
	return rows, skipped, err
}

func TestFormatsReadAlike(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.jsonl", `{"qid": "1", "topic": "x", "question": "q1", "answer": 4}
{"qid": "2", "topic": "y", "question": "q2", "answer": "b"}
`)
	write(t, dir, "a.json", `[{"qid": "1", "topic": "x", "question": "q1", "answer": 4},
 {"qid": "2", "topic": "y", "question": "q2", "answer": "b"}]`)
	write(t, dir, "a.csv", "qid,topic,question,answer\n1,x,q1,4\n2,y,\"q2\",b\n")
	type row struct {
		QID      string `parquet:"qid"`
		Topic    string `parquet:"topic"`
		Question string `parquet:"question"`
		Answer   string `parquet:"answer"`
	}
	pq := filepath.Join(dir, "hf", "data", "config=main", "test-00000-of-00001.parquet")
	os.MkdirAll(filepath.Dir(pq), 0o755)
	if err := parquet.WriteFile(pq, []row{{"1", "x", "q1", "4"}, {"2", "y", "q2", "b"}}); err != nil {
		t.Fatal(err)
	}
	// Another split and another config, which must not be read.
	if err := parquet.WriteFile(filepath.Join(dir, "hf", "data", "config=main", "train-00000-of-00001.parquet"), []row{{"9", "z", "q9", "9"}}); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "hf", "data", "config=other"), 0o755)
	if err := parquet.WriteFile(filepath.Join(dir, "hf", "data", "config=other", "test-00000-of-00001.parquet"), []row{{"8", "z", "q8", "8"}}); err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{"{path: a.jsonl}", "{path: a.json}", "{path: a.csv}", "{path: hf/data/config=main/test-00000-of-00001.parquet}", "{path: hf, config: main}"} {
		t.Run(src, func(t *testing.T) {
			rows, _, err := collect(t, writeTask(t, dir, src, ""))
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 2 {
				t.Fatalf("%d rows, want 2: %+v", len(rows), rows)
			}
			for i, want := range [][3]string{{"1", "x", "4"}, {"2", "y", "b"}} {
				r := rows[i]
				if r.ID != want[0] || r.Category != want[1] || r.Target != want[2] {
					t.Errorf("row %d = %s/%s/%s, want %v", i, r.ID, r.Category, r.Target, want)
				}
			}
		})
	}
}

func TestBadData(t *testing.T) {
	cases := []struct {
		name, file, body string
		want             []string
	}{
		{"ragged csv", "a.csv", "qid,topic,question,answer\n1,x,q1,4\n2,y,q2\n", []string{"a.csv:3", "ragged row"}},
		{"missing target column", "a.jsonl", `{"qid": "1", "topic": "x", "question": "q"}` + "\n", []string{"a.jsonl:1", `no column "answer"`, "columns.target", "task.yaml"}},
		{"missing id column", "a.jsonl", `{"topic": "x", "question": "q", "answer": 1}` + "\n", []string{"a.jsonl:1", `no column "qid"`, "columns.id"}},
		{"not an object", "a.jsonl", `[1, 2]` + "\n", []string{"a.jsonl:1", "JSON object"}},
		{"not json", "a.jsonl", "{\"qid\": \n", []string{"a.jsonl:1", "not JSON"}},
		{"json not array", "a.json", `{"qid": "1"}`, []string{"a.json", "JSON array"}},
		{"csv header repeated", "a.csv", "qid,qid\n1,2\n", []string{"a.csv:1", "repeated"}},
		{"not parquet", "a.parquet", "nope", []string{"a.parquet", "not a Parquet file"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, tc.file, tc.body)
			_, _, err := collect(t, writeTask(t, dir, "{path: "+tc.file+"}", ""))
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

func TestEmptyTargetsSkipped(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.jsonl", `{"qid": "1", "topic": "x", "question": "q1", "answer": 4}
{"qid": "2", "topic": "x", "question": "q2", "answer": ""}
{"qid": "3", "topic": "x", "question": "q3", "answer": null}
`)
	rows, skipped, err := collect(t, writeTask(t, dir, "{path: a.jsonl}", ""))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || skipped[SkipEmptyTarget] != 2 {
		t.Errorf("rows %d, skipped %v; want 1 and 2 empty targets", len(rows), skipped)
	}
}
