package trbench_test

import (
	"testing"

	"github.com/benchline/benchline/datasets/datasetstest"
	"github.com/benchline/benchline/datasets/trbench"
	"github.com/benchline/benchline/schemas"
)

// FuzzResponses builds TRBench pairs from the bundled BFCL items and an
// arbitrary file of failing outputs: bad input must be a
// *datasets.InputError naming the file, and whatever Plan accepts must
// write as planned.
func FuzzResponses(f *testing.F) {
	b, lines := datasetstest.FixtureFile(f, trbench.ResponsesFile)
	f.Add(b)
	f.Add(lines[0])
	f.Add(lines[0][:len(lines[0])/2])
	f.Add([]byte(`{"id": "simple_python_0", "model": "m", "response": "[physics.light_travel_time(distance_ly=3.5)]"}`))
	f.Add([]byte("{\"id\": \"simple_python_0\", \"model\": \"m\", \"response\": \"\xfe\xff\"}"))
	datasetstest.FuzzFile[schemas.TRBenchPair](f, trbench.Builder{}, trbench.ResponsesFile)
}
