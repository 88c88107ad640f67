package pq

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/parquet-go/parquet-go"

	"github.com/benchline/benchline/internal/blob"
)

// ObjectReaderAt adapts an object in a blob.Store to io.ReaderAt. Small
// objects are fetched once; larger ones are read with ranged GETs (in
// blocks, cached) so a reader touches only the footer and the columns and
// row groups it reads.
type ObjectReaderAt struct {
	ctx   context.Context
	store blob.Store
	key   string
	size  int64

	expect *Expect // what a manifest promises, or nil
	ranged blob.RangeGetter

	mu       sync.Mutex
	whole    []byte
	blocks   map[int64][]byte
	storeErr error // the first failed store call
}

// Objects up to wholeLimit are fetched in one GET. Larger ones are read in
// blockSize ranges: a shard reading 500 rows of a 100,000-row file fetches
// the footer and one row group's column chunks, not the whole file.
const (
	wholeLimit = 1 << 20
	blockSize  = 1 << 20
	maxBlocks  = 32
)

// OpenObject returns a ReaderAt over key and its size. When store carries
// a promise about key (see Expecting), the object's size is checked, and
// its sha256 when it is read whole: a mismatch is an error wrapping
// ErrCorrupt. With a VerifiedCache attached too (WithVerifiedCache), an
// object with a promised sha256 that the cache holds (up to a quarter of
// it) is taken from it, or fetched whole in one GET, checked, and put
// there. Errors name the key.
func OpenObject(ctx context.Context, store blob.Store, key string) (*ObjectReaderAt, error) {
	store, exp, cache := expectation(store, key)
	if cache != nil && exp != nil && exp.SHA256 != "" && cache.holds(exp.Bytes) {
		b, err := cache.load(ctx, exp.SHA256, func() ([]byte, error) { return fetchChecked(ctx, store, key, exp) })
		if err != nil {
			return nil, err
		}
		return &ObjectReaderAt{ctx: ctx, store: store, key: key, size: exp.Bytes, expect: exp, whole: b, blocks: map[int64][]byte{}}, nil
	}
	info, err := store.Head(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("pq: open %s: %w", key, err)
	}
	r := &ObjectReaderAt{ctx: ctx, store: store, key: key, size: info.Size, expect: exp, blocks: map[int64][]byte{}}
	r.ranged, _ = store.(blob.RangeGetter)
	if err := r.checkWhole(); err != nil {
		return nil, err
	}
	return r, nil
}

// fetchChecked fetches the object at key whole, in one GET, and checks it
// against its promised size and sha256 (an object read whole for a
// VerifiedCache).
func fetchChecked(ctx context.Context, store blob.Store, key string, exp *Expect) ([]byte, error) {
	b, err := blob.GetBytes(ctx, store, key)
	if err != nil {
		return nil, fmt.Errorf("pq: open %s: %w", key, err)
	}
	if int64(len(b)) != exp.Bytes {
		return nil, fmt.Errorf("pq: %s is %d bytes, its manifest says %d: %w", key, len(b), exp.Bytes, ErrCorrupt)
	}
	if err := checkSHA256(key, b, exp.SHA256); err != nil {
		return nil, err
	}
	return b, nil
}

// readsWhole reports whether the object is fetched in one GET.
func (r *ObjectReaderAt) readsWhole() bool { return r.ranged == nil || r.size <= wholeLimit }

// fetchWhole fetches the whole object once. Callers hold r.mu.
func (r *ObjectReaderAt) fetchWhole() error {
	if r.whole != nil {
		return nil
	}
	b, err := blob.GetBytes(r.ctx, r.store, r.key)
	if err != nil {
		if r.storeErr == nil {
			r.storeErr = err
		}
		return err
	}
	r.whole = b
	return nil
}

// Size returns the object's size.
func (r *ObjectReaderAt) Size() int64 { return r.size }

// Release returns the reader's cached blocks to a pool shared by all
// readers. The reader stays usable (it fetches blocks again); callers
// release it when done, so that evaluation shards reading a few hundred rows
// each do not allocate a megabyte block per range they touch.
func (r *ObjectReaderAt) Release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.releaseBlocks()
}

func (r *ObjectReaderAt) releaseBlocks() {
	for k, b := range r.blocks {
		putBlock(b)
		delete(r.blocks, k)
	}
}

var blockPool = sync.Pool{New: func() any { b := make([]byte, blockSize); return &b }}

// getBlock returns a buffer of n bytes (n <= blockSize) from the pool.
func getBlock(n int) []byte { return (*blockPool.Get().(*[]byte))[:n] }

