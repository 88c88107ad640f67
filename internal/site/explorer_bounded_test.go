package site

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/memtest"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
)

// replyLimit is the default limit of a model's reply (README's Limits).
const replyLimit = 1 << 20

// bigReplies writes a run of files×perFile samples whose every reply is
// reply bytes (compressible: the store stays small, the texts do not),
// each holding its own marker "marker NNNNN.", and a board stamp showing
// it; it returns the store and the run's id.
func bigReplies(t testing.TB, files, perFile, reply int) (*blobtest.Memory, string) {
	t.Helper()
	ctx := context.Background()
	store := blobtest.NewMemory()
	const id = "rbigreplies0001"
	filler := strings.Repeat("lorem ipsum dolor sit amet ", reply/27+1)
	for f := range files {
		rows := make([]schemas.ResultRow, perFile)
		for k := range rows {
			i := f*perFile + k
			resp := fmt.Sprintf("Marker %05d. ", i)
			resp += filler[:reply-len(resp)]
			rows[k] = schemas.ResultRow{RunID: id, SampleID: fmt.Sprintf("s-%05d", i), SampleIndex: int64(i), Shard: int32(f),
				Model: "m", Response: resp, Metrics: map[string]float64{"accuracy": float64(i % 2)}, Calls: 1, Attempts: 1}
		}
		w := pq.NewWriter[schemas.ResultRow](ctx, store, runs.ShardKey(id, f), pq.Options{})
		if err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	s := leaderboard.Scores{Board: "big", Stamp: "20261128T000000Z", Runs: []leaderboard.Run{{RunID: id, Dataset: "d", Model: "m"}}}
	if err := blob.PutJSON(ctx, store, leaderboard.ScoresKey(s.Board, s.Stamp), s); err != nil {
		t.Fatal(err)
	}
	if err := blob.PutBytes(ctx, store, leaderboard.LatestKey(s.Board), []byte(s.Stamp)); err != nil {
		t.Fatal(err)
	}
	return store, id
}

// The bounds the tests hold the index build and the served search to:
// constants, whatever the replies' size (the texts measured are 160 MiB).
// Measured peaks are 90-150 MiB for the build and 35-125 MiB for the
// searches, and before the bounds 461 and 1,712 MiB; the bounds sit
// between, with room for a collector that lags on a loaded machine (the
// heap is sampled while the GC competes for the CPU with the work).
const (
	buildHeapBound  = 300 << 20
	searchHeapBound = 300 << 20
)

// TestExplorerBuildBounded builds the explorer index of a run of 160
// samples with replies at the reply limit: the build's heap stays under a
// bound that does not follow the replies (before, it held a whole chunk's
// texts and a window of files' texts: over 400 MB here), and its chunks
// are capped by bytes.
func TestExplorerBuildBounded(t *testing.T) {
	store, id := bigReplies(t, 20, 8, replyLimit)
	ctx := context.Background()
	keys, err := resultKeys(ctx, store, id)
	if err != nil {
		t.Fatal(err)
	}
	var berr error
	peak := memtest.PeakHeap(func() { berr = buildExplore(ctx, store, id, "accuracy", runs.Plan{}, false, keys) })
	if berr != nil {
		t.Fatal(berr)
	}
	t.Logf("build: peak heap %d MiB above the start", peak>>20)
	if peak > buildHeapBound {
		t.Errorf("building the index of 160 replies of 1 MiB took %d MiB of heap, want at most %d MiB", peak>>20, buildHeapBound>>20)
	}
	var m exploreManifest
	if err := blob.GetJSON(ctx, store, exploreKey(id, "manifest.json"), &m); err != nil {
		t.Fatal(err)
	}
	if m.Samples != 160 || m.Chunks < 160<<20/ChunkBytes {
		t.Errorf("manifest: %d samples in %d chunks, want 160 in chunks of about %d bytes", m.Samples, m.Chunks, ChunkBytes)
	}
}

// TestExplorerSearchBounded answers 12 concurrent searches, each for
// another sample, of a run of 160 replies at the reply limit: the
// server's heap stays under a bound that follows neither the replies nor
// the clients (before, each search decompressed all 160 MiB of texts into
// its own buffer), each answer is the one sample or a 503 with a
// Retry-After (the explorer's turns), and some are answered.
func TestExplorerSearchBounded(t *testing.T) {
	store, id := bigReplies(t, 20, 8, replyLimit)
	ctx := context.Background()
	keys, err := resultKeys(ctx, store, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := buildExplore(ctx, store, id, "accuracy", runs.Plan{}, false, keys); err != nil {
		t.Fatal(err)
	}
	h := Handler(store)
	const clients = 12
	codes := make([]int, clients)
	var mu sync.Mutex
	var problems []string
	peak := memtest.PeakHeap(func() {
		var wg sync.WaitGroup
		for c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				i := c * 5 % 160
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, fmt.Sprintf("/big/api/samples?run=%s&q=marker+%05d.&limit=50", id, i), nil))
				codes[c] = w.Code
				var doc struct {
					Matched int `json:"matched"`
					Items   []struct {
						ID string `json:"id"`
					} `json:"items"`
				}
				mu.Lock()
				defer mu.Unlock()
				switch w.Code {
				case http.StatusOK:
					if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil || doc.Matched != 1 || len(doc.Items) != 1 || doc.Items[0].ID != fmt.Sprintf("s-%05d", i) {
						problems = append(problems, fmt.Sprintf("search %d: %v %+v", i, err, doc))
					}
				case http.StatusServiceUnavailable:
					if w.Header().Get("Retry-After") == "" {
						problems = append(problems, fmt.Sprintf("search %d: 503 without Retry-After", i))
					}
				default:
					problems = append(problems, fmt.Sprintf("search %d: %d %s", i, w.Code, w.Body.String()))
				}
			}()
		}
		wg.Wait()
	})
	for _, p := range problems {
		t.Error(p)
	}
	ok := 0
	for _, c := range codes {
		if c == http.StatusOK {
			ok++
		}
	}
	t.Logf("%d concurrent searches: %d answered, the others 503; peak heap %d MiB above the start", clients, ok, peak>>20)
	if ok == 0 {
		t.Error("no search was answered")
	}
	if peak > searchHeapBound {
		t.Errorf("%d concurrent searches of 160 replies of 1 MiB took %d MiB of heap, want at most %d MiB", clients, peak>>20, searchHeapBound>>20)
	}
}

