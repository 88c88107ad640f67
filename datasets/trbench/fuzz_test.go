package trbench_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/datasetstest"
	"github.com/benchline/benchline/datasets/trbench"
	"github.com/benchline/benchline/schemas"
)

// FuzzResponses builds TRBench pairs from the bundled BFCL items and an
// arbitrary file of failing outputs: bad input must be a
// *datasets.InputError naming the file, and whatever Plan accepts must
// write as planned.
func FuzzResponses(f *testing.F) {
	b, err := os.ReadFile("fixtures/" + trbench.ResponsesFile)
	if err != nil {
		f.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	f.Add(b)
	f.Add(lines[0])
	f.Add(lines[0][:len(lines[0])/2])
	f.Add([]byte(`{"id": "simple_python_0", "model": "m", "response": "[physics.light_travel_time(distance_ly=3.5)]"}`))
	f.Add([]byte("{\"id\": \"simple_python_0\", \"model\": \"m\", \"response\": \"\xfe\xff\"}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := datasetstest.SourceDir(t, "fixtures", map[string][]byte{trbench.ResponsesFile: data})
		datasetstest.CheckSource[schemas.TRBenchPair](t, trbench.Builder{}, datasets.Request{Source: dir})
	})
}