func putBlock(b []byte) {
	if cap(b) != blockSize {
		return
	}
	b = b[:blockSize]
	blockPool.Put(&b)
}

// ReadAt implements io.ReaderAt.
func (r *ObjectReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= r.size {
		return 0, io.EOF
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.readsWhole() {
		if err := r.fetchWhole(); err != nil {
			return 0, err
		}
		n := copy(p, r.whole[off:])
		if n < len(p) {
			return n, io.EOF
		}
		return n, nil
	}
	n := 0
	for n < len(p) && off+int64(n) < r.size {
		pos := off + int64(n)
		bi := pos / blockSize
		blk, ok := r.blocks[bi]
		if !ok {
			start := bi * blockSize
			length := min(int64(blockSize), r.size-start)
			rc, err := r.ranged.GetRange(r.ctx, r.key, start, length)
			if err != nil {
				if r.storeErr == nil {
					r.storeErr = err
				}
				return n, err
			}
			if len(r.blocks) >= maxBlocks {
				r.releaseBlocks()
			}
			blk = getBlock(int(length))
			_, err = io.ReadFull(rc, blk)
			rc.Close()
			if err != nil {
				putBlock(blk)
				err = fmt.Errorf("pq: read %s: %w", r.key, err)
				if r.storeErr == nil {
					r.storeErr = err
				}
				return n, err
			}
			r.blocks[bi] = blk
		}
		n += copy(p[n:], blk[pos-bi*blockSize:])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// A read decodes at most maxBatchRows rows at once, and fewer when the
// file's rows are large: about batchBytes of them, judged by the largest
// average row size of the file's row groups (uncompressed), so a file of
// 1 MiB replies is read 8 rows at a time, not 1024.
const (
	maxBatchRows = 1024
	batchBytes   = 8 << 20
)

// batchRows is how many rows of f one read decodes.
func batchRows(f *parquet.File) int {
	var avg int64
	for _, rg := range f.Metadata().RowGroups {
		if rg.NumRows > 0 {
			avg = max(avg, rg.TotalByteSize/rg.NumRows)
		}
	}
	if avg <= 0 {
		return maxBatchRows
	}
	return int(min(max(batchBytes/avg, 1), maxBatchRows))
}

// ReadEach streams the rows of the Parquet object at key as type T, calling
// fn for each batch. T may name a subset of the file's columns: only those
// columns are read (projection). Returning an error from fn stops the read.
// An object that is not the Parquet it should be is an error wrapping
// ErrCorrupt (see Expecting for what a store may promise).
func ReadEach[T any](ctx context.Context, store blob.Store, key string, fn func([]T) error) error {
	ra, f, err := openParquet(ctx, store, key)
	if err != nil {
		return err
	}
	defer ra.Release()
	rd := parquet.NewGenericReader[T](f)
	defer rd.Close()
	buf := make([]T, batchRows(f))
	for {
		n, err := rd.Read(buf)
		if n > 0 {
			if ferr := fn(buf[:n]); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return ra.readError("read", err)
		}
	}
}

// ReadAll reads every row of the object at key (for small tables and tests).
func ReadAll[T any](ctx context.Context, store blob.Store, key string) ([]T, error) {
	var out []T
	err := ReadEach(ctx, store, key, func(rows []T) error { out = append(out, rows...); return nil })
	return out, err
}

// ReadRange streams rows [start, start+n) of the object at key as type T
// (projected like ReadEach), seeking past the rows before start.
func ReadRange[T any](ctx context.Context, store blob.Store, key string, start, n int64, fn func([]T) error) error {
	ra, f, err := openParquet(ctx, store, key)
	if err != nil {
		return err
	}
	defer ra.Release()
	if start < 0 || start+n > f.NumRows() {
		return fmt.Errorf("pq: %s: rows [%d, %d) out of range (file has %d): %w", key, start, start+n, f.NumRows(), ErrCorrupt)
	}
	rd := parquet.NewGenericReader[T](f)
	defer rd.Close()
	if err := rd.SeekToRow(start); err != nil {
		return ra.readError(fmt.Sprintf("seek to row %d", start), err)
	}
	buf := make([]T, min(int64(batchRows(f)), max(n, 1)))
	for left := n; left > 0; {
		k, err := rd.Read(buf[:min(int64(len(buf)), left)])
		if k > 0 {
			if ferr := fn(buf[:k]); ferr != nil {
				return ferr
			}
			left -= int64(k)
		}
		if errors.Is(err, io.EOF) {
			if left > 0 {
				return fmt.Errorf("pq: %s: file ended %d rows early: %w", key, left, ErrCorrupt)
			}
			return nil
		}
		if err != nil {
			return ra.readError("read", err)
		}
	}
	return nil
}
