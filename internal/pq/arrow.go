package pq

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/benchline/benchline/internal/blob"
)

// ErrNoColumn is returned (wrapped) when a projected column is not in a file.
var ErrNoColumn = errors.New("pq: no column")

// ReadArrow streams the Parquet object at key as Arrow record batches with
// only the named columns (all when columns is empty). Aggregation reads
// result tables this way: columnar, vectorised, projected. An object that
// is not the Parquet it should be is an error wrapping ErrCorrupt, as for
// ReadEach.
func ReadArrow(ctx context.Context, store blob.Store, key string, columns []string, fn func(arrow.RecordBatch) error) error {
	ra, err := OpenObject(ctx, store, key)
	if err != nil {
		return err
	}
	defer ra.Release()
	pf, err := file.NewParquetReader(io.NewSectionReader(ra, 0, ra.Size()))
	if err != nil {
		return ra.readError("not a Parquet file", err)
	}
	defer pf.Close()
	if err := ra.checkRows(pf.NumRows()); err != nil {
		return err
	}
	root := pf.MetaData().Schema.Root()
	cols := make([]string, root.NumFields())
	for i := range cols {
		cols[i] = root.Field(i).Name()
	}
	if err := ra.checkColumns(cols); err != nil {
		return err
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, memory.DefaultAllocator)
	if err != nil {
		return ra.readError("not readable as Arrow", err)
	}
	// pqarrow selects leaf columns: a nested column (a map, a list) is
	// every leaf under its top-level name.
	var indices []int
	if len(columns) > 0 {
		schema := pf.MetaData().Schema
		for _, c := range columns {
			found := false
			for i := 0; i < schema.NumColumns(); i++ {
				if path := schema.Column(i).ColumnPath(); len(path) > 0 && path[0] == c {
					indices = append(indices, i)
					found = true
				}
			}
			if !found {
				return fmt.Errorf("pq: %s: %w %q", key, ErrNoColumn, c)
			}
		}
	}
	rr, err := fr.GetRecordReader(ctx, indices, nil)
	if err != nil {
		return ra.readError("read", err)
	}
	defer rr.Release()
	for rr.Next() {
		if err := fn(rr.RecordBatch()); err != nil {
			return err
		}
	}
	if err := rr.Err(); err != nil && err != io.EOF {
		return ra.readError("read", err)
	}
	return nil
}
