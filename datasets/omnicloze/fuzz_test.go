package omnicloze_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/datasetstest"
	"github.com/benchline/benchline/datasets/omnicloze"
	"github.com/benchline/benchline/schemas"
)

// FuzzItems builds the bundled fixtures with an arbitrary hand-written
// item file: bad input (including an item the validation rejects) must be
// a *datasets.InputError naming the file, and whatever Plan accepts must
// write as planned.
func FuzzItems(f *testing.F) {
	b, err := os.ReadFile("fixtures/" + omnicloze.ItemsFile)
	if err != nil {
		f.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	f.Add(b)
	f.Add(lines[0])
	f.Add(lines[0][:len(lines[0])/2])
	f.Add(bytes.Replace(lines[0], []byte("[BLANK_2]"), []byte("[BLANK_9]"), 1))
	f.Add(bytes.Replace(lines[0], []byte(`"loud"`), []byte("\"\xfe\xff\""), 1))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := datasetstest.SourceDir(t, "fixtures", map[string][]byte{omnicloze.ItemsFile: data})
		datasetstest.CheckSource[schemas.OmniClozeItem](t, omnicloze.Builder{}, datasets.Request{Source: dir})
	})
}
