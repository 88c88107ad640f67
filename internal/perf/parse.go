// Package perf is the registry of the figures docs/PERFORMANCE.md quotes and
// the runner behind `benchline bench`: it runs each figure's command, reads the
// metric from its output and compares it with the figure's goal.
package perf

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Result is one benchmark line of `go test -bench` output.
type Result struct {
	Name    string             // "BenchmarkWrite" or "BenchmarkReadRange/page=64KiB", without the -GOMAXPROCS suffix
	Procs   int                // the -N suffix; 1 when absent
	N       int                // iterations
	Metrics map[string]float64 // unit → value: ns/op, MB/s, B/op, allocs/op and every b.ReportMetric unit
}

// ParseLine parses one benchmark result line. It keeps every value/unit pair,
// custom units included (golang.org/x/tools/benchmark/parse keeps only ns/op,
// MB/s, B/op and allocs/op, and the figures here are mostly b.ReportMetric units).
// ok is false for any other line.
func ParseLine(line string) (r Result, ok bool) {
	f := strings.Fields(line)
	if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
		return Result{}, false
	}
	n, err := strconv.Atoi(f[1])
	if err != nil || n <= 0 {
		return Result{}, false
	}
	r = Result{Name: f[0], Procs: 1, N: n, Metrics: map[string]float64{}}
	if i := strings.LastIndexByte(f[0], '-'); i > 0 {
		if p, err := strconv.Atoi(f[0][i+1:]); err == nil && p > 0 {
			r.Name, r.Procs = f[0][:i], p
		}
	}
	for i := 2; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return Result{}, false
		}
		r.Metrics[f[i+1]] = v
	}
	return r, true
}

// ParseOutput returns the benchmark lines of go test output, in order.
func ParseOutput(rd io.Reader) ([]Result, error) {
	var out []Result
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		if r, ok := ParseLine(sc.Text()); ok {
			out = append(out, r)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("perf: reading benchmark output: %w", err)
	}
	return out, nil
}

// Metric returns the median of unit over the results named name (several with
// -count N). ok is false when no result of that name reports that unit.
func Metric(results []Result, name, unit string) (v float64, ok bool) {
	var vs []float64
	for _, r := range results {
		if r.Name != name {
			continue
		}
		if x, has := r.Metrics[unit]; has {
			vs = append(vs, x)
		}
	}
	if len(vs) == 0 {
		return 0, false
	}
	return median(vs), true
}

func median(vs []float64) float64 {
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
