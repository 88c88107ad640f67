package pq_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/pq"
)

// countingStore counts the calls that reach the store.
type countingStore struct {
	blob.Store
	heads, gets atomic.Int32
}

func (s *countingStore) Head(ctx context.Context, key string) (blob.Info, error) {
	s.heads.Add(1)
	return s.Store.Head(ctx, key)
}

func (s *countingStore) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	s.gets.Add(1)
	return s.Store.Get(ctx, key)
}

// TestVerifiedCache: an object read through a store with the cache and a
// promise is fetched and hashed once; later readers take it from memory;
// without a promised sha256 nothing is kept; the least recently used
// objects leave first when the cache is full.
func TestVerifiedCache(t *testing.T) {
	ctx := context.Background()
	mem := blobtest.NewMemory()
	infos := map[string]pq.FileInfo{}
	for i := range 3 {
		key := fmt.Sprintf("part-%d.parquet", i)
		w := pq.NewWriter[row](ctx, mem, key, pq.Options{})
		if err := w.Write([]row{{ID: key, N: int64(i)}}); err != nil {
			t.Fatal(err)
		}
		info, err := w.Close()
		if err != nil {
			t.Fatal(err)
		}
		infos[key] = info
	}
	promise := map[string]pq.Expect{}
	for k, info := range infos {
		promise[k] = pq.Expect{Rows: info.Rows, Bytes: info.Bytes, SHA256: info.SHA256}
	}
	counting := &countingStore{Store: mem}
	// Room for two of the three files.
	cache := pq.NewVerifiedCache(2*infos["part-0.parquet"].Bytes + 10)
	store := pq.Expecting(pq.WithVerifiedCache(counting, cache), promise)
	read := func(key string) {
		t.Helper()
		rows, err := pq.ReadAll[row](ctx, store, key)
		if err != nil || len(rows) != 1 || rows[0].ID != key {
			t.Fatalf("read %s: %v %v", key, rows, err)
		}
	}
	calls := func() int32 { return counting.heads.Load() + counting.gets.Load() }
	read("part-0.parquet")
	if calls() == 0 || cache.Len() != 1 {
		t.Fatalf("first read: %d store calls, %d cached", calls(), cache.Len())
	}
	before := calls()
	read("part-0.parquet")
	if calls() != before {
		t.Errorf("a cached read made %d store calls", calls()-before)
	}
	read("part-1.parquet")
	read("part-0.parquet") // part-1 is now the least recently used
	read("part-2.parquet")
	if cache.Len() != 2 {
		t.Fatalf("%d cached, want 2", cache.Len())
	}
	before = calls()
	read("part-0.parquet")
	if calls() != before {
		t.Error("part-0, recently used, was evicted")
	}
	read("part-1.parquet")
	if calls() == before {
		t.Error("part-1, least recently used, was not evicted")
	}
	// Without a promise the cache is not used.
	plain := pq.WithVerifiedCache(counting, pq.NewVerifiedCache(1<<20))
	if _, err := pq.ReadAll[row](ctx, plain, "part-0.parquet"); err != nil {
		t.Fatal(err)
	}
	before = calls()
	if _, err := pq.ReadAll[row](ctx, plain, "part-0.parquet"); err != nil {
		t.Fatal(err)
	}
	if calls() == before {
		t.Error("an object without a promised sha256 was cached")
	}
}

// rangingStore counts HEADs, whole GETs and ranged GETs.
type rangingStore struct {
	countingStore
	ranges atomic.Int32
}

func (s *rangingStore) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	s.ranges.Add(1)
	return s.Store.(blob.RangeGetter).GetRange(ctx, key, off, n)
}

// writeLargePart writes a part of rows with random text, larger than the
// 1 MiB read whole without a cache, and returns its promise.
func writeLargePart(t *testing.T, store blob.Store, key string, rows int) pq.Expect {
	t.Helper()
	r := rand.New(rand.NewPCG(3, 4))
	batch := make([]row, rows)
	for i := range batch {
		text := make([]byte, 512)
		for j := range text {
			text[j] = byte('a' + r.IntN(26))
		}
		batch[i] = row{ID: fmt.Sprint("r", i), N: int64(i), Text: string(text)}
	}
	w := pq.NewWriter[row](context.Background(), store, key, pq.Options{RowGroupRows: 1000})
	if err := w.Write(batch); err != nil {
		t.Fatal(err)
	}
	info, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if info.Bytes <= 1<<20 {
		t.Fatalf("part is %d bytes, want more than 1 MiB", info.Bytes)
	}
	return pq.Expect{Rows: info.Rows, Bytes: info.Bytes, SHA256: info.SHA256}
}

