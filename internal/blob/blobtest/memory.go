// Package blobtest provides an in-memory blob.Store for unit tests and a
// conformance suite that every Store implementation must pass.
package blobtest

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/benchline/benchline/internal/blob"
)

// Memory is a mutex-guarded map that implements blob.Store.
type Memory struct {
	mu   sync.Mutex
	objs map[string]memObj
	// Puts counts successful writes, for tests that assert idempotency.
	Puts int
}

type memObj struct {
	data []byte
	mod  time.Time
}

var _ blob.Store = (*Memory)(nil)
var _ blob.RangeGetter = (*Memory)(nil)

// NewMemory returns an empty store.
func NewMemory() *Memory { return &Memory{objs: map[string]memObj{}} }

func (m *Memory) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("blobtest: put %s: %w", key, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.objs[key] = memObj{data: b, mod: time.Now()}
	m.Puts++
	return nil
}

func (m *Memory) PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("blobtest: put %s: %w", key, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.objs[key]; ok {
		return fmt.Errorf("blobtest: put %s: %w", key, blob.ErrExists)
	}
	m.objs[key] = memObj{data: b, mod: time.Now()}
	m.Puts++
	return nil
}

func (m *Memory) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objs[key]
	if !ok {
		return nil, fmt.Errorf("blobtest: get %s: %w", key, blob.ErrNotFound)
	}
	return io.NopCloser(bytes.NewReader(o.data)), nil
}

func (m *Memory) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objs[key]
	if !ok {
		return nil, fmt.Errorf("blobtest: get %s: %w", key, blob.ErrNotFound)
	}
	end := min(off+n, int64(len(o.data)))
	if off > end {
		off = end
	}
	return io.NopCloser(bytes.NewReader(o.data[off:end])), nil
}

func (m *Memory) Head(ctx context.Context, key string) (blob.Info, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objs[key]
	if !ok {
		return blob.Info{}, fmt.Errorf("blobtest: head %s: %w", key, blob.ErrNotFound)
	}
	return info(key, o), nil
}

func (m *Memory) List(ctx context.Context, prefix string) ([]blob.Info, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []blob.Info
	for k, o := range m.objs {
		if strings.HasPrefix(k, prefix) {
			out = append(out, info(k, o))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

func (m *Memory) Delete(ctx context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.objs, key)
	return nil
}

func info(k string, o memObj) blob.Info {
	sum := md5.Sum(o.data)
	return blob.Info{Key: k, Size: int64(len(o.data)), ETag: hex.EncodeToString(sum[:]), Modified: o.mod}
}
