package pq

import (
	"container/list"
	"context"
	"sync"

	"github.com/benchline/benchline/internal/blob"
)

// VerifiedCache keeps objects whose bytes matched the sha256 a manifest
// promised, keyed by that sha256, up to a total size, least recently used
// out first. A reader given a store with the cache (WithVerifiedCache) and
// a promise about an object of up to a quarter of the cache (or up to
// 1 MiB, the size read whole anyway) fetches it whole once, checks its
// sha256 and keeps it: the shards of a run, and the runs of several models
// on one dataset version, read its files once per worker, with one GET
// and no HEAD, instead of a HEAD and ranged GETs of the footer and a row
// group per shard. Readers opening the same object at once wait for one
// fetch. The bytes are the ones the manifest vouches for, so what a reader
// sees does not change; an object overwritten after it was cached is not
// noticed by that worker (one that has not cached it still fails, naming
// the file). Safe for concurrent use.
type VerifiedCache struct {
	max int64

	mu   sync.Mutex
	size int64
	ll   *list.List // of *cached, most recent first
	m    map[string]*list.Element
	// fetching holds the fetches under way, by sha256.
	fetching map[string]*fetch
}

// fetch is one reader's fetch of an object the others wait for.
type fetch struct {
	done chan struct{}
	b    []byte // set before done is closed; nil if the fetch failed
}

type cached struct {
	sha string
	b   []byte
}

// NewVerifiedCache returns a cache of at most maxBytes.
func NewVerifiedCache(maxBytes int64) *VerifiedCache {
	return &VerifiedCache{max: maxBytes, ll: list.New(), m: map[string]*list.Element{}, fetching: map[string]*fetch{}}
}

// holds reports whether an object of n bytes is read whole for the cache.
func (c *VerifiedCache) holds(n int64) bool {
	return n > 0 && n <= max(wholeLimit, c.max/4)
}

// load returns the checked bytes whose sha256 is sha: from the cache, or
// from the fetch another reader has under way, or from fetchChecked, whose
// bytes (checked against sha by it) are then kept. When another reader's
// fetch fails, this one fetches for itself, so that its error names its
// own key and its own context decides when to give up.
func (c *VerifiedCache) load(ctx context.Context, sha string, fetchChecked func() ([]byte, error)) ([]byte, error) {
	c.mu.Lock()
	if e, ok := c.m[sha]; ok {
		c.ll.MoveToFront(e)
		c.mu.Unlock()
		return e.Value.(*cached).b, nil
	}
	if f, ok := c.fetching[sha]; ok {
		c.mu.Unlock()
		select {
		case <-f.done:
			if f.b != nil {
				return f.b, nil
			}
			return fetchChecked()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f := &fetch{done: make(chan struct{})}
	c.fetching[sha] = f
	c.mu.Unlock()
	b, err := fetchChecked()
	if err == nil {
		c.add(sha, b)
		f.b = b
	}
	c.mu.Lock()
	delete(c.fetching, sha)
	c.mu.Unlock()
	close(f.done)
	return b, err
}

// add caches b, whose sha256 is sha (the caller has checked it).
func (c *VerifiedCache) add(sha string, b []byte) {
	if int64(len(b)) > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[sha]; ok {
		return
	}
	c.m[sha] = c.ll.PushFront(&cached{sha, b})
	c.size += int64(len(b))
	for c.size > c.max {
		e := c.ll.Back()
		v := e.Value.(*cached)
		c.ll.Remove(e)
		delete(c.m, v.sha)
		c.size -= int64(len(v.b))
	}
}

// Len returns how many objects are cached.
func (c *VerifiedCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}

// WithVerifiedCache returns store with c attached: readers of this package
// opening, through it (or through Expecting over it), an object with a
// promised sha256 and size use c (see VerifiedCache).
func WithVerifiedCache(store blob.Store, c *VerifiedCache) blob.Store {
	return &expecting{Store: store, cache: c}
}