// TestVerifiedCacheLargePart: a part larger than 1 MiB but within a
// quarter of the cache is fetched whole once, with no HEAD, by readers
// reading row ranges of it at once (as a worker's shards do), and each
// reads its own rows; a larger part is read in ranges as before, and not
// kept.
func TestVerifiedCacheLargePart(t *testing.T) {
	ctx := context.Background()
	mem := blobtest.NewMemory()
	const rows = 6000
	promise := map[string]pq.Expect{"big.parquet": writeLargePart(t, mem, "big.parquet", rows)}
	store := &rangingStore{countingStore: countingStore{Store: mem}}
	cache := pq.NewVerifiedCache(64 << 20)
	checked := pq.Expecting(pq.WithVerifiedCache(store, cache), promise)
	var wg sync.WaitGroup
	errs := make([]error, 12)
	for i := range errs {
		wg.Go(func() {
			start := int64(i * 500)
			n := int64(0)
			errs[i] = pq.ReadRange[row](ctx, checked, "big.parquet", start, 500, func(got []row) error {
				for _, g := range got {
					if g.N != start+n {
						return fmt.Errorf("row %d of range %d is %d", n, start, g.N)
					}
					n++
				}
				return nil
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("reader %d: %v", i, err)
		}
	}
	if h, g, r := store.heads.Load(), store.gets.Load(), store.ranges.Load(); h != 0 || g != 1 || r != 0 || cache.Len() != 1 {
		t.Errorf("%d HEADs, %d GETs, %d ranged GETs, %d cached; want 0, 1, 0, 1", h, g, r, cache.Len())
	}

	// A cache of 4 MiB holds parts up to 1 MiB: this one is read in ranges.
	store = &rangingStore{countingStore: countingStore{Store: mem}}
	small := pq.NewVerifiedCache(4 << 20)
	checked = pq.Expecting(pq.WithVerifiedCache(store, small), promise)
	if err := pq.ReadRange[row](ctx, checked, "big.parquet", 5000, 10, func([]row) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if h, g, r := store.heads.Load(), store.gets.Load(), store.ranges.Load(); h != 1 || g != 0 || r == 0 || small.Len() != 0 {
		t.Errorf("%d HEADs, %d GETs, %d ranged GETs, %d cached; want 1, 0, some, 0", h, g, r, small.Len())
	}
}

// TestVerifiedCacheLargePartCorrupt: a large part whose bytes are not the
// promised ones (same size, one byte changed) fails every reader, naming
// it, and is not kept; every reader tries for itself, so none is handed
// another's failure.
func TestVerifiedCacheLargePartCorrupt(t *testing.T) {
	ctx := context.Background()
	mem := blobtest.NewMemory()
	exp := writeLargePart(t, mem, "big.parquet", 3000)
	b, err := blob.GetBytes(ctx, mem, "big.parquet")
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	if err := mem.Put(ctx, "big.parquet", bytes.NewReader(b), int64(len(b))); err != nil {
		t.Fatal(err)
	}
	store := &countingStore{Store: mem}
	cache := pq.NewVerifiedCache(64 << 20)
	checked := pq.Expecting(pq.WithVerifiedCache(store, cache), map[string]pq.Expect{"big.parquet": exp})
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			errs[i] = pq.ReadRange[row](ctx, checked, "big.parquet", 0, 10, func([]row) error { return nil })
		})
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, pq.ErrCorrupt) || !strings.Contains(err.Error(), "big.parquet has sha256") {
			t.Errorf("reader %d: %v, want ErrCorrupt naming big.parquet's sha256", i, err)
		}
	}
	if cache.Len() != 0 || store.gets.Load() != int32(len(errs)) {
		t.Errorf("%d cached after %d GETs; want 0 cached, one GET per reader", cache.Len(), store.gets.Load())
	}
}
