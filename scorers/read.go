package scorers

import (
	"context"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/pq"
)

// ReadRows implements Task.ReadSamples for a task whose rows are the
// Parquet table T: it reads rows [start, start+n) of key (projected to T)
// and hands each to fn as a Sample whose Row is a *T, named by id and
// category.
func ReadRows[T any](ctx context.Context, store blob.Store, key string, start, n int64, id, category func(*T) string, fn func(Sample) error) error {
	return pq.ReadRange(ctx, store, key, start, n, func(rows []T) error {
		for i := range rows {
			r := rows[i]
			if err := fn(Sample{ID: id(&r), Category: category(&r), Row: &r}); err != nil {
				return err
			}
		}
		return nil
	})
}
