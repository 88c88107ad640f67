package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func TestPairedBootstrapHand(t *testing.T) {
	tests := []struct {
		name            string
		a, b            []float64
		clusters        []string
		diff, lo, hi, p float64
		tolCI, tolP     float64
	}{
		// d = a − b = 0.25 everywhere: every replicate is 0.25, so the
		// interval is [0.25, 0.25] and no replicate is as far from 0.25 as
		// 0.25 is from 0: p = 1/(B+1).
		{"constant difference", []float64{1, 1, 1}, []float64{0.75, 0.75, 0.75}, nil, 0.25, 0.25, 0.25, 1.0 / 2001, 0, 1e-12},
		// d = {0, 1}: a replicate's mean is 0, ½ or 1 with probability ¼,
		// ½, ¼, so the 2.5% and 97.5% quantiles are 0 and 1, and
		// |d̄* − ½| ≥ ½ has probability ½: p → ½.
		{"two samples", []float64{1, 1}, []float64{1, 0}, nil, 0.5, 0, 1, 0.5, 0, 0.03},
		// The same by clusters: clusters {0, 0} and {1, 1} behave like the
		// two samples above, whatever the samples within.
		{"two clusters", []float64{1, 1, 1, 1}, []float64{1, 1, 0, 0}, []string{"x", "x", "y", "y"}, 0.5, 0, 1, 0.5, 0, 0.03},
		{"no difference", []float64{1, 0, 1}, []float64{1, 0, 1}, nil, 0, 0, 0, 1, 0, 0},
		{"no samples", nil, nil, nil, 0, 0, 0, 1, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := PairedBootstrap(tc.a, tc.b, tc.clusters, Bootstrap{})
			if !near(got.Diff, tc.diff, 1e-12) || !near(got.CILow, tc.lo, tc.tolCI+1e-12) || !near(got.CIHigh, tc.hi, tc.tolCI+1e-12) || !near(got.P, tc.p, tc.tolP) {
				t.Fatalf("%+v; want diff %v CI [%v, %v] p %v", got, tc.diff, tc.lo, tc.hi, tc.p)
			}
		})
	}
}

// correlated returns n paired scores where b is a copy of a worse by
// shift plus noise, and g clusters of n/g samples sharing a cluster effect.
func correlated(n, g int, shift float64, seed uint64) (a, b []float64, clusters []string) {
	r := rand.New(rand.NewPCG(seed, 7))
	a, b, clusters = make([]float64, n), make([]float64, n), make([]string, n)
	effect := make([]float64, g)
	for j := range effect {
		effect[j] = r.NormFloat64() * 0.1
	}
	for i := range a {
		j := i % g
		a[i] = r.Float64()
		b[i] = a[i] - shift + effect[j] + r.NormFloat64()*0.2
		clusters[i] = fmt.Sprint("c", j)
	}
	return a, b, clusters
}

