package baseline

import (
	"bytes"
	"testing"
)

// The server holds at most MaxFiles files and MaxHeldBytes of them: older
// files are dropped first, the newest is always kept.
func TestBatchFilesBounded(t *testing.T) {
	for _, tc := range []struct {
		name     string
		maxFiles int
		maxBytes int64
		sizes    []int
		kept     int // newest files kept
	}{
		{"by count", 2, 1 << 20, []int{10, 10, 10, 10}, 2},
		{"by bytes", 100, 25, []int{10, 10, 10, 10}, 2},
		{"one over the bound is kept", 100, 25, []int{10, 10, 40}, 1},
		{"within both", 10, 100, []int{10, 20, 30}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &batches{files: map[string]*batchFile{}}
			var ids []string
			for _, n := range tc.sizes {
				ids = append(ids, b.addFile("f", "batch", bytes.Repeat([]byte("x"), n), tc.maxFiles, tc.maxBytes).id)
			}
			var held int64
			for i, id := range ids {
				f, ok := b.files[id]
				if want := i >= len(ids)-tc.kept; ok != want {
					t.Fatalf("file %d held %v, want %v", i, ok, want)
				}
				if ok {
					held += int64(len(f.data))
				}
			}
			if b.held != held || len(b.order) != tc.kept {
				t.Fatalf("held %d bytes in %d files, counted %d in %d", held, tc.kept, b.held, len(b.order))
			}
		})
	}
}
