package activities

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/catalog"
)

// TestPublishSaysWhatReleaseLatestNamed (issue 34): a release's latest
// names the last default version published there, a smaller or older one
// included, and each publish says what it named before and after, with
// their rows; a move to fewer rows or to a version built earlier is
// flagged.
func TestPublishSaysWhatReleaseLatestNamed(t *testing.T) {
	ctx := context.Background()
	store := blobtest.NewMemory()
	full := publishRows(t, store)
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	full.CreatedAt = t0
	if err := catalog.Publish(ctx, store, full, "# card", catalog.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	// A later, smaller version: the first part only.
	small := full
	small.Version, small.CreatedAt, small.Files, small.Rows = "0002", t0.Add(time.Hour), full.Files[:1], full.Files[0].Rows
	b, _ := blob.GetBytes(ctx, store, catalog.PartKey("d", "0001", 0))
	if err := blob.PutBytes(ctx, store, catalog.PartKey("d", "0002", 0), b); err != nil {
		t.Fatal(err)
	}
	if err := catalog.Publish(ctx, store, small, "# card", catalog.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	a := &Publish{Store: store}
	dest := filepath.Join(t.TempDir(), "rel")

	res, err := publishAll(t, a, PlanPublishInput{Ref: "d@0001", Dest: dest})
	if err != nil {
		t.Fatal(err)
	}
	if mv := res.Latest; mv.From != nil || mv.To == nil || mv.To.Rows != full.Rows || !mv.Moved() {
		t.Errorf("first publish: %+v", mv)
	}
	res, err = publishAll(t, a, PlanPublishInput{Ref: "d@0002", Dest: dest})
	if err != nil {
		t.Fatal(err)
	}
	if mv := res.Latest; mv.From == nil || mv.From.Version != "0001" || mv.From.Rows != full.Rows || mv.To.Rows != small.Rows ||
		!mv.Shrank() || mv.Back() || !res.LatestMoved {
		t.Errorf("smaller: %+v from %+v to %+v", mv, mv.From, mv.To)
	}
	res, err = publishAll(t, a, PlanPublishInput{Ref: "d@0001", Dest: dest})
	if err != nil {
		t.Fatal(err)
	}
	if mv := res.Latest; !res.Reused || mv.From == nil || mv.From.Version != "0002" || mv.To.Version != "0001" || !mv.Back() || mv.Shrank() ||
		mv.Warning("d") == "" {
		t.Errorf("older again: reused %v, %+v from %+v to %+v", res.Reused, mv, mv.From, mv.To)
	}
	res, err = publishAll(t, a, PlanPublishInput{Ref: "d@0001", Dest: dest})
	if err != nil || res.Latest.Moved() || res.LatestMoved || res.Latest.Line("d") != "latest: d@0001 (60 rows), unchanged" {
		t.Errorf("same again: %q, %v", res.Latest.Line("d"), err)
	}
}
