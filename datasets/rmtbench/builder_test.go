package rmtbench_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/datasetstest"
	"github.com/benchline/benchline/datasets/rmtbench"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/schemas"
)

// TestBuild builds the fixtures through the builder contract: one row per
// dialogue in file order, the same version from the embedded copy and
// from a directory, and a card that says where the data comes from.
func TestBuild(t *testing.T) {
	plan, rows, err := datasetstest.Build[schemas.RMTBenchDialogue](t, rmtbench.Builder{}, datasets.Request{Source: rmtbench.Embedded}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := rmtbench.FixtureDialogues()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(want) || len(plan.Parts) != 1 || len(plan.Sources) != 2 {
		t.Fatalf("%d rows in %d parts from %d sources", len(rows), len(plan.Parts), len(plan.Sources))
	}
	for i := range rows {
		if rows[i] != want[i] {
			t.Fatalf("row %d: %+v, want %+v", i, rows[i], want[i])
		}
	}
	dirPlan, _, err := datasetstest.Build[schemas.RMTBenchDialogue](t, rmtbench.Builder{}, datasets.Request{Source: datasetstest.CopyFixtures(t, nil)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if dirPlan.Version != plan.Version {
		t.Errorf("a directory of the same files gives version %s, embedded %s", dirPlan.Version, plan.Version)
	}
	card := rmtbench.Builder{}.Card(catalog.Manifest{Name: rmtbench.Name, Version: plan.Version, Schema: plan.Schema, Rows: int64(len(rows))})
	if !strings.Contains(card, "not RMTBench's data") || !strings.Contains(card, "rmtbench_dialogue v1") {
		t.Errorf("card:\n%s", card)
	}
}

func TestPlanRejects(t *testing.T) {
	ctx := context.Background()
	env := datasets.Env{Store: blobtest.NewMemory()}
	dir := datasetstest.CopyFixtures(t, nil)
	if err := os.Remove(filepath.Join(dir, rmtbench.DialoguesFile)); err != nil {
		t.Fatal(err)
	}
	var ie *datasets.InputError
	_, err := rmtbench.Builder{}.Plan(ctx, env, datasets.Request{Source: dir})
	if !errors.As(err, &ie) || !strings.HasSuffix(ie.File, rmtbench.DialoguesFile) {
		t.Errorf("without dialogues.jsonl: %v", err)
	}
	_, err = rmtbench.Builder{}.Plan(ctx, env, datasets.Request{Params: map[string]string{"k": "2"}})
	if !errors.As(err, &ie) || !strings.Contains(ie.Msg, "takes no parameters, got k") {
		t.Errorf("with a parameter: %v", err)
	}
	bad := datasetstest.CopyFixtures(t, nil)
	if err := os.WriteFile(filepath.Join(bad, rmtbench.DialoguesFile), []byte(`{"id": "x"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = rmtbench.Builder{}.Plan(ctx, env, datasets.Request{Source: bad})
	if !errors.As(err, &ie) || ie.Line != 1 || !strings.Contains(ie.Msg, "dialogue x") {
		t.Errorf("a broken dialogue: %v", err)
	}
}
