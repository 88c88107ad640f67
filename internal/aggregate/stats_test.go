package aggregate

import (
	"math"
	"testing"
)

func TestStat(t *testing.T) {
	ones := make([]float64, 100)
	for i := range ones {
		ones[i] = 1
	}
	half := make([]float64, 1000)
	for i := range half {
		half[i] = float64(i % 2)
	}
	tests := []struct {
		name            string
		xs              []float64
		mean, se        float64
		lo, hi          float64 // bounds the interval must lie within / contain
		method          string
		containsMeanTol float64
	}{
		{"all correct", ones, 1, 0, 1, 1, "bootstrap", 0},
		{"half correct", half, 0.5, math.Sqrt(0.25*1000/999) / math.Sqrt(1000), 0.45, 0.55, "bootstrap", 0},
		{"single", []float64{0.3}, 0.3, 0, 0.3, 0.3, "bootstrap", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := Stat("m", tc.xs, Options{})
			if math.Abs(s.Mean-tc.mean) > 1e-12 || math.Abs(s.StdErr-tc.se) > 1e-9 || s.CIMethod != tc.method {
				t.Fatalf("%+v", s)
			}
			if s.CILow < tc.lo-1e-12 || s.CIHigh > tc.hi+1e-12 || s.CILow > s.Mean || s.CIHigh < s.Mean {
				t.Fatalf("interval [%v, %v] for mean %v, want within [%v, %v]", s.CILow, s.CIHigh, s.Mean, tc.lo, tc.hi)
			}
		})
	}
	// The bootstrap is seeded: same input, same interval; another seed, another.
	a, b := Stat("m", half, Options{}), Stat("m", half, Options{})
	c := Stat("m", half, Options{Seed: 99})
	if a != b || (a.CILow == c.CILow && a.CIHigh == c.CIHigh) {
		t.Fatalf("seeding: %+v %+v %+v", a, b, c)
	}
	// The bootstrap interval of a proportion is close to the normal one.
	if math.Abs((a.CIHigh-a.CILow)-2*1.96*a.StdErr) > 0.01 {
		t.Fatalf("bootstrap width %v vs normal %v", a.CIHigh-a.CILow, 2*1.96*a.StdErr)
	}
	// Large samples switch to the normal interval.
	big := make([]float64, 30000)
	for i := range big {
		big[i] = float64(i % 4 / 3)
	}
	if s := Stat("m", big, Options{}); s.CIMethod != "normal" || math.Abs(s.CIHigh-s.Mean-1.96*s.StdErr) > 1e-12 {
		t.Fatalf("%+v", s)
	}
	if s := Stat("m", nil, Options{}); s.N != 0 || s.Mean != 0 || s.CIMethod != "none" {
		t.Fatalf("%+v", s)
	}
}

func TestPercentiles(t *testing.T) {
	xs := make([]float64, 101)
	for i := range xs {
		xs[100-i] = float64(i)
	}
	p50, p90, p99 := Percentiles(xs)
	if p50 != 50 || p90 != 90 || p99 != 99 {
		t.Fatalf("%v %v %v", p50, p90, p99)
	}
}
