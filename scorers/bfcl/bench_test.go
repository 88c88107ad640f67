package bfcl

import (
	"bytes"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	casesOnce, linesOnce sync.Once
	benchCases           []confCase
	benchLines           []byte
)

func loadBenchCases(b *testing.B) {
	b.Helper()
	sharedBFCLDir(b) // skips when the data is absent
	casesOnce.Do(func() { benchCases = allCases(b) })
}

// loadBenchLines renders the cases as input lines. It does not keep the
// decoded cases alive (unless BenchmarkCheck ran in the same process), so
// the garbage collector sees a heap like the command's.
func loadBenchLines(b *testing.B) {
	b.Helper()
	sharedBFCLDir(b)
	linesOnce.Do(func() {
		cases := benchCases
		if cases == nil {
			cases = allCases(b)
		}
		var buf bytes.Buffer
		for _, c := range cases {
			line, err := caseLine(c)
			if err != nil {
				b.Fatal(err)
			}
			buf.Write(line)
		}
		benchLines = buf.Bytes()
	})
	runtime.GC()
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
	cpu0 := cpuSeconds()
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
	// Checks per second of process CPU time: stable on a shared machine,
	// where wall-clock rates depend on what else is running.
	b.ReportMetric(float64(n)/(cpuSeconds()-cpu0), "checks/cpu-s")
	b.ReportMetric(float64(len(benchCases)), "cases")
}

// cpuSeconds is the user+system CPU time of the process so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// BenchmarkScoreLines measures the `benchline score bfcl-ast` path on the
// same cases: JSON decoding of each line (functions, ground truth and
// model output), checking and writing the result.
//
//	go test -run '^$' -bench 'ScoreLines$' -cpu 1 ./scorers/bfcl
func BenchmarkScoreLines(b *testing.B) {
	loadBenchLines(b)
	lines := bytes.Count(benchLines, []byte("\n"))
	b.SetBytes(int64(len(benchLines)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuSeconds()
	n := 0
	for b.Loop() {
		if err := ScoreLines(bytes.NewReader(benchLines), io.Discard); err != nil {
			b.Fatal(err)
		}
		n += lines
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "checks/s")
	b.ReportMetric(float64(n)/(cpuSeconds()-cpu0), "checks/cpu-s")
}

// BenchmarkCheckLocality runs BenchmarkCheck's loop over the same cases in
// three orders, to show how much of a check's cost is memory access: in
// file order (each item's ground truth and corruptions are adjacent, so its
// functions and answers stay in cache, as in BenchmarkCheck), shuffled
// (every check starts cold), and every eighth case eight times in a row
// (all data hot; the case mix is a sample of the same cases).
//
//	go test -run '^$' -bench 'CheckLocality' -cpu 1 ./scorers/bfcl
func BenchmarkCheckLocality(b *testing.B) {
	loadBenchCases(b)
	shuffled := append([]confCase(nil), benchCases...)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	repeated := make([]confCase, 0, len(benchCases))
	for i := 0; i < len(benchCases); i += 8 {
		for range 8 {
			repeated = append(repeated, benchCases[i])
		}
	}
	checkers := [2]Checker{{}, {UnderscoreToDot: true}}
	for _, order := range []struct {
		name  string
		cases []confCase
	}{{"file", benchCases}, {"shuffled", shuffled}, {"repeat8", repeated}} {
		b.Run("order="+order.name, func(b *testing.B) {
			cpu0 := cpuSeconds()
			n := 0
			for b.Loop() {
				for i := range order.cases {
					c := &order.cases[i]
					u := 0
					if c.UnderscoreToDot {
						u = 1
					}
					checkers[u].Check(c.Item.Lang, c.Item.Category, c.Item.Funcs, c.Output, c.Item.Answers)
				}
				n += len(order.cases)
			}
			b.ReportMetric(float64(n)/(cpuSeconds()-cpu0), "checks/cpu-s")
		})
	}
}