// TestExplorerBusy: with every explorer turn taken, a request waits
// ExplorerWait and is answered 503 with a Retry-After; a turn given back
// lets the next one through.
func TestExplorerBusy(t *testing.T) {
	store, _, hh := servedLarge(t)
	_ = store
	h := hh.(*handler)
	h.explore.wait = 50 * time.Millisecond
	var release []func()
	for range ExplorerRequests {
		done, err := h.explore.turn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		release = append(release, done)
	}
	s := leaderboard.Scores{}
	if err := blob.GetJSON(context.Background(), store, leaderboard.ScoresKey("demo", "20261123T150405Z"), &s); err != nil {
		t.Fatal(err)
	}
	target := "/demo/api/samples?run=" + runOf(t, s, "bfcl", "acme/model-a") + "&q=bfcl-007"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
		t.Fatalf("all turns taken: %d (Retry-After %q) %s, want 503 with a Retry-After", w.Code, w.Header().Get("Retry-After"), w.Body.String())
	}
	release[0]()
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
	if w.Code != http.StatusOK {
		t.Fatalf("a turn free: %d %s", w.Code, w.Body.String())
	}
	for _, r := range release[1:] {
		r()
	}
}

// TestExplorerIndexOrdered: the index records whether the results are in
// sample-index order; a search sorted by index then needs no rows, and
// one of results out of order still lists its matches by index.
func TestExplorerIndexOrdered(t *testing.T) {
	for _, tc := range []struct {
		name    string
		indexes [][]int64 // per result file
		ordered bool
		want    []string // a search for "marker", sorted by index
	}{
		{"in order", [][]int64{{0, 1}, {2, 3}}, true, []string{"s-0", "s-1", "s-2", "s-3"}},
		{"files swapped", [][]int64{{2, 3}, {0, 1}}, false, []string{"s-0", "s-1", "s-2", "s-3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			store := blobtest.NewMemory()
			const id = "rordered0000001"
			for f, idx := range tc.indexes {
				var rows []schemas.ResultRow
				for _, i := range idx {
					rows = append(rows, schemas.ResultRow{RunID: id, SampleID: fmt.Sprintf("s-%d", i), SampleIndex: i, Shard: int32(f),
						Response: fmt.Sprintf("marker %d", i), Metrics: map[string]float64{"accuracy": 1}})
				}
				w := pq.NewWriter[schemas.ResultRow](ctx, store, runs.ShardKey(id, f), pq.Options{})
				if err := w.Write(rows); err != nil {
					t.Fatal(err)
				}
				if _, err := w.Close(); err != nil {
					t.Fatal(err)
				}
			}
			keys, err := resultKeys(ctx, store, id)
			if err != nil {
				t.Fatal(err)
			}
			if err := buildExplore(ctx, store, id, "accuracy", runs.Plan{}, false, keys); err != nil {
				t.Fatal(err)
			}
			var m exploreManifest
			if err := blob.GetJSON(ctx, store, exploreKey(id, "manifest.json"), &m); err != nil {
				t.Fatal(err)
			}
			if m.Ordered != tc.ordered {
				t.Errorf("manifest ordered %t, want %t", m.Ordered, tc.ordered)
			}
			doc, err := newExplorer(store).samples(ctx, id, query{limit: 50, sort: "index", q: "marker"})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, it := range doc.Items.([]sampleJS) {
				got = append(got, it.ID)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("search by index: %v, want %v", got, tc.want)
			}
		})
	}
}

// TestExplorerChunkCache: the compressed chunks kept are counted against
// ExplorerCacheBytes, given back when their run is dropped, and a dropped
// run still answering a request keeps none.
func TestExplorerChunkCache(t *testing.T) {
	store, s, _ := servedLarge(t)
	ctx := context.Background()
	e := newExplorer(store)
	ri, err := e.run(ctx, runOf(t, s, "bfcl", "acme/model-a"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ri.search(ctx, store, "bfcl-007"); err != nil {
		t.Fatal(err)
	}
	if e.cached.Load() <= 0 || e.cached.Load() != ri.kept {
		t.Fatalf("after a search: %d bytes counted, the run keeps %d", e.cached.Load(), ri.kept)
	}
	e.cached.Add(-ri.dropChunks())
	if _, err := ri.search(ctx, store, "bfcl-011"); err != nil {
		t.Fatal(err)
	}
	if e.cached.Load() != 0 || ri.kept != 0 {
		t.Errorf("a dropped run: %d bytes counted, it keeps %d; want 0", e.cached.Load(), ri.kept)
	}
}
