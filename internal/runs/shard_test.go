package runs

import "testing"

func TestBatchShardSize(t *testing.T) {
	for _, tc := range []struct {
		name        string
		rows, bytes int64
		want        int
	}{
		{"short rows: the most", 1_000_000, 200_000_000, MaxBatchShardSize}, // 200 B a row
		{"1 KB rows: 4 MiB of them", 10_000, 10_240_000, 4096},
		{"500 B rows: 4 MiB of them", 10_000, 5_000_000, 8388},
		{"long rows: never fewer than interactively", 100, 3_000_000, DefaultShardSize}, // 30 KB a row
		{"no bytes recorded", 1000, 0, DefaultShardSize},
		{"no rows", 0, 1000, DefaultShardSize},
		{"rows larger than the budget", 10, 100 << 20, DefaultShardSize},
	} {
		if got := BatchShardSize(tc.rows, tc.bytes); got != tc.want {
			t.Errorf("%s: BatchShardSize(%d, %d) = %d, want %d", tc.name, tc.rows, tc.bytes, got, tc.want)
		}
	}
}
