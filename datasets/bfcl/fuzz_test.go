package bfcl_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/bfcl"
	"github.com/benchline/benchline/datasets/datasetstest"
	"github.com/benchline/benchline/schemas"
)

// FuzzSource builds a BFCL source of one category from arbitrary question
// and possible-answer files: bad input must be a *datasets.InputError
// naming the file, and whatever Plan accepts must write as planned.
func FuzzSource(f *testing.F) {
	q, err := os.ReadFile("fixtures/BFCL_v4_simple_python.json")
	if err != nil {
		f.Fatal(err)
	}
	a, err := os.ReadFile("fixtures/possible_answer/BFCL_v4_simple_python.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(q, a)
	f.Add(q[:len(q)/2], a)                                                                           // truncated line
	f.Add(q, a[:len(a)-3])                                                                           // truncated answer
	f.Add(append([]byte("\xff\xfe"), q...), a)                                                       // invalid UTF-8 outside JSON
	f.Add(bytes.Replace(q, []byte("compound interest"), []byte("compound \xff\xfe interest"), 1), a) // inside a string
	f.Add([]byte(`{"id": "simple_python_0", "question": [[{"role": "user", "content": "\u00e9\xff"}]], "function": []}`), a)
	f.Add([]byte(`{"id": "x", "question": [1], "function": [{}]}`+"\n"), []byte(`{"id": "x", "ground_truth": [{"f": {}}]}`))
	f.Add([]byte("[]\n{}\nnull\n"), []byte("\n\n"))
	f.Fuzz(func(t *testing.T, question, answer []byte) {
		dir := datasetstest.SourceDir(t, "", map[string][]byte{
			"BFCL_v4_simple_python.json":                 question,
			"possible_answer/BFCL_v4_simple_python.json": answer,
		})
		datasetstest.CheckSource[schemas.BFCLItem](t, bfcl.Builder{}, datasets.Request{Source: dir})
	})
}