// TestPairedBootstrapAnalytic checks the bootstrap against its analytic
// counterpart on a larger seeded sample: the paired z-test (standard error
// s_d/√n, interval d̄ ± 1.96·SE, p = 2Φ(−|d̄|/SE)), and with clusters the
// CR1 standard error of d.
func TestPairedBootstrapAnalytic(t *testing.T) {
	diffs := func(a, b []float64) []float64 {
		d := make([]float64, len(a))
		for i := range d {
			d[i] = a[i] - b[i]
		}
		return d
	}
	t.Run("samples", func(t *testing.T) {
		// Moved so that d̄ is 0.007, about two standard errors (0.0035):
		// p is near 0.05, well above the bootstrap's floor 1/(B+1).
		a, b, _ := correlated(4000, 4000, 0, 12)
		move := 0.007 - mean(diffs(a, b))
		for i := range b {
			b[i] -= move
		}
		d := diffs(a, b)
		got := PairedBootstrap(a, b, nil, Bootstrap{Resamples: 4000})
		se := StdErr(d)
		z := math.Abs(got.Diff) / se
		if !near(got.StdErr, se, 0.05*se) {
			t.Errorf("bootstrap SE %v, analytic %v", got.StdErr, se)
		}
		if !near(got.CILow, got.Diff-1.96*se, 0.15*se) || !near(got.CIHigh, got.Diff+1.96*se, 0.15*se) {
			t.Errorf("CI [%v, %v], analytic [%v, %v]", got.CILow, got.CIHigh, got.Diff-1.96*se, got.Diff+1.96*se)
		}
		if p := 2 * (1 - NormalCDF(z)); !near(got.P, p, 0.2*p) || p < 0.005 || p > 0.5 {
			t.Errorf("p %v, analytic %v (z %v)", got.P, p, z)
		}
		t.Logf("diff %.5f SE %.5f (analytic %.5f) p %.4f (analytic %.4f)", got.Diff, got.StdErr, se, got.P, 2*(1-NormalCDF(z)))
	})
	a, b, clusters := correlated(4000, 200, 0.02, 11)
	d := diffs(a, b)
	t.Run("clusters", func(t *testing.T) {
		got := PairedBootstrap(a, b, clusters, Bootstrap{Resamples: 4000})
		_, se, g := ClusteredSE(d, clusters)
		if g != 200 || got.Clusters != 200 {
			t.Fatalf("clusters %d %d", g, got.Clusters)
		}
		// The cluster effect makes the clustered SE much larger than the
		// naive one; the cluster bootstrap must follow it.
		if se < 2*StdErr(d) {
			t.Fatalf("test data: clustered SE %v not above naive %v", se, StdErr(d))
		}
		if !near(got.StdErr, se, 0.07*se) {
			t.Errorf("cluster bootstrap SE %v, CR1 %v", got.StdErr, se)
		}
		z := math.Abs(got.Diff) / se
		if p := 2 * (1 - NormalCDF(z)); !near(got.P, p, 0.2*p) || p < 0.005 || p > 0.5 {
			t.Errorf("p %v, analytic %v (z %v)", got.P, p, z)
		}
		t.Logf("diff %.5f SE %.5f (CR1 %.5f) p %.4f (analytic %.4f)", got.Diff, got.StdErr, se, got.P, 2*(1-NormalCDF(z)))
	})
	t.Run("mean", func(t *testing.T) {
		got := BootstrapMean(a, clusters, Bootstrap{})
		m, se, _ := ClusteredSE(a, clusters)
		if got.Mean != m || !near(got.StdErr, se, 0.1*se) || !near(got.CIHigh-got.CILow, 2*1.96*se, 0.2*se) {
			t.Errorf("%+v; CR1 mean %v SE %v", got, m, se)
		}
	})
}

func TestBootstrapSeeded(t *testing.T) {
	a, b, cl := correlated(300, 30, 0.02, 5)
	x, y := PairedBootstrap(a, b, cl, Bootstrap{}), PairedBootstrap(a, b, cl, Bootstrap{})
	z := PairedBootstrap(a, b, cl, Bootstrap{Seed: 99})
	if x != y || x.CILow == z.CILow {
		t.Fatalf("seeding: %+v %+v %+v", x, y, z)
	}
}

// BenchmarkPairedBootstrap is the paired bootstrap of 10,000 paired
// samples with 2,000 resamples (docs/PERFORMANCE.md).
func BenchmarkPairedBootstrap(b *testing.B) {
	x, y, cl := correlated(10000, 1000, 0.02, 1)
	b.Run("samples", func(b *testing.B) {
		for b.Loop() {
			PairedBootstrap(x, y, nil, Bootstrap{Resamples: 2000})
		}
	})
	b.Run("clusters", func(b *testing.B) {
		for b.Loop() {
			PairedBootstrap(x, y, cl, Bootstrap{Resamples: 2000})
		}
	})
}
