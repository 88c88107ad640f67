package pq_test

import (
	"context"
	"fmt"
	"io"
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
