package reporteval

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/sandbox"
)

// BenchmarkSections splits the 100 bundled reports (2.7 MB) per
// iteration, reporting reports/s and MB/s of report text, and reports per
// second of this process's CPU time (steadier than the wall-clock rates on
// a shared machine). Run with
//
//	go test -run '^$' -bench . -cpu 1 ./scorers/reporteval
func BenchmarkSections(b *testing.B) {
	reps := loadReports(b)
	var size int64
	for _, r := range reps {
		size += int64(len(r.Report))
	}
	b.SetBytes(size)
	b.ReportAllocs()
	cpu0 := sandbox.ProcessCPU()
	for b.Loop() {
		for _, r := range reps {
			Sections(r.Report)
		}
	}
	reportRates(b, len(reps), cpu0)
}

// BenchmarkScoreSectionsLines runs the command's path on the 100 bundled
// reports as {"id", "report"} lines: JSON decoding, splitting, encoding.
func BenchmarkScoreSectionsLines(b *testing.B) {
	reps := loadReports(b)
	in := commandInput(b, reps)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	cpu0 := sandbox.ProcessCPU()
	for b.Loop() {
		if err := ScoreSectionsLines(context.Background(), bytes.NewReader(in), io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	reportRates(b, len(reps), cpu0)
}

// reportRates reports reports per wall-clock second and per second of
// process CPU time since cpu0 (garbage collection included).
func reportRates(b *testing.B, perOp int, cpu0 time.Duration) {
	n := float64(perOp * b.N)
	b.ReportMetric(n/b.Elapsed().Seconds(), "reports/s")
	b.ReportMetric(n/(sandbox.ProcessCPU()-cpu0).Seconds(), "reports/cpu-s")
}
