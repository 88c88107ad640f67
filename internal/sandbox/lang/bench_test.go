package lang

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/sandbox"
)

// BenchmarkRun measures compile+run of a hello-world program per language,
// sandboxed and as a plain subprocess (same commands, no bwrap, no limits).
// It reports runs/s and p50/p99 latency:
//
//	go test -run '^$' -bench . -benchtime 20x ./internal/sandbox/lang/
func BenchmarkRun(b *testing.B) {
	r := newRunner(b)
	ctx := context.Background()
	for _, l := range Languages() {
		p := Program{Lang: l, Source: hello[l], Stdin: "42\n"}
		b.Run(string(l)+"/sandbox", func(b *testing.B) {
			measure(b, func() error {
				res, err := r.Run(ctx, p)
				if err == nil && res.Status != sandbox.StatusOK {
					b.Fatalf("%v %s", res, res.Stderr)
				}
				return err
			})
		})
		b.Run(string(l)+"/plain", func(b *testing.B) {
			measure(b, func() error { return r.RunUnsandboxed(ctx, p) })
		})
	}
}

// BenchmarkThroughput runs 4 programs at a time on the 2 cores: runs/s
// when the sandbox's waiting (namespace set-up and teardown) overlaps.
//
//	go test -run '^$' -bench Throughput -benchtime 40x ./internal/sandbox/lang/
func BenchmarkThroughput(b *testing.B) {
	r := newRunner(b)
	ctx := context.Background()
	for _, l := range []Language{Python, JavaScript, PHP, Shell} {
		p := Program{Lang: l, Source: hello[l], Stdin: "42\n"}
		for _, mode := range []string{"sandbox", "plain"} {
			b.Run(string(l)+"/"+mode, func(b *testing.B) {
				op := func() error { return r.RunUnsandboxed(ctx, p) }
				if mode == "sandbox" {
					op = func() error { _, err := r.Run(ctx, p); return err }
				}
				b.SetParallelism(2) // 2 x GOMAXPROCS goroutines
				start := time.Now()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := op(); err != nil {
							b.Error(err)
						}
					}
				})
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "runs/s")
			})
		}
	}
}

func measure(b *testing.B, op func() error) {
	b.Helper()
	if err := op(); err != nil { // warm-up (page cache, TS package copy)
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		t := time.Now()
		if err := op(); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t))
	}
	total := time.Since(start)
	slices.Sort(lat)
	pct := func(q float64) float64 {
		return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(len(lat))/total.Seconds(), "runs/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}
