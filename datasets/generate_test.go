package datasets_test

import (
	"context"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
)

func TestSaveGeneratedFirstWins(t *testing.T) {
	ctx := context.Background()
	env := datasets.Env{Store: blobtest.NewMemory()}
	u := datasets.Part{Index: 3, Label: "abc/unit-00003"}
	if _, ok, err := datasets.LoadGenerated(ctx, env.Store, "d", u); ok || err != nil {
		t.Fatalf("unit done before any save: %v %v", ok, err)
	}
	first, err := datasets.SaveGenerated(ctx, env, "d", u, "sampled/unit-00003.jsonl", []byte("one\n"), datasets.Generated{Outputs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if first.Unit != 3 || first.Source.Name != "sampled/unit-00003.jsonl" || first.Source.Bytes != 4 || first.Source.URI != "store:"+datasets.StagedKey(first.Source.SHA256) {
		t.Fatalf("summary %+v", first)
	}
	if b, err := blob.GetBytes(ctx, env.Store, datasets.StagedKey(first.Source.SHA256)); err != nil || string(b) != "one\n" {
		t.Fatalf("staged output %q, %v", b, err)
	}
	// A racing attempt with other outputs gets the first one's summary.
	second, err := datasets.SaveGenerated(ctx, env, "d", u, "sampled/unit-00003.jsonl", []byte("two\n"), datasets.Generated{Outputs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if second != first {
		t.Fatalf("second save returned %+v, want the first %+v", second, first)
	}
	if got, ok, err := datasets.LoadGenerated(ctx, env.Store, "d", u); !ok || err != nil || got != first {
		t.Fatalf("load: %+v %v %v", got, ok, err)
	}
}
