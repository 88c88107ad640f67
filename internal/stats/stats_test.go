package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestMcNemarExact(t *testing.T) {
	tests := []struct {
		name string
		b, c int
		want float64
	}{
		// 2·P(X ≤ 2 | n=10, ½) = 2·(1 + 10 + 45)/1024 = 112/1024.
		{"b=8 c=2", 8, 2, 0.109375},
		{"symmetric in b and c", 2, 8, 0.109375},
		// 2·P(X ≤ 1 | n=10) = 2·(1 + 10)/1024 = 22/1024.
		{"b=9 c=1", 9, 1, 0.021484375},
		// 2·P(X ≤ 0 | n=6) = 2/64.
		{"b=6 c=0", 6, 0, 0.03125},
		// 2·P(X ≤ 5 | n=10) = 2·638/1024 > 1: capped.
		{"b=c=5", 5, 5, 1},
		{"no discordant pairs", 0, 0, 1},
		// 2·P(X ≤ 0 | n=1) = 2·½ = 1.
		{"one discordant pair", 1, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := McNemarExact(tc.b, tc.c); !near(got, tc.want, 1e-12) {
				t.Fatalf("McNemarExact(%d, %d) = %v, want %v", tc.b, tc.c, got, tc.want)
			}
		})
	}
	// Large n: the normal approximation with continuity correction,
	// z = (|b−c| − 1)/√(b+c), is close to the exact test.
	b, c := 5200, 4800
	z := (math.Abs(float64(b-c)) - 1) / math.Sqrt(float64(b+c))
	if got, want := McNemarExact(b, c), 2*(1-NormalCDF(z)); !near(got, want, 2e-4) {
		t.Fatalf("McNemarExact(%d, %d) = %v, normal approximation %v", b, c, got, want)
	}
}

func TestMcNemarPaired(t *testing.T) {
	a := []float64{1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 0, 1}
	b := []float64{0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0}
	// a passes where b fails: 8 (b); the reverse: 1 (index 4).
	m := McNemarPaired(a, b)
	if m.N != 12 || m.B != 8 || m.C != 1 {
		t.Fatalf("%+v", m)
	}
	// 2·P(X ≤ 1 | n=9) = 2·(1 + 9)/512 = 20/512.
	if !near(m.P, 20.0/512, 1e-12) {
		t.Fatalf("p = %v", m.P)
	}
	if !Binary(a) || Binary([]float64{0, 0.5, 1}) {
		t.Fatal("Binary")
	}
}

func TestHolm(t *testing.T) {
	tests := []struct {
		name    string
		p, want []float64
	}{
		// Sorted 0.01, 0.03, 0.04: 3·0.01 = 0.03; 2·0.03 = 0.06;
		// 1·0.04 = 0.04, raised to the running max 0.06.
		{"brief", []float64{0.01, 0.04, 0.03}, []float64{0.03, 0.06, 0.06}},
		// Sorted 0.001, 0.02, 0.04, 0.5: ×4, ×3, ×2, ×1 = 0.004, 0.06, 0.08, 0.5.
		{"four", []float64{0.04, 0.001, 0.02, 0.5}, []float64{0.08, 0.004, 0.06, 0.5}},
		// 2·0.7 = 1.4, capped at 1; 1·0.9 = 0.9, raised to the running max 1.
		{"capped", []float64{0.7, 0.9}, []float64{1, 1}},
		{"ties", []float64{0.02, 0.02}, []float64{0.04, 0.04}},
		{"one", []float64{0.03}, []float64{0.03}},
		{"none", nil, []float64{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Holm(tc.p)
			if len(got) != len(tc.want) {
				t.Fatalf("%v", got)
			}
			for i := range got {
				if !near(got[i], tc.want[i], 1e-12) {
					t.Fatalf("Holm(%v) = %v, want %v", tc.p, got, tc.want)
				}
			}
		})
	}
}

func TestBenjaminiHochberg(t *testing.T) {
	tests := []struct {
		name    string
		p, want []float64
	}{
		// Sorted 0.01, 0.03, 0.04: 3/1·0.01 = 0.03; 3/2·0.03 = 0.045;
		// 3/3·0.04 = 0.04; step-up minima from the top: 0.04, 0.04, 0.03.
		{"three", []float64{0.01, 0.04, 0.03}, []float64{0.03, 0.04, 0.04}},
		// 5·0.005 = 0.025, 5/2·0.01 = 0.025, 5/3·0.03 = 0.05,
		// 5/4·0.04 = 0.05, 5/5·0.2 = 0.2.
		{"five", []float64{0.2, 0.005, 0.04, 0.01, 0.03}, []float64{0.2, 0.025, 0.05, 0.025, 0.05}},
		{"capped", []float64{0.9, 0.95}, []float64{0.95, 0.95}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := BenjaminiHochberg(tc.p)
			for i := range got {
				if !near(got[i], tc.want[i], 1e-12) {
					t.Fatalf("BH(%v) = %v, want %v", tc.p, got, tc.want)
				}
			}
		})
	}
}

