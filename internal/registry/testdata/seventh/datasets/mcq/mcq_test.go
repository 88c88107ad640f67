package mcq

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/datasetstest"
	scorer "github.com/benchline/benchline/scorers/mcq"
)

// TestBuildFixtures builds the bundled questions in memory and reads them
// back: an in-package builder test with the dataset test helpers.
func TestBuildFixtures(t *testing.T) {
	_, rows, err := datasetstest.Build[scorer.Item](t, Builder{}, datasets.Request{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || rows[0].ID != "q1" || rows[0].Answer != "B" || len(rows[0].Choices) != 4 {
		t.Errorf("rows = %+v", rows)
	}
}

func TestBadLine(t *testing.T) {
	for _, line := range []string{
		`{"id": "q9", "question": "?", "choices": ["a", "b"], "answer": "C"}`,
		`{"id": "q1", "question": "again", "choices": ["a", "b"], "answer": "A"}`,
		`{"id": "q9", "question": "?", "choices": ["a"], "answer": "A"}`,
		`not json`,
	} {
		dir := datasetstest.CopyFixtures(t, func(dir string) { datasetstest.AppendLine(t, filepath.Join(dir, File), line) })
		_, _, err := datasetstest.Build[scorer.Item](t, Builder{}, datasets.Request{Source: dir}, nil)
		var ie *datasets.InputError
		if !errors.As(err, &ie) || ie.Line != 5 {
			t.Errorf("%s: err %v, want an InputError on line 5", line, err)
		}
	}
}
