package site

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/site/sitetest"
)

// servedLarge writes the fixture with its bfcl runs (120 samples) above a
// lowered static limit (100), so they are served by the explorer, with
// text chunks of 32 samples; it returns the store, scores and handler.
func servedLarge(t testing.TB) (*blobtest.Memory, leaderboard.Scores, http.Handler) {
	t.Helper()
	oldMax, oldChunk := maxStatic, chunkSamples
	maxStatic, chunkSamples = 100, 32
	t.Cleanup(func() { maxStatic, chunkSamples = oldMax, oldChunk })
	ctx := context.Background()
	store := blobtest.NewMemory()
	s, err := sitetest.Fixture(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(ctx, store, s); err != nil {
		t.Fatal(err)
	}
	if err := blob.PutJSON(ctx, store, leaderboard.ScoresKey(s.Board, s.Stamp), s); err != nil {
		t.Fatal(err)
	}
	if err := blob.PutBytes(ctx, store, leaderboard.LatestKey(s.Board), []byte(s.Stamp)); err != nil {
		t.Fatal(err)
	}
	return store, s, Handler(store)
}

func apiGet(t *testing.T, h http.Handler, target string) (int, ListDoc, []map[string]any) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
	if w.Code != http.StatusOK {
		return w.Code, ListDoc{}, nil
	}
	var doc struct {
		ListDoc
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil {
		t.Fatalf("%s: %v: %s", target, err, w.Body.String())
	}
	return w.Code, doc.ListDoc, doc.Items
}

func TestExplorerSamples(t *testing.T) {
	store, s, h := servedLarge(t)
	a := runOf(t, s, "bfcl", "acme/model-a")
	// The served run writes no data pages and no samples download.
	keys, err := store.List(context.Background(), leaderboard.SiteKey(s.Board, s.Stamp)+"/data/run-"+a+"/")
	if err != nil || len(keys) != 0 {
		t.Fatalf("data pages of a served run: %v %v", keys, err)
	}
	page := string(mustGet(t, store, leaderboard.SiteKey(s.Board, s.Stamp)+"/run-"+a+".html"))
	if !strings.Contains(page, `data-api="api/samples?run=`+a+`"`) {
		t.Fatalf("run page does not point at the explorer")
	}
	base := "/demo/api/samples?run=" + a
	for _, tc := range []struct {
		name, query string
		matched     int
		ids         []string
	}{
		{"first page", "&limit=3", 120, []string{"bfcl-000", "bfcl-001", "bfcl-002"}},
		{"an offset across files", "&offset=98&limit=4", 120, []string{"bfcl-098", "bfcl-099", "bfcl-100", "bfcl-101"}},
		{"search, last chunk", "&q=ANSWER+117+from", 1, []string{"bfcl-117"}},
		{"search the dataset row", "&q=city+64%3F", 1, []string{"bfcl-064"}},
		{"search an error message", "&q=no+function+call&limit=2", 12, []string{"bfcl-009", "bfcl-019"}},
		{"search the XSS response", "&q=onerror", 1, []string{"bfcl-007"}},
		{"score, lowest first", "&sort=score&limit=2", 120, []string{"bfcl-007", "bfcl-008"}},
		{"score, highest first, in a search", "&sort=score-desc&q=answer+1&limit=3", 31, []string{"bfcl-001", "bfcl-010", "bfcl-011"}},
		{"no match", "&q=zzzz", 0, nil},
		{"past the end", "&offset=500", 120, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, doc, items := apiGet(t, h, base+tc.query)
			if code != http.StatusOK {
				t.Fatalf("status %d", code)
			}
			var ids []string
			for _, it := range items {
				ids = append(ids, it["id"].(string))
			}
			if doc.Total != 120 || doc.Matched != tc.matched || fmt.Sprint(ids) != fmt.Sprint(tc.ids) {
				t.Fatalf("total %d matched %d ids %v; want 120, %d, %v", doc.Total, doc.Matched, ids, tc.matched, tc.ids)
			}
		})
	}
	_, _, items := apiGet(t, h, base+"&q=onerror")
	if items[0]["resp"] != sitetest.XSS || items[0]["prompt"] == "" {
		t.Fatalf("item: %v", items[0])
	}
	for _, bad := range []string{"/demo/api/samples?run=nope", "/demo/api/samples?run=" + a + "&sort=x", "/demo/api/samples?run=" + a + "&offset=-1", "/demo/api/nothing?run=" + a} {
		if code, _, _ := apiGet(t, h, bad); code != http.StatusNotFound && code != http.StatusBadRequest {
			t.Errorf("%s: %d", bad, code)
		}
	}
}

