package toolpref_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/datasetstest"
	"github.com/benchline/benchline/datasets/toolpref"
	"github.com/benchline/benchline/schemas"
)

// FuzzCandidates builds ToolPref pairs from the bundled BFCL items and an
// arbitrary candidates file: bad input must be a *datasets.InputError
// naming the file, and whatever Plan accepts must write as planned.
func FuzzCandidates(f *testing.F) {
	b, err := os.ReadFile("fixtures/" + toolpref.CandidatesFile)
	if err != nil {
		f.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	f.Add(b)
	f.Add(bytes.Join(lines[:2], nil))
	f.Add(lines[0][:len(lines[0])/2])
	f.Add([]byte(`{"id": "simple_python_0", "model": "baseline/reference", "response": "x"}`))
	f.Add([]byte(`{"id": "nosuch", "model": "m", "response": "<tool_call>{\"name\": \"f\"}</tool_call>"}`))
	f.Add([]byte("{\"id\": \"simple_python_0\", \"model\": \"m\", \"response\": \"\xff[f(a=1)]\"}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := datasetstest.SourceDir(t, "fixtures", map[string][]byte{toolpref.CandidatesFile: data})
		datasetstest.CheckSource[schemas.ToolPrefPair](t, toolpref.Builder{}, datasets.Request{Source: dir})
	})
}
