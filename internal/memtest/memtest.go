// Package memtest measures memory for tests and benchmarks that hold code
// to a bound (docs/PERFORMANCE.md).
package memtest

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// PeakHeap runs fn and returns the most heap in use it saw above what was
// in use before: sampled every millisecond, the collector at GOGC=20
// meanwhile so that garbage says little.
func PeakHeap(fn func()) uint64 {
	old := debug.SetGCPercent(20)
	defer debug.SetGCPercent(old)
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	base := s[0].Value.Uint64()
	var peak uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	fn()
	close(stop)
	<-done
	if peak < base {
		return 0
	}
	return peak - base
}
