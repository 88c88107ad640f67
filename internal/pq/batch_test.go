package pq_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/pq"
)

// TestReadBatchesBoundedByBytes: a file of large rows (1 MiB texts) is
// read a few rows at a time, not 1024 at once, by ReadEach and ReadRange;
// a file of small rows still in batches of up to 1024.
func TestReadBatchesBoundedByBytes(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name          string
		rows, text    int
		most, atLeast int // the largest batch: at most, at least
	}{
		{"1 MiB rows", 24, 1 << 20, 16, 1},
		{"small rows", 3000, 20, 1024, 1024},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := blobtest.NewMemory()
			w := pq.NewWriter[row](ctx, store, "t.parquet", pq.Options{})
			text := strings.Repeat("x", tc.text)
			for i := range tc.rows {
				if err := w.Write([]row{{ID: fmt.Sprint(i), N: int64(i), Text: text}}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := w.Close(); err != nil {
				t.Fatal(err)
			}
			for _, read := range []struct {
				name string
				fn   func(func([]row) error) error
			}{
				{"ReadEach", func(fn func([]row) error) error { return pq.ReadEach(ctx, store, "t.parquet", fn) }},
				{"ReadRange", func(fn func([]row) error) error {
					return pq.ReadRange(ctx, store, "t.parquet", 1, int64(tc.rows-1), fn)
				}},
			} {
				biggest, n := 0, 0
				if err := read.fn(func(rs []row) error { biggest, n = max(biggest, len(rs)), n+len(rs); return nil }); err != nil {
					t.Fatal(err)
				}
				if biggest > tc.most || biggest < tc.atLeast || n < tc.rows-1 {
					t.Errorf("%s: %d rows, the largest batch %d, want between %d and %d", read.name, n, biggest, tc.atLeast, tc.most)
				}
			}
		})
	}
}
