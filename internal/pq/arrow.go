package pq

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/benchline/benchline/internal/blob"
)

// ReadArrow streams the Parquet object at key as Arrow record batches with
// only the named columns (all when columns is empty). Aggregation reads
// result tables this way: columnar, vectorised, projected.
func ReadArrow(ctx context.Context, store blob.Store, key string, columns []string, fn func(arrow.RecordBatch) error) error {
	ra, err := OpenObject(ctx, store, key)
	if err != nil {
		return fmt.Errorf("pq: open %s: %w", key, err)
	}
	pf, err := file.NewParquetReader(io.NewSectionReader(ra, 0, ra.Size()))
	if err != nil {
		return fmt.Errorf("pq: %s: not a readable Parquet file: %w", key, err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("pq: %s: %w", key, err)
	}
	var indices []int
	if len(columns) > 0 {
		schema := pf.MetaData().Schema
		for _, c := range columns {
			i := schema.ColumnIndexByName(c)
			if i < 0 {
				return fmt.Errorf("pq: %s: no column %q", key, c)
			}
			indices = append(indices, i)
		}
	}
	rr, err := fr.GetRecordReader(ctx, indices, nil)
	if err != nil {
		return fmt.Errorf("pq: %s: %w", key, err)
	}
	defer rr.Release()
	for rr.Next() {
		if err := fn(rr.RecordBatch()); err != nil {
			return err
		}
	}
	if err := rr.Err(); err != nil && err != io.EOF {
		return fmt.Errorf("pq: read %s: %w", key, err)
	}
	return nil
}
