package aggregate

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/benchline/benchline/internal/stats"
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

// TestMultinomialMeansSameDistribution: the resample means drawn by counts
// have the distribution of those drawn by index: the same centre, spread
// and 2.5% and 97.5% quantiles (the interval's bounds), within what 20,000
// resamples of each can tell apart (the quantiles within 0.15 standard
// deviations of the mean's distribution, about five times their Monte
// Carlo error; the spread within 5%, five times its error).
func TestMultinomialMeansSameDistribution(t *testing.T) {
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
			got, ok := multinomialMeans(tc.xs, B, rand.New(rand.NewPCG(1, 2)))
			if !ok {
				t.Fatal("multinomialMeans did not apply")
			}
			want := indexMeans(tc.xs, B, rand.New(rand.NewPCG(3, 4)))
			gm, gsd := meanSD(got)
			wm, wsd := meanSD(want)
			if math.Abs(gm-wm) > 0.05*wsd || math.Abs(gsd/wsd-1) > 0.05 {
				t.Errorf("centre %v, spread %v by counts; %v, %v by index", gm, gsd, wm, wsd)
			}
			sort.Float64s(got)
			sort.Float64s(want)
			for _, q := range []float64{0.025, 0.5, 0.975} {
				if g, w := stats.Quantile(got, q), stats.Quantile(want, q); math.Abs(g-w) > 0.15*wsd {
					t.Errorf("quantile %v: %v by counts, %v by index (sd %v)", q, g, w, wsd)
				}
			}
		})
	}
}

func TestMultinomialMeansApplies(t *testing.T) {
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
			if _, ok := multinomialMeans(tc.xs, 10, rand.New(rand.NewPCG(1, 1))); ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
		})
	}
}

// TestStatBootstrapPaths: by counts, the interval depends on xs only as a
// multiset and is exact where there is nothing to resample; by index
// (continuous values) it is the draw it always was.
func TestStatBootstrapPaths(t *testing.T) {
	xs := grid(1000, []float64{0, 0.5, 1}, []int{2, 1, 3})
	shuffled := append([]float64(nil), xs...)
	rand.New(rand.NewPCG(5, 5)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	// (The mean and standard error are sums, so their last bit may follow
	// the order; the interval does not.)
	if a, b := Stat("m", xs, Options{}), Stat("m", shuffled, Options{}); a.CILow != b.CILow || a.CIHigh != b.CIHigh {
		t.Errorf("order changed the interval: %+v, %+v", a, b)
	}
	if s := Stat("m", grid(500, []float64{0.7}, []int{1}), Options{}); s.CILow != 0.7 || s.CIHigh != 0.7 {
		t.Errorf("all 0.7: interval [%v, %v]", s.CILow, s.CIHigh)
	}
	r := rand.New(rand.NewPCG(9, 9))
	cont := make([]float64, 300)
	for i := range cont {
		cont[i] = r.NormFloat64()
	}
	s := Stat("m", cont, Options{Resamples: 500, Seed: 3})
	means := indexMeans(cont, 500, rand.New(rand.NewPCG(3, uint64(len(cont)))))
	sort.Float64s(means)
	if s.CILow != stats.Quantile(means, 0.025) || s.CIHigh != stats.Quantile(means, 0.975) {
		t.Errorf("continuous values: [%v, %v], want the index bootstrap's [%v, %v]", s.CILow, s.CIHigh, stats.Quantile(means, 0.025), stats.Quantile(means, 0.975))
	}
}

func BenchmarkStat(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	cont := make([]float64, 10000)
	for i := range cont {
		cont[i] = r.Float64()
	}
	for _, bc := range []struct {
		name string
		xs   []float64
	}{
		{"binary-10000", grid(10000, []float64{0, 1}, []int{3, 7})},
		{"grid5-10000", grid(10000, []float64{0, 0.25, 0.5, 0.75, 1}, []int{1, 3, 5, 2, 4})},
		{"continuous-10000", cont},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				Stat("m", bc.xs, Options{})
			}
		})
	}
}
