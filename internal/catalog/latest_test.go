package catalog_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/catalog"
)

// TestPublishMoveSaysWhatLatestNamed: every default publish moves latest
// (the last default build), and says what it named before and after; a
// move to a smaller version or to one built earlier is flagged and
// warned about, a variant touches nothing.
func TestPublishMoveSaysWhatLatestNamed(t *testing.T) {
	ctx := context.Background()
	s := blobtest.NewMemory()
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	full := catalog.Manifest{Name: "bfcl", Version: "00000000000000aa", Rows: 3641, CreatedAt: t0}
	small := catalog.Manifest{Name: "bfcl", Version: "00000000000000bb", Rows: 600, CreatedAt: t0.Add(time.Hour)}
	variant := catalog.Manifest{Name: "bfcl", Version: "00000000000000cc", Rows: 10, CreatedAt: t0.Add(2 * time.Hour), Variant: true}
	step := func(what string, do func() (catalog.LatestMove, error)) catalog.LatestMove {
		t.Helper()
		mv, err := do()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return mv
	}
	publish := func(m catalog.Manifest) func() (catalog.LatestMove, error) {
		return func() (catalog.LatestMove, error) {
			return catalog.PublishMove(ctx, s, m, "card", catalog.PublishOptions{})
		}
	}

	first := step("first", publish(full))
	if first.From != nil || first.To == nil || first.To.Rows != 3641 || !first.Moved() || first.Shrank() || first.Back() {
		t.Errorf("first publish: %+v", first)
	}
	if got, want := first.Line("bfcl"), "latest: (none) -> bfcl@00000000000000aa (3,641 rows)"; got != want {
		t.Errorf("Line = %q, want %q", got, want)
	}

	shrink := step("smaller", publish(small))
	if !shrink.Moved() || !shrink.Shrank() || shrink.Back() {
		t.Errorf("smaller: moved %v shrank %v back %v", shrink.Moved(), shrink.Shrank(), shrink.Back())
	}
	if got, want := shrink.Line("bfcl"), "latest: bfcl@00000000000000aa (3,641 rows) -> bfcl@00000000000000bb (600 rows)"; got != want {
		t.Errorf("Line = %q, want %q", got, want)
	}
	if w := shrink.Warning("bfcl"); !strings.HasPrefix(w, "WARNING: latest of bfcl shrank from 3,641 to 600 rows") || !strings.Contains(w, "bfcl@00000000000000aa") {
		t.Errorf("Warning = %q", w)
	}

	// A reused (older) version: Point, as PlanBuild does.
	back := step("reuse", func() (catalog.LatestMove, error) { return catalog.PointMove(ctx, s, full, true, "") })
	if !back.Back() || back.Shrank() || back.From.Version != small.Version {
		t.Errorf("reuse: %+v back %v shrank %v", back, back.Back(), back.Shrank())
	}
	if w := back.Warning("bfcl"); !strings.Contains(w, "moved back to a version built 2026-11-27T09:00:00Z, before the one it named (2026-11-27T10:00:00Z)") {
		t.Errorf("Warning = %q", w)
	}
	if w := back.ReleaseWarning("bfcl"); !strings.Contains(w, ": the release's bfcl/latest now names bfcl@00000000000000aa (3,641 rows)") || strings.Contains(w, "eval") {
		t.Errorf("ReleaseWarning = %q", w)
	}

	same := step("again", func() (catalog.LatestMove, error) { return catalog.PointMove(ctx, s, full, true, "") })
	if same.Moved() || same.Warning("bfcl") != "" || same.Line("bfcl") != "latest: bfcl@00000000000000aa (3,641 rows), unchanged" {
		t.Errorf("again: %q %q", same.Line("bfcl"), same.Warning("bfcl"))
	}

	v := step("variant", publish(variant))
	if v.Touched() || v.Line("bfcl") != "" || v.Warning("bfcl") != "" {
		t.Errorf("variant: %+v", v)
	}
	if m, _ := catalog.Resolve(ctx, s, "bfcl"); m.Version != full.Version {
		t.Errorf("latest = %s, want %s", m.Version, full.Version)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 600: "600", 3641: "3,641", 1234567: "1,234,567", -1055: "-1,055"} {
		if got := catalog.Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