func TestClusteredSE(t *testing.T) {
	tests := []struct {
		name     string
		xs       []float64
		clusters []string
		mean, se float64
		g        int
	}{
		// Clusters A{1,1} B{0,0} C{1,0} D{1,0}: n = 8, x̄ = 0.5. Cluster
		// sums of residuals: A +1, B −1, C 0, D 0; Σ = 2.
		// SE² = 4/3 · 2 / 64 = 1/24.
		{"four clusters", []float64{1, 1, 0, 0, 1, 0, 1, 0}, []string{"A", "A", "B", "B", "C", "C", "D", "D"}, 0.5, math.Sqrt(1.0 / 24), 4},
		// Unequal sizes, keys not contiguous: A{1,1,1} B{0} C{1,0} D{0,0}:
		// x̄ = 4/8; residual sums A +1.5, B −0.5, C 0, D −1; Σ² = 3.5.
		// SE² = 4/3 · 3.5 / 64 = 7/96.
		{"unequal", []float64{1, 0, 1, 1, 0, 1, 0, 0}, []string{"A", "B", "A", "C", "C", "A", "D", "D"}, 0.5, math.Sqrt(7.0 / 96), 4},
		// Singletons (nil keys): G/(G−1)·Σe²/n² = Σe²/(n(n−1)) = s²/n.
		// xs 0,1,1,1: x̄ = 3/4, Σe² = 9/16 + 3/16 = 3/4, s²/n = (3/4)/12 = 1/16.
		{"no clusters", []float64{0, 1, 1, 1}, nil, 0.75, 0.25, 4},
		// Empty keys are singletons too.
		{"empty keys", []float64{0, 1, 1, 1}, []string{"", "", "", ""}, 0.75, 0.25, 4},
		{"one cluster", []float64{0, 1}, []string{"x", "x"}, 0.5, 0, 1},
		{"empty", nil, nil, 0, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, se, g := ClusteredSE(tc.xs, tc.clusters)
			if !near(m, tc.mean, 1e-12) || !near(se, tc.se, 1e-12) || g != tc.g {
				t.Fatalf("ClusteredSE = %v, %v, %d; want %v, %v, %d", m, se, g, tc.mean, tc.se, tc.g)
			}
		})
	}
	// Singleton clusters equal the ordinary standard error on any data.
	r := rand.New(rand.NewPCG(3, 4))
	xs := make([]float64, 500)
	for i := range xs {
		xs[i] = r.Float64()
	}
	if _, se, _ := ClusteredSE(xs, nil); !near(se, StdErr(xs), 1e-12) {
		t.Fatalf("singletons %v, StdErr %v", se, StdErr(xs))
	}
}

func TestRankRanges(t *testing.T) {
	tests := []struct {
		name   string
		n      int
		orders []Order
		want   []Range
	}{
		// 0 beats 1 and 2; 1 and 2 are not told apart.
		{"clear winner", 3, []Order{{0, 1}, {0, 2}}, []Range{{1, 1}, {2, 3}, {2, 3}}},
		// 0 > 1 and 1 > 2 but 0 vs 2 not significant: 0 is 1–2 (only 1 is
		// surely below it), 1 is 2–2, 2 is 2–3.
		{"chain", 3, []Order{{0, 1}, {1, 2}}, []Range{{1, 2}, {2, 2}, {2, 3}}},
		{"nothing significant", 3, nil, []Range{{1, 3}, {1, 3}, {1, 3}}},
		{"total order", 3, []Order{{2, 1}, {2, 0}, {1, 0}}, []Range{{3, 3}, {2, 2}, {1, 1}}},
		{"repeated ordering counts once", 2, []Order{{1, 0}, {1, 0}}, []Range{{2, 2}, {1, 1}}},
		{"one system", 1, nil, []Range{{1, 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := RankRanges(tc.n, tc.orders)
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("RankRanges = %v, want %v", got, tc.want)
				}
			}
		})
	}
}
