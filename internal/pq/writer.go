// Package pq writes and reads benchline's Parquet tables on a blob.Store.
//
// parquet-go is the one writer for every table (typed rows from schemas/);
// reading back uses parquet-go for typed rows with column projection, and
// arrow-go (see arrow.go) for columnar reads that feed aggregation.
package pq

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"maps"
	"slices"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/benchline/benchline/internal/blob"
)

// codec is shared by every writer so its pooled zstd encoders are reused
// instead of allocated per file.
var codec = &zstd.Codec{Level: zstd.SpeedDefault}

// Options tune a Writer. Zero values pick the defaults in brackets.
type Options struct {
	// RowGroupRows caps rows per row group [8192]. Row groups and their
	// pages are what a reader fetches and decodes: a shard reading 500 rows
	// decodes only the pages those rows sit in (the offset index lets it
	// skip the others), so small groups and pages keep evaluation reads
	// cheap, while 8k rows (a few MB) still suit ranged S3 reads and DuckDB
	// scans.
	RowGroupRows int64
	// RowGroupBytes flushes a row group early when the buffered (uncompressed)
	// size passes this many bytes [64 MiB], which bounds memory for wide rows.
	RowGroupBytes int64
	// Metadata is written into the file's key/value metadata, sorted by key.
	Metadata map[string]string
	// PageBufferSize is the buffer per column, which caps a page's size
	// [64 KiB]. A 500-row read of a dataset decodes a few such pages per
	// column instead of the whole row group's (`go test -bench ReadRange
	// ./internal/pq/`: about 20% faster than with 1 MiB pages).
	PageBufferSize int
}

// FileInfo describes a written Parquet object.
type FileInfo struct {
	Key    string `json:"key"`
	Rows   int64  `json:"rows"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// Writer streams rows of type T into one Parquet object. Memory is bounded by
// one row group plus the store's upload buffers, whatever the row count.
type Writer[T any] struct {
	key     string
	w       *parquet.GenericWriter[T]
	pw      *io.PipeWriter
	counter *countingHash
	done    chan error
	opts    Options
	rows    int64
	inGroup int64
	closed  bool
}

// NewWriter starts an upload of a Parquet object at key. Call Close to finish
// it or Abort to discard it; until Close returns nil nothing is visible at key.
func NewWriter[T any](ctx context.Context, store blob.Store, key string, opts Options) *Writer[T] {
	if opts.RowGroupRows <= 0 {
		opts.RowGroupRows = 8192
	}
	if opts.RowGroupBytes <= 0 {
		opts.RowGroupBytes = 64 << 20
	}
	if opts.PageBufferSize <= 0 {
		opts.PageBufferSize = 64 << 10
	}
	pr, pw := io.Pipe()
	counter := &countingHash{w: pw, h: sha256.New()}
	wopts := []parquet.WriterOption{
		parquet.Compression(codec),
		parquet.CreatedBy("benchline", "1", ""),
		parquet.PageBufferSize(opts.PageBufferSize),
	}
	for _, k := range slices.Sorted(maps.Keys(opts.Metadata)) {
		wopts = append(wopts, parquet.KeyValueMetadata(k, opts.Metadata[k]))
	}
	w := &Writer[T]{
		key: key, pw: pw, counter: counter, done: make(chan error, 1), opts: opts,
		w: parquet.NewGenericWriter[T](counter, wopts...),
	}
	go func() {
		err := store.Put(ctx, key, pr, -1)
		pr.CloseWithError(err) // unblock the writer if the upload failed
		w.done <- err
	}()
	return w
}

// Write appends rows.
func (w *Writer[T]) Write(rows []T) error {
	for len(rows) > 0 {
		n := min(int64(len(rows)), w.opts.RowGroupRows-w.inGroup)
		if _, err := w.w.Write(rows[:n]); err != nil {
			return fmt.Errorf("pq: write %s: %w", w.key, err)
		}
		w.rows += n
		w.inGroup += n
		rows = rows[n:]
		if w.inGroup >= w.opts.RowGroupRows || w.bufferedBytes() >= w.opts.RowGroupBytes {
			if err := w.w.Flush(); err != nil {
				return fmt.Errorf("pq: flush %s: %w", w.key, err)
			}
			w.inGroup = 0
		}
	}
	return nil
}

func (w *Writer[T]) bufferedBytes() int64 {
	// Size estimates the whole file; what is buffered is that minus what has
	// already gone out through the pipe.
	return w.w.Size() - w.counter.n
}

// Rows returns how many rows have been written so far.
func (w *Writer[T]) Rows() int64 { return w.rows }

// Close finishes the file and waits for the upload; the returned FileInfo
// carries the object's row count, size and sha256.
func (w *Writer[T]) Close() (FileInfo, error) {
	if w.closed {
		return FileInfo{}, errors.New("pq: writer already closed")
	}
	w.closed = true
	if err := w.w.Close(); err != nil {
		w.pw.CloseWithError(err)
		<-w.done
		return FileInfo{}, fmt.Errorf("pq: close %s: %w", w.key, err)
	}
	w.pw.Close()
	if err := <-w.done; err != nil {
		return FileInfo{}, fmt.Errorf("pq: upload %s: %w", w.key, err)
	}
	return FileInfo{Key: w.key, Rows: w.rows, Bytes: w.counter.n, SHA256: hex.EncodeToString(w.counter.h.Sum(nil))}, nil
}

// Abort discards the upload.
func (w *Writer[T]) Abort() {
	if w.closed {
		return
	}
	w.closed = true
	w.pw.CloseWithError(errors.New("pq: write aborted"))
	<-w.done
}

type countingHash struct {
	w io.Writer
	h hash.Hash
	n int64
}

func (c *countingHash) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.h.Write(p[:n])
	c.n += int64(n)
	return n, err
}
