package activities

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestShardProgressValid(t *testing.T) {
	for _, tc := range []struct {
		p    shardProgress
		n    int
		want bool
	}{
		{shardProgress{}, 5, true},
		{shardProgress{Done: 2, Starts: []int{0}}, 5, true},
		{shardProgress{Done: 5, Starts: []int{0, 2, 3}}, 5, true},
		{shardProgress{Done: 2}, 5, false},                      // chunks done but no file
		{shardProgress{Starts: []int{0}}, 5, false},             // a file but nothing done
		{shardProgress{Done: 6, Starts: []int{0}}, 5, false},    // more chunks than the shard has
		{shardProgress{Done: 3, Starts: []int{1}}, 5, false},    // first file must start at chunk 0
		{shardProgress{Done: 3, Starts: []int{0, 0}}, 5, false}, // not increasing
		{shardProgress{Done: 3, Starts: []int{0, 3}}, 5, false}, // a file starting at Done is empty
		{shardProgress{Done: -1}, 5, false},
	} {
		if got := tc.p.valid(tc.n); got != tc.want {
			t.Errorf("%+v.valid(%d) = %v, want %v", tc.p, tc.n, got, tc.want)
		}
	}
}

// TestEachIndex: every index is done once, by exactly conc calls in flight
// at a time. The calls wait at a barrier until the test has seen conc of
// them arrive, so the test proves conc run at once without sleeping.
func TestEachIndex(t *testing.T) {
	const conc = 3
	idx := []int{3, 5, 8, 13, 21, 34, 55, 89, 144} // three waves of conc
	var mu sync.Mutex
	seen := map[int]int{}
	var inFlight, peak atomic.Int64
	arrived := make(chan int)
	release := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- eachIndex(context.Background(), idx, conc, func(_ context.Context, i int) error {
			n := inFlight.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			arrived <- i
			<-release
			inFlight.Add(-1)
			mu.Lock()
			seen[i]++
			mu.Unlock()
			return nil
		})
	}()
	for wave := range len(idx) / conc {
		for k := range conc {
			select {
			case <-arrived:
			case <-time.After(10 * time.Second):
				t.Fatalf("wave %d: %d calls in flight, want %d", wave, k, conc)
			}
		}
		if n := inFlight.Load(); n != conc {
			t.Fatalf("wave %d: %d calls in flight, want %d", wave, n, conc)
		}
		for range conc {
			release <- struct{}{}
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	for _, i := range idx {
		if seen[i] != 1 {
			t.Errorf("index %d called %d times", i, seen[i])
		}
	}
	if len(seen) != len(idx) || peak.Load() != conc {
		t.Errorf("seen %v, peak concurrency %d (limit %d)", seen, peak.Load(), conc)
	}

	// The first error stops the others and is returned.
	boom := errors.New("boom")
	var calls atomic.Int64
	err := eachIndex(context.Background(), make([]int, 1000), 4, func(ctx context.Context, _ int) error {
		if calls.Add(1) == 10 {
			return boom
		}
		return ctx.Err()
	})
	if !errors.Is(err, boom) || calls.Load() >= 1000 {
		t.Errorf("err = %v after %d calls", err, calls.Load())
	}
	if err := eachIndex(context.Background(), nil, 4, nil); err != nil {
		t.Errorf("empty: %v", err)
	}
}
