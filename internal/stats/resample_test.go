package stats

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// grid returns n values cycling through vals with the given weights.
func grid(n int, vals []float64, weights []int) []float64 {
	var cycle []float64
	for i, v := range vals {
		for range weights[i] {
			cycle = append(cycle, v)
		}
	}
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = cycle[i%len(cycle)]
	}
	return xs
}

func meanSD(xs []float64) (float64, float64) {
	var m float64
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return m, math.Sqrt(ss / float64(len(xs)-1))
}

// TestCountMeansSameDistribution: the resample means drawn by counts
// have the distribution of those drawn by index: the same centre, spread
// and 2.5% and 97.5% quantiles (the interval's bounds), within what 20,000
// resamples of each can tell apart (the quantiles within 0.15 standard
// deviations of the mean's distribution, about five times their Monte
// Carlo error; the spread within 5%, five times its error).
func TestCountMeansSameDistribution(t *testing.T) {
	for _, tc := range []struct {
		name string
		xs   []float64
	}{
		{"binary p=0.5", grid(1000, []float64{0, 1}, []int{1, 1})},
		{"binary p=0.02", grid(2000, []float64{0, 1}, []int{49, 1})},
		{"binary p=0.9, n=64 (the smallest n for k=2)", grid(64, []float64{0, 1}, []int{1, 9})},
		{"a 5-point grid", grid(1500, []float64{0, 0.25, 0.5, 0.75, 1}, []int{1, 3, 5, 2, 4})},
		{"negative and repeated values", grid(900, []float64{-2, 0.1, 7}, []int{5, 1, 3})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const B = 20000
			got, ok := countMeans(tc.xs, B, rand.NewPCG(1, 2))
			if !ok {
				t.Fatal("countMeans did not apply")
			}
			want := indexMeans(tc.xs, B, rand.NewPCG(3, 4))
			gm, gsd := meanSD(got)
			wm, wsd := meanSD(want)
			if math.Abs(gm-wm) > 0.05*wsd || math.Abs(gsd/wsd-1) > 0.05 {
				t.Errorf("centre %v, spread %v by counts; %v, %v by index", gm, gsd, wm, wsd)
			}
			sort.Float64s(got)
			sort.Float64s(want)
			for _, q := range []float64{0.025, 0.5, 0.975} {
				if g, w := Quantile(got, q), Quantile(want, q); math.Abs(g-w) > 0.15*wsd {
					t.Errorf("quantile %v: %v by counts, %v by index (sd %v)", q, g, w, wsd)
				}
			}
		})
	}
}

func TestCountMeansApplies(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	continuous := make([]float64, 5000)
	for i := range continuous {
		continuous[i] = r.Float64()
	}
	for _, tc := range []struct {
		name string
		xs   []float64
		ok   bool
	}{
		{"binary, n=64", grid(64, []float64{0, 1}, []int{1, 1}), true},
		{"binary, n=63: index draws are as cheap", grid(63, []float64{0, 1}, []int{1, 1}), false},
		{"continuous", continuous, false},
		{"a NaN", append(grid(100, []float64{0, 1}, []int{1, 1}), math.NaN()), false},
		{"all equal", grid(100, []float64{0.7}, []int{1}), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, ok := countMeans(tc.xs, 10, rand.NewPCG(1, 1)); ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
		})
	}
}

// TestBootstrapMeanPaths: by counts, the interval depends on xs only as a
// multiset and is exact where there is nothing to resample; by index
// (continuous values) it is the index draw of the seeded generator.
func TestBootstrapMeanPaths(t *testing.T) {
	xs := grid(1000, []float64{0, 0.5, 1}, []int{2, 1, 3})
	shuffled := append([]float64(nil), xs...)
	rand.New(rand.NewPCG(5, 5)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	if a, b := BootstrapMean(xs, nil, Bootstrap{}), BootstrapMean(shuffled, nil, Bootstrap{}); a.CILow != b.CILow || a.CIHigh != b.CIHigh {
		t.Errorf("order changed the interval: %+v, %+v", a, b)
	}
	if s := BootstrapMean(grid(500, []float64{0.7}, []int{1}), nil, Bootstrap{}); s.CILow != 0.7 || s.CIHigh != 0.7 {
		t.Errorf("all 0.7: interval [%v, %v]", s.CILow, s.CIHigh)
	}
	r := rand.New(rand.NewPCG(9, 9))
	cont := make([]float64, 300)
	for i := range cont {
		cont[i] = r.NormFloat64()
	}
	s := BootstrapMean(cont, nil, Bootstrap{Resamples: 500, Seed: 3})
	means := indexMeans(cont, 500, rand.NewPCG(3, 0x62656e63686c696e))
	sort.Float64s(means)
	if s.CILow != Quantile(means, 0.025) || s.CIHigh != Quantile(means, 0.975) {
		t.Errorf("continuous values: [%v, %v], want the index bootstrap's [%v, %v]", s.CILow, s.CIHigh, Quantile(means, 0.025), Quantile(means, 0.975))
	}
}

// TestPairedBootstrapByCounts: a paired difference of pass/fail scores
// (values −1, 0, 1) at a million samples is resampled by counts, and its
// interval agrees with the normal one (mean ± 1.96·s/√n) to within a few
// Monte Carlo errors.
func TestPairedBootstrapByCounts(t *testing.T) {
	const n = 1_000_000
	a, b := make([]float64, n), make([]float64, n)
	r := rand.New(rand.NewPCG(2, 2))
	for i := range a {
		if r.Float64() < 0.7 {
			a[i] = 1
		}
		if r.Float64() < 0.69 {
			b[i] = 1
		}
	}
	got := PairedBootstrap(a, b, nil, Bootstrap{})
	d := make([]float64, n)
	for i := range d {
		d[i] = a[i] - b[i]
	}
	se := StdErr(d)
	if math.Abs(got.StdErr/se-1) > 0.1 {
		t.Errorf("replicates' sd %v, want about s/√n = %v", got.StdErr, se)
	}
	if lo := got.Diff - 1.96*se; math.Abs(got.CILow-lo) > 0.2*se {
		t.Errorf("CI low %v, normal %v", got.CILow, lo)
	}
	if got.P > 0.01 {
		t.Errorf("p = %v for a 0.01 difference at n = 1e6", got.P)
	}
}

func BenchmarkPairedBootstrapBinaryMillion(b *testing.B) {
	const n = 1_000_000
	x, y := grid(n, []float64{0, 1}, []int{3, 7}), grid(n, []float64{1, 0, 1}, []int{1, 1, 1})
	for b.Loop() {
		PairedBootstrap(x, y, nil, Bootstrap{})
	}
}
