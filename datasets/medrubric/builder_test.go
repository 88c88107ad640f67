package medrubric_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/datasetstest"
	"github.com/benchline/benchline/datasets/medrubric"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/schemas"
)

// TestBuildHandWritten builds the fixtures from the embedded copy, a
// directory and an http URL (which cannot be listed, so index.txt names
// the files): the same rows and the same version every time.
func TestBuildHandWritten(t *testing.T) {
	want, err := medrubric.FixtureItems()
	if err != nil {
		t.Fatal(err)
	}
	var version string
	for _, src := range []string{medrubric.Embedded, datasetstest.CopyFixtures(t, nil), datasetstest.ServeDir(t, "fixtures") + "/"} {
		t.Run(src, func(t *testing.T) {
			plan, rows, err := datasetstest.Build[schemas.MedRubricItem](t, medrubric.Builder{}, datasets.Request{Source: src}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != len(want) || len(rows) != 32 {
				t.Fatalf("%d rows, want %d", len(rows), len(want))
			}
			for i := range rows {
				if rows[i].ID != want[i].ID || rows[i].TurnsJSON != want[i].TurnsJSON || rows[i].NumRubrics != want[i].NumRubrics {
					t.Fatalf("row %d: %s differs from the fixture item %s", i, rows[i].ID, want[i].ID)
				}
			}
			if len(plan.Sources) != 4 || len(plan.Params) != 0 || len(plan.Generate) != 0 {
				t.Errorf("plan: %d sources, params %v, %d units; want the 4 rubric files only", len(plan.Sources), plan.Params, len(plan.Generate))
			}
			if version == "" {
				version = plan.Version
			} else if plan.Version != version {
				t.Errorf("version %s, want %s: the same files give the same version", plan.Version, version)
			}
		})
	}
}

func TestBuildBadInput(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(dir string)
		params map[string]string
		want   string
	}{
		{"a broken rubric", func(dir string) {
			datasetstest.AppendLine(t, filepath.Join(dir, "wellness.jsonl"), `{"id": "x-1", "domain": "wellness", "language": "en", "turns": [{"user": "q", "rubrics": [{"id": "r1", "category": "essentail", "text": "t"}]}]}`)
		}, nil, `wellness.jsonl:9: item x-1: turn 1: rubric r1: category "essentail"`},
		{"an id in two files", func(dir string) {
			datasetstest.AppendLine(t, filepath.Join(dir, "wellness.jsonl"), `{"id": "cc-01", "domain": "wellness", "language": "en", "turns": [{"user": "q", "rubrics": [{"id": "r1", "category": "essential", "text": "t"}]}]}`)
		}, nil, `duplicate id "cc-01"`},
		{"no rubric files", func(dir string) {
			for _, n := range []string{"clinical_care", "pharmacology", "professional_inquiry", "wellness"} {
				os.Remove(filepath.Join(dir, n+".jsonl"))
			}
		}, nil, "no rubric files"},
		{"an unknown parameter", nil, map[string]string{"writer": "a/b"}, `unknown parameter "writer"`},
		{"k without writers", nil, map[string]string{"k": "2"}, "applies only to a build with writers"},
		{"k above the writers", nil, map[string]string{"writers": "a/x,b/y", "k": "3"}, "want an integer in 1..2"},
		{"a writer twice", nil, map[string]string{"writers": "a/x, a/x"}, "a/x is named twice"},
		{"a writer without provider", nil, map[string]string{"writers": "gpt"}, "want <provider>/<model>"},
		{"a threshold of 0", nil, map[string]string{"writers": "a/x", "k": "1", "threshold": "0"}, "want a number in (0, 1]"},
		{"evidence for no item", func(dir string) {
			datasetstest.AppendLine(t, filepath.Join(dir, medrubric.EvidenceFile), `{"id": "zz-9", "passages": ["p"]}`)
		}, map[string]string{"writers": "a/x", "k": "1"}, `evidence for "zz-9"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := datasetstest.CopyFixtures(t, tc.edit)
			_, err := medrubric.Builder{}.Plan(context.Background(), datasets.Env{Store: blobtest.NewMemory()}, datasets.Request{Source: dir, Params: tc.params})
			var ie *datasets.InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want an InputError containing %q", err, tc.want)
			}
		})
	}
}

func TestURLNeedsAnIndex(t *testing.T) {
	dir := datasetstest.CopyFixtures(t, func(dir string) { os.Remove(filepath.Join(dir, medrubric.IndexFile)) })
	_, err := medrubric.Builder{}.Plan(context.Background(), datasets.Env{Store: blobtest.NewMemory()}, datasets.Request{Source: datasetstest.ServeDir(t, dir)})
	var ie *datasets.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "index.txt") {
		t.Errorf("err = %v, want an InputError asking for index.txt", err)
	}
}
