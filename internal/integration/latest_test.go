package integration

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/bfcl"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/shareddata"
)

// copyBFCL copies the question files of cats (all when nil) and their
// possible answers from the shared BFCL data to a new folder.
func copyBFCL(t *testing.T, src string, cats []string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dst, "possible_answer"), 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, c := range cats {
		want["BFCL_v4_"+c+".json"] = true
	}
	for _, e := range entries {
		if e.IsDir() || filepath.Ext(e.Name()) != ".json" || (cats != nil && !want[e.Name()]) {
			continue
		}
		for _, rel := range []string{e.Name(), filepath.Join("possible_answer", e.Name())} {
			b, err := os.ReadFile(filepath.Join(src, rel))
			if os.IsNotExist(err) {
				continue // irrelevance categories have no possible answers
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dst, rel), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dst
}

// TestLatestMovesSayWhatTheyDid (issue 34): latest names the last default
// build, a smaller one and a reused older one included, and every build
// says what latest named before and after it, with their rows; a move to
// fewer rows or to a version built earlier is flagged. A reused version
// reports its own skip counts, not those of the source that gave it.
func TestLatestMovesSayWhatTheyDid(t *testing.T) {
	ctx := context.Background()
	full := copyBFCL(t, shareddata.Require(t, "bfcl"), nil)

	// 1. The whole release: latest names it, whatever it named before.
	res1, err := buildVia(t, bfcl.Name, datasets.Request{Source: full})
	if err != nil {
		t.Fatal(err)
	}
	if to := res1.Latest.To; to == nil || to.Version != res1.Version || to.Rows != res1.Rows || res1.Rows < 3000 {
		t.Fatalf("whole release: %d rows, latest %+v", res1.Rows, res1.Latest)
	}

	// 2. Two categories of it: a new, smaller version; latest moves to it,
	// and the build says from what and that it shrank.
	two := copyBFCL(t, full, []string{"multiple", "parallel_multiple"})
	res2, err := buildVia(t, bfcl.Name, datasets.Request{Source: two})
	if err != nil {
		t.Fatal(err)
	}
	mv := res2.Latest
	if res2.Reused || res2.Rows >= res1.Rows || mv.From == nil || mv.From.Version != res1.Version || mv.From.Rows != res1.Rows ||
		mv.To == nil || mv.To.Version != res2.Version || mv.To.Rows != res2.Rows || !mv.Shrank() || mv.Back() {
		t.Fatalf("two categories: reused %v, %d rows, latest %+v (from %+v to %+v)", res2.Reused, res2.Rows, mv, mv.From, mv.To)
	}
	if mv.Warning(bfcl.Name) == "" {
		t.Error("no warning for a latest that shrank")
	}
	if m, err := catalog.Resolve(ctx, stack.Store, bfcl.Name); err != nil || m.Version != res2.Version {
		t.Fatalf("bfcl = %s (%v) after the smaller build, want %s", m.Version, err, res2.Version)
	}

	// 3. The whole release again, with a file of a category the builder
	// skips: the content gives the first version (reused); latest moves
	// back to it and says so; the skips are the version's, not this
	// folder's.
	if err := os.WriteFile(filepath.Join(full, "BFCL_v4_web_search.json"), []byte(`{"id": "web_search_0"}`+"\n"+`{"id": "web_search_1"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res3, err := buildVia(t, bfcl.Name, datasets.Request{Source: full})
	if err != nil {
		t.Fatal(err)
	}
	mv = res3.Latest
	if !res3.Reused || res3.Version != res1.Version || mv.From == nil || mv.From.Version != res2.Version || mv.To == nil ||
		mv.To.Version != res1.Version || mv.To.Rows != res1.Rows || !mv.Back() || mv.Shrank() {
		t.Fatalf("reuse: reused %v version %s, latest %+v (from %+v to %+v); want a move back from %s to %s",
			res3.Reused, res3.Version, mv, mv.From, mv.To, res2.Version, res1.Version)
	}
	m1 := verifiedManifest(t, bfcl.Name, res1.Version)
	if got, want := datasets.SkipSummary(res3.Stats), datasets.SkipSummary(m1.Stats); got != want {
		t.Errorf("reused build's skips %q, want the version's %q", got, want)
	}
	if _, ok := res3.Stats["skipped_items: web_search (not supported)"]; ok {
		t.Errorf("reused build reports this folder's skips: %v", res3.Stats)
	}
	if m, err := catalog.Resolve(ctx, stack.Store, bfcl.Name); err != nil || m.Version != res1.Version {
		t.Fatalf("bfcl = %s (%v) after the reuse, want %s", m.Version, err, res1.Version)
	}
}
