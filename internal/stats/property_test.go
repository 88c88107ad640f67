package stats

import (
	"math/rand/v2"
	"testing"
)

// TestAdjustProperties checks, on seeded random p-values, what makes an
// adjustment an adjustment: p ≤ p̃ ≤ 1, the order of the p-values kept,
// Holm never below BH (Holm controls the stronger error rate), and
// Holm's p̃ at most m·p (Bonferroni).
func TestAdjustProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 500 {
		m := 1 + r.IntN(40)
		p := make([]float64, m)
		for i := range p {
			p[i] = r.Float64() * r.Float64() // many small ones
			if r.IntN(10) == 0 && i > 0 {
				p[i] = p[i-1] // ties
			}
		}
		holm, bh := Holm(p), BenjaminiHochberg(p)
		for i := range p {
			if holm[i] < p[i] || bh[i] < p[i] || holm[i] > 1 || bh[i] > 1 || holm[i] < bh[i]-1e-15 || holm[i] > float64(m)*p[i]+1e-15 {
				t.Fatalf("trial %d: p %v\nholm %v\nbh %v", trial, p, holm, bh)
			}
			for j := range p {
				if p[i] < p[j] && (holm[i] > holm[j] || bh[i] > bh[j]) {
					t.Fatalf("trial %d: order broken at %d, %d: p %v holm %v bh %v", trial, i, j, p, holm, bh)
				}
			}
		}
	}
}

// TestRankRangeProperties: with significant orderings that agree with
// some order of the systems' means (as paired comparisons on the same
// samples do: A is above B only when A's mean is higher), every range is
// within 1..n with low ≤ high, and a system above another has a best rank
// better than the other's worst: the systems better than A and those
// worse than B are disjoint and include neither, so
// 1 + #better(A) ≤ n − 1 − #worse(B).
func TestRankRangeProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 300 {
		n := 1 + r.IntN(12)
		rank := r.Perm(n) // rank[i] < rank[j]: i's mean is higher
		var orders []Order
		for i := range n {
			for j := i + 1; j < n; j++ {
				if r.IntN(2) == 0 {
					continue // not significant
				}
				if rank[i] < rank[j] {
					orders = append(orders, Order{i, j})
				} else {
					orders = append(orders, Order{j, i})
				}
			}
		}
		rr := RankRanges(n, orders)
		for i, x := range rr {
			if x.Low < 1 || x.High > n || x.Low > x.High {
				t.Fatalf("trial %d: system %d range %v", trial, i, x)
			}
		}
		for _, o := range orders {
			if b, w := rr[o.Better], rr[o.Worse]; b.Low >= w.High {
				t.Fatalf("trial %d: %d above %d but ranges %v %v", trial, o.Better, o.Worse, b, w)
			}
		}
	}
}
