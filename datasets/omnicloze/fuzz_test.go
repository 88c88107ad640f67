package omnicloze_test

import (
	"bytes"
	"testing"

	"github.com/benchline/benchline/datasets/datasetstest"
	"github.com/benchline/benchline/datasets/omnicloze"
	"github.com/benchline/benchline/schemas"
)

// FuzzItems builds the bundled fixtures with an arbitrary hand-written
// item file: bad input (including an item the validation rejects) must be
// a *datasets.InputError naming the file, and whatever Plan accepts must
// write as planned.
func FuzzItems(f *testing.F) {
	b, lines := datasetstest.FixtureFile(f, omnicloze.ItemsFile)
	f.Add(b)
	f.Add(lines[0])
	f.Add(lines[0][:len(lines[0])/2])
	f.Add(bytes.Replace(lines[0], []byte("[BLANK_2]"), []byte("[BLANK_9]"), 1))
	f.Add(bytes.Replace(lines[0], []byte(`"loud"`), []byte("\"\xfe\xff\""), 1))
	datasetstest.FuzzFile[schemas.OmniClozeItem](f, omnicloze.Builder{}, omnicloze.ItemsFile)
}
