package toolpref_test

import (
	"bytes"
	"testing"

	"github.com/benchline/benchline/datasets/datasetstest"
	"github.com/benchline/benchline/datasets/toolpref"
	"github.com/benchline/benchline/schemas"
)

// FuzzCandidates builds ToolPref pairs from the bundled BFCL items and an
// arbitrary candidates file: bad input must be a *datasets.InputError
// naming the file, and whatever Plan accepts must write as planned.
func FuzzCandidates(f *testing.F) {
	b, lines := datasetstest.FixtureFile(f, toolpref.CandidatesFile)
	f.Add(b)
	f.Add(bytes.Join(lines[:2], nil))
	f.Add(lines[0][:len(lines[0])/2])
	f.Add([]byte(`{"id": "simple_python_0", "model": "baseline/reference", "response": "x"}`))
	f.Add([]byte(`{"id": "nosuch", "model": "m", "response": "<tool_call>{\"name\": \"f\"}</tool_call>"}`))
	f.Add([]byte("{\"id\": \"simple_python_0\", \"model\": \"m\", \"response\": \"\xff[f(a=1)]\"}"))
	datasetstest.FuzzFile[schemas.ToolPrefPair](f, toolpref.Builder{}, toolpref.CandidatesFile)
}