func TestExplorerCompare(t *testing.T) {
	_, s, h := servedLarge(t)
	a, b := runOf(t, s, "bfcl", "acme/model-a"), runOf(t, s, "bfcl", "baseline/noisy-0.3")
	base := "/demo/api/compare?a=" + a + "&b=" + b
	code, doc, items := apiGet(t, h, base+"&limit=12")
	if code != http.StatusOK || doc.Total != 120 || len(items) != 12 {
		t.Fatalf("%d %+v %d", code, doc, len(items))
	}
	// Sample 11: model-a right (11%10 < 7), noisy: infrastructure error.
	if it := items[11]; it["id"] != "bfcl-011" || it["a"] != 1.0 || it["b"] != nil || it["eb"] != "infrastructure" || it["d"] != nil {
		t.Fatalf("sample 11: %v", it)
	}
	// Sample 1: a right, noisy wrong (odd): d = 1.
	if it := items[1]; it["d"] != 1.0 {
		t.Fatalf("sample 1: %v", it)
	}
	_, _, items = apiGet(t, h, base+"&sort=diff&limit=1")
	if items[0]["d"] != -1.0 {
		t.Fatalf("smallest diff first: %v", items[0])
	}
	_, doc, items = apiGet(t, h, base+"&q=bfcl-117")
	if doc.Matched != 1 || items[0]["id"] != "bfcl-117" {
		t.Fatalf("search: %+v %v", doc, items)
	}
}

func mustGet(t *testing.T, store blob.Store, key string) []byte {
	t.Helper()
	b, err := blob.GetBytes(context.Background(), store, key)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestIndexedSamples: a served run's explorer index gives the same values
// as its results, and comparisons paired on it (by sample index) equal
// those paired by id on the results; a run without an index, or an index
// of another headline, is not ok (the refresh then reads the results).
func TestIndexedSamples(t *testing.T) {
	ctx := context.Background()
	store, s, _ := servedLarge(t)
	var fromIndex, fromResults []leaderboard.Samples
	for _, r := range s.Runs {
		if r.Dataset != "bfcl" {
			continue
		}
		got, ok, err := IndexedSamples(ctx, store, r.RunID, r.Model, "accuracy")
		if err != nil || !ok {
			t.Fatalf("%s: ok %v, %v", r.RunID, ok, err)
		}
		want, err := leaderboard.LoadSamples(ctx, store, r.RunID, r.Model, "accuracy", nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(want.Indexes) == 0 || fmt.Sprint(got.Indexes, got.Values) != fmt.Sprint(want.Indexes, want.Values) {
			t.Fatalf("%s: index %v %v\nresults %v %v", r.RunID, got.Indexes, got.Values, want.Indexes, want.Values)
		}
		want.Indexes = nil // pair the results by id
		fromIndex, fromResults = append(fromIndex, got), append(fromResults, want)
	}
	if len(fromIndex) < 2 {
		t.Fatalf("%d bfcl runs in the fixture", len(fromIndex))
	}
	a, ar := leaderboard.Compare("bfcl", "accuracy", fromIndex)
	b, br := leaderboard.Compare("bfcl", "accuracy", fromResults)
	if a[0].N == 0 || fmt.Sprint(a, ar) != fmt.Sprint(b, br) {
		t.Fatalf("by index:\n%+v %v\nby id:\n%+v %v", a, ar, b, br)
	}
	for _, tc := range []struct{ run, headline string }{{fromIndex[0].RunID, "other-metric"}, {"no-such-run", "accuracy"}} {
		if _, ok, err := IndexedSamples(ctx, store, tc.run, "m", tc.headline); ok || err != nil {
			t.Errorf("%s %s: ok %v, %v", tc.run, tc.headline, ok, err)
		}
	}
}
