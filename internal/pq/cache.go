package pq

import (
	"container/list"
	"sync"

	"github.com/benchline/benchline/internal/blob"
)

// VerifiedCache keeps small objects (those fetched whole, up to 1 MiB)
// whose bytes matched the sha256 a manifest promised, keyed by that
// sha256, up to a total size, least recently used out first. A reader
// given a store with the cache (WithVerifiedCache) and a promise about an
// object takes the promised bytes from it instead of fetching and hashing
// them again: the shards of a run, and the runs of several models on one
// dataset version, read its files once per worker. The bytes are the ones
// the manifest vouches for, so what a reader sees does not change; an
// object overwritten after it was cached is not noticed by that worker
// (one that has not cached it still fails, naming the file). Safe for
// concurrent use.
type VerifiedCache struct {
	max int64

	mu   sync.Mutex
	size int64
	ll   *list.List // of *cached, most recent first
	m    map[string]*list.Element
}

type cached struct {
	sha string
	b   []byte
}

// NewVerifiedCache returns a cache of at most maxBytes.
func NewVerifiedCache(maxBytes int64) *VerifiedCache {
	return &VerifiedCache{max: maxBytes, ll: list.New(), m: map[string]*list.Element{}}
}

// get returns the bytes whose sha256 is sha, if cached. Callers must not
// modify them.
func (c *VerifiedCache) get(sha string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[sha]
	if !ok {
		return nil, false
	}
	c.ll.MoveToFront(e)
	return e.Value.(*cached).b, true
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
