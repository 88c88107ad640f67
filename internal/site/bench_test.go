package site

import (
	"context"
	"strings"
	"syscall"
	"testing"

	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/site/sitetest"
)

// BenchmarkWrite writes the site of a stamp whose three bfcl runs have
// 10,000 samples each (and three 20-sample medrubric runs) to a memory
// store, and reports the site's size: bytes per sample and files.
//
//	go test -run '^$' -bench Write -benchtime 5x ./internal/site/
func BenchmarkWrite(b *testing.B) {
	ctx := context.Background()
	store := blobtest.NewMemory()
	s, err := sitetest.Sized(ctx, store, 10000)
	if err != nil {
		b.Fatal(err)
	}
	cpu0 := cpuSeconds()
	n := 0
	for b.Loop() {
		if err := Write(ctx, store, s); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.StopTimer()
	// The machine is shared: CPU seconds per write say more than wall time.
	b.ReportMetric((cpuSeconds()-cpu0)/float64(n), "cpu-s/op")
	infos, err := store.List(ctx, leaderboard.SiteKey(s.Board, s.Stamp)+"/")
	if err != nil {
		b.Fatal(err)
	}
	var total, data, samples int64
	for _, in := range infos {
		total += in.Size
		if strings.Contains(in.Key, "/data/run-") {
			data += in.Size
		}
	}
	for _, r := range s.Runs {
		samples += r.Summary.Samples
	}
	b.ReportMetric(float64(len(infos)), "files")
	b.ReportMetric(float64(total)/1e6, "site-MB")
	b.ReportMetric(float64(data)/float64(samples), "sample-bytes/sample")
}

// cpuSeconds is the process's user and system CPU time so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
