package catalog_test

import (
	"context"
	"errors"
	"testing"

	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/catalog"
)

// TestVariantsDoNotMoveLatest: a default build moves latest; a variant
// (built with parameters) does not, and is reached by its version or its
// tag; tags are checked.
func TestVariantsDoNotMoveLatest(t *testing.T) {
	ctx := context.Background()
	s := blobtest.NewMemory()
	if _, err := catalog.Resolve(ctx, s, "d"); !errors.Is(err, catalog.ErrNoDataset) {
		t.Fatalf("empty store: %v", err)
	}
	def := catalog.Manifest{Name: "d", Version: "00000000000000aa"}
	variant := catalog.Manifest{Name: "d", Version: "00000000000000bb", Params: map[string]string{"reports": "reference"}, Variant: true}
	if err := catalog.Publish(ctx, s, def, "card", catalog.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := catalog.Publish(ctx, s, variant, "card", catalog.PublishOptions{Tag: "refs"}); err != nil {
		t.Fatal(err)
	}
	for ref, want := range map[string]string{
		"d": def.Version, "d@latest": def.Version, "d@refs": variant.Version,
		"d@" + variant.Version: variant.Version, "d@v" + def.Version: def.Version,
	} {
		m, err := catalog.Resolve(ctx, s, ref)
		if err != nil || m.Version != want {
			t.Errorf("%s resolved to %s (%v), want %s", ref, m.Version, err, want)
		}
	}
	if _, err := catalog.Resolve(ctx, s, "d@nosuchtag"); !errors.Is(err, catalog.ErrNoDataset) {
		t.Errorf("unknown tag: %v", err)
	}
	// Tagging an already published version (a reused build) moves the tag.
	if err := catalog.Point(ctx, s, def, true, "refs"); err != nil {
		t.Fatal(err)
	}
	if m, _ := catalog.Resolve(ctx, s, "d@refs"); m.Version != def.Version {
		t.Errorf("d@refs = %s after re-tagging, want %s", m.Version, def.Version)
	}
	entries, err := catalog.List(ctx, s)
	if err != nil || len(entries) != 2 || !entries[0].Latest || entries[1].Latest || !entries[1].Variant || len(entries[0].Tags) != 1 {
		t.Errorf("list: %+v, %v", entries, err)
	}
	for _, bad := range []string{"latest", "0123456789abcdef", "Refs", "-x", ""} {
		if catalog.ValidTag(bad) == nil {
			t.Errorf("tag %q accepted", bad)
		}
		if bad != "" && catalog.Publish(ctx, s, def, "card", catalog.PublishOptions{Tag: bad}) == nil {
			t.Errorf("published with tag %q", bad)
		}
	}
}
