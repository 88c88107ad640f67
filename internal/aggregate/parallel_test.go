package aggregate

import (
	"fmt"
	"testing"
)

// TestParallelStats: the statistics computed on several goroutines come
// back in the order asked, each the same as computed alone.
func TestParallelStats(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 40} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var fns []func() MetricStat
			var want []MetricStat
			for i := range n {
				xs := make([]float64, 50+i)
				for j := range xs {
					xs[j] = float64((i + j) % 3)
				}
				name := fmt.Sprint("m", i)
				fns = append(fns, func() MetricStat { return Stat(name, xs, Options{Seed: uint64(i + 1)}) })
				want = append(want, Stat(name, xs, Options{Seed: uint64(i + 1)}))
			}
			got := parallelStats(fns)
			if len(got) != n {
				t.Fatalf("%d results, want %d", len(got), n)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("result %d: %+v, want %+v", i, got[i], want[i])
				}
			}
		})
	}
}
