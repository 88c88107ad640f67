package ifevalcode_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/datasetstest"
	"github.com/benchline/benchline/datasets/ifevalcode"
	"github.com/benchline/benchline/schemas"
)

// FuzzSource builds IFEvalCode from an arbitrary JSONL file: bad input must
// be a *datasets.InputError naming the file, and whatever Plan accepts
// must write as planned.
func FuzzSource(f *testing.F) {
	b, err := os.ReadFile("fixtures/" + ifevalcode.DefaultFile)
	if err != nil {
		f.Fatal(err)
	}
	first, _, _ := bytes.Cut(b, []byte("\n"))
	f.Add(first)
	f.Add(first[:len(first)/2])
	f.Add(bytes.Replace(first, []byte("function"), []byte("func\xfftion"), 1)) // invalid UTF-8 in a string
	f.Add(bytes.Replace(first, []byte(`"python"`), []byte(`"cobol"`), 1))
	f.Add(bytes.Replace(first, []byte(`"id":"python_1"`), []byte(`"id":1.5`), 1))
	f.Add(append(append(append([]byte{}, first...), '\n'), first...)) // duplicate id
	f.Add([]byte("{\"id\": \"\xff\", \"programming_language\": \"python\"}\n\n[]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := datasetstest.SourceDir(t, "", map[string][]byte{ifevalcode.DefaultFile: data})
		datasetstest.CheckSource[schemas.IFEvalCodeItem](t, ifevalcode.Builder{}, datasets.Request{Source: dir})
	})
}
