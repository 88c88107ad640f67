package bfcl

import (
	"bytes"
	"io"
	"sync"
	"testing"
)

var (
	benchOnce  sync.Once
	benchCases []confCase
	benchLines []byte
)

func loadBenchCases(b *testing.B) {
	b.Helper()
	sharedBFCLDir(b) // skips when the data is absent
	benchOnce.Do(func() {
		benchCases = allCases(b)
		var buf bytes.Buffer
		for _, c := range benchCases {
			line, err := caseLine(c)
			if err != nil {
				b.Fatal(err)
			}
			buf.Write(line)
		}
		benchLines = buf.Bytes()
	})
}

// BenchmarkCheck scores every conformance case (ground truth and
// corruptions of every AST and relevance item of the real BFCL v4 data)
// with pre-decoded inputs: the checker alone. Run single-core with
//
//	go test -run '^$' -bench . -cpu 1 ./scorers/bfcl
func BenchmarkCheck(b *testing.B) {
	loadBenchCases(b)
	checkers := [2]Checker{{}, {UnderscoreToDot: true}}
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for b.Loop() {
		for i := range benchCases {
			c := &benchCases[i]
			u := 0
			if c.UnderscoreToDot {
				u = 1
			}
			checkers[u].Check(c.Item.Lang, c.Item.Category, c.Item.Funcs, c.Output, c.Item.Answers)
		}
		n += len(benchCases)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "checks/s")
	b.ReportMetric(float64(len(benchCases)), "cases")
}

// BenchmarkScoreLines measures the `benchline score bfcl-ast` path on the
// same cases: JSON decoding of each line (functions, ground truth and
// model output), checking and writing the result.
func BenchmarkScoreLines(b *testing.B) {
	loadBenchCases(b)
	b.SetBytes(int64(len(benchLines)))
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for b.Loop() {
		if err := ScoreLines(bytes.NewReader(benchLines), io.Discard); err != nil {
			b.Fatal(err)
		}
		n += len(benchCases)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "checks/s")
}
