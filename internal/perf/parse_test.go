package perf

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestParseLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		line string
		want Result
		ok   bool
	}{
		{"standard units", "BenchmarkWrite-2   27   43961179 ns/op   6.89 MB/s   2274738 rows/s   1142916 B/op   1195 allocs/op",
			Result{Name: "BenchmarkWrite", Procs: 2, N: 27, Metrics: map[string]float64{"ns/op": 43961179, "MB/s": 6.89, "rows/s": 2274738, "B/op": 1142916, "allocs/op": 1195}}, true},
		{"sub-benchmark with = and custom unit", "BenchmarkReadRange/page=64KiB-2 \t 100\t 4200 ns/op\t 118000 rows/s\t 3.3e+06 file-bytes",
			Result{Name: "BenchmarkReadRange/page=64KiB", Procs: 2, N: 100, Metrics: map[string]float64{"ns/op": 4200, "rows/s": 118000, "file-bytes": 3.3e6}}, true},
		{"no procs suffix (-cpu 1)", "BenchmarkCheck 300 18000000 ns/op 2100000 checks/cpu-s 36659 cases",
			Result{Name: "BenchmarkCheck", Procs: 1, N: 300, Metrics: map[string]float64{"ns/op": 18000000, "checks/cpu-s": 2100000, "cases": 36659}}, true},
		{"dash in a sub-benchmark name", "BenchmarkZeroLatency/bare-go-openai-2 1000 265000 ns/op 3771 calls/s 19.9 cpu-µs/call",
			Result{Name: "BenchmarkZeroLatency/bare-go-openai", Procs: 2, N: 1000, Metrics: map[string]float64{"ns/op": 265000, "calls/s": 3771, "cpu-µs/call": 19.9}}, true},
		{"name ending in a word after a dash", "BenchmarkZeroLatency/gateway-no-cache 10 5 ns/op",
			Result{Name: "BenchmarkZeroLatency/gateway-no-cache", Procs: 1, N: 10, Metrics: map[string]float64{"ns/op": 5}}, true},
		{"percent unit", "BenchmarkThroughput200ms-2 1 2061000000 ns/op 310.5 calls/s 97.03 %-of-320",
			Result{Name: "BenchmarkThroughput200ms", Procs: 2, N: 1, Metrics: map[string]float64{"ns/op": 2061000000, "calls/s": 310.5, "%-of-320": 97.03}}, true},
		{"header line", "goos: linux", Result{}, false},
		{"PASS", "PASS", Result{}, false},
		{"ok line", "ok  \tgithub.com/benchline/benchline/internal/pq\t3.2s", Result{}, false},
		{"a name alone (the line -v prints before results)", "BenchmarkWrite", Result{}, false},
		{"log line starting with Benchmark", "BenchmarkWrite: setting up the store now", Result{}, false},
		{"odd field count", "BenchmarkWrite-2 27 43961179 ns/op 6.89", Result{}, false},
		{"non-numeric value", "BenchmarkWrite-2 27 fast ns/op", Result{}, false},
		{"zero iterations", "BenchmarkWrite-2 0 1 ns/op", Result{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ParseLine(tc.line)
			if ok != tc.ok || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ParseLine(%q) = %+v, %v; want %+v, %v", tc.line, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestParseOutputAndMetricMedian(t *testing.T) {
	out := `goos: linux
goarch: amd64
pkg: github.com/benchline/benchline/activities
cpu: AMD EPYC
BenchmarkCopyReleaseFile-2   	      10	 133000000 ns/op	 252.00 MB/s
BenchmarkCopyReleaseFile-2   	      10	 132000000 ns/op	 254.00 MB/s
BenchmarkCopyReleaseFile-2   	      10	 134000000 ns/op	 251.00 MB/s
BenchmarkSHA256Part-2        	      10	  22000000 ns/op	1525.00 MB/s
BenchmarkSHA256Part-2        	      10	  22400000 ns/op	1499.00 MB/s
PASS
ok  	github.com/benchline/benchline/activities	9.1s
`
	res, err := ParseOutput(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 5 {
		t.Fatalf("got %d results, want 5: %+v", len(res), res)
	}
	for _, tc := range []struct {
		name, unit string
		want       float64
		ok         bool
	}{
		{"BenchmarkCopyReleaseFile", "MB/s", 252, true},  // odd count: the middle one
		{"BenchmarkSHA256Part", "MB/s", 1512, true},      // even count: the mean of the middle two
		{"BenchmarkSHA256Part", "ns/op", 22200000, true}, // another unit of the same lines
		{"BenchmarkSHA256Part", "rows/s", 0, false},      // a unit the lines do not report
		{"BenchmarkCopyRelease", "MB/s", 0, false},       // names match exactly, not by prefix
		{"BenchmarkCopyReleaseFile-2", "MB/s", 0, false}, // the procs suffix is not part of the name
	} {
		got, ok := Metric(res, tc.name, tc.unit)
		if ok != tc.ok || math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("Metric(%s, %s) = %v, %v; want %v, %v", tc.name, tc.unit, got, ok, tc.want, tc.ok)
		}
	}
}

func TestGoalJudge(t *testing.T) {
	for _, tc := range []struct {
		name     string
		goal     Goal
		measured float64
		ratio    float64
		met, ok  bool
		str      string
	}{
		{"ratio goal met", Goal{AtLeast: true, Value: 0.5}, 0.55, 1.1, true, true, "≥ 0.5"},
		{"ratio goal missed", Goal{AtLeast: true, Value: 0.5}, 0.45, 0.9, false, true, "≥ 0.5"},
		{"exactly on the goal", Goal{AtLeast: true, Value: 0.8}, 0.8, 1, true, true, "≥ 0.8"},
		{"50x goal", Goal{AtLeast: true, Value: 50}, 38, 0.76, false, true, "≥ 50"},
		{"percent goal", Goal{AtLeast: true, Value: 95}, 97, 97.0 / 95, true, true, "≥ 95"},
		{"lower is better, met", Goal{Value: 512}, 177, 512.0 / 177, true, true, "≤ 512"},
		{"lower is better, missed", Goal{Value: 512}, 1024, 0.5, false, true, "≤ 512"},
		{"lower is better, zero measured", Goal{Value: 512}, 0, 0, false, false, "≤ 512"},
		{"no goal", Goal{}, 123, 0, false, false, "–"},
		{"NaN measured", Goal{AtLeast: true, Value: 1}, math.NaN(), 0, false, false, "≥ 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ratio, met, ok := tc.goal.Judge(tc.measured)
			if ok != tc.ok || met != tc.met || math.Abs(ratio-tc.ratio) > 1e-9 {
				t.Errorf("Judge(%v) = %v, %v, %v; want %v, %v, %v", tc.measured, ratio, met, ok, tc.ratio, tc.met, tc.ok)
			}
			if s := tc.goal.String(); s != tc.str {
				t.Errorf("String() = %q, want %q", s, tc.str)
			}
		})
	}
}

func TestFormatValue(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0", 0.4731: "0.473", 1.234: "1.23", 12.34: "12.3", 123.4: "123", 2274738.4: "2,274,738", 1000: "1,000", -4500: "-4,500", 0.000123: "0.000123",
	} {
		if got := FormatValue(v); got != want {
			t.Errorf("FormatValue(%v) = %q, want %q", v, got, want)
		}
	}
}
