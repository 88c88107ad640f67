package stats

import (
	"math"
	"sort"
)

// order returns the indices of p sorted by ascending p (ties by index).
func order(p []float64) []int {
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(x, y int) bool { return p[idx[x]] < p[idx[y]] })
	return idx
}

// Holm returns Holm's step-down adjusted p-values, in p's order. With
// p_(1) ≤ … ≤ p_(m) sorted,
//
//	p̃_(i) = min(1, max_{j ≤ i} (m − j + 1) · p_(j))
//
// Rejecting where p̃ < α controls the family-wise error rate at α.
func Holm(p []float64) []float64 {
	m := len(p)
	out := make([]float64, m)
	running := 0.0
	for j, i := range order(p) {
		running = math.Max(running, math.Min(1, float64(m-j)*p[i]))
		out[i] = running
	}
	return out
}

// BenjaminiHochberg returns the Benjamini–Hochberg step-up adjusted
// p-values, in p's order. With p_(1) ≤ … ≤ p_(m) sorted,
//
//	p̃_(i) = min(1, min_{j ≥ i} m/j · p_(j))
//
// Rejecting where p̃ < α controls the false discovery rate at α (for
// independent or positively dependent tests).
func BenjaminiHochberg(p []float64) []float64 {
	m := len(p)
	out := make([]float64, m)
	idx := order(p)
	running := 1.0
	for j := m - 1; j >= 0; j-- {
		i := idx[j]
		running = math.Min(running, float64(m)/float64(j+1)*p[i])
		out[i] = running
	}
	return out
}
