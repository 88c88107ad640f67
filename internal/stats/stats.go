// Package stats holds the statistics behind benchline's summaries and
// leaderboards: the clustered standard error of a mean, the (cluster)
// bootstrap of a mean and of a paired mean difference, the exact McNemar
// test, Holm and Benjamini–Hochberg adjusted p-values and rank ranges from
// significant pairwise orderings. It is pure: no I/O, and every random
// draw comes from a seeded generator, so the same input gives the same
// output. The formulas are in docs/statistics.md.
//
// Cluster keys: a nil clusters slice means every sample is its own
// cluster; so does an empty key ("" never joins two samples).
package stats

import (
	"math"
	"sort"
)

// Level is the confidence level of every interval: 95%.
const Level = 0.95

// groups sums xs by cluster. It returns each cluster's sum and size, in
// the order clusters are first seen. A nil clusters, or an empty key, makes
// a sample its own cluster.
func groups(xs []float64, clusters []string) (sums []float64, sizes []int) {
	if clusters == nil {
		sums = append([]float64(nil), xs...)
		sizes = make([]int, len(xs))
		for i := range sizes {
			sizes[i] = 1
		}
		return sums, sizes
	}
	index := make(map[string]int, len(xs))
	for i, x := range xs {
		k := clusters[i]
		g, ok := index[k]
		if !ok || k == "" {
			g = len(sums)
			if k != "" {
				index[k] = g
			}
			sums = append(sums, 0)
			sizes = append(sizes, 0)
		}
		sums[g] += x
		sizes[g]++
	}
	return sums, sizes
}

// Clusters counts the clusters of n samples with these keys: n when
// clusters is nil, and every empty key counts as a cluster of its own.
func Clusters(n int, clusters []string) int {
	if clusters == nil {
		return n
	}
	seen := map[string]bool{}
	g := 0
	for _, k := range clusters[:n] {
		if k == "" {
			g++
		} else if !seen[k] {
			seen[k] = true
			g++
		}
	}
	return g
}

// mean of xs; 0 for none.
func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// ClusteredSE returns the mean of xs, its cluster-robust (CR1, Liang–Zeger)
// standard error and the number of clusters G:
//
//	SE² = G/(G−1) · Σ_g (Σ_{i∈g} (x_i − x̄))² / n²
//
// the sandwich estimator of a regression on a constant with the
// small-sample factor G/(G−1) (Stata's CR1 factor G/(G−1)·(n−1)/(n−k) with
// k = 1 parameter). With every sample its own cluster it is s/√n, the
// ordinary standard error. With fewer than 2 clusters it cannot be
// estimated: se is 0 and G says why.
func ClusteredSE(xs []float64, clusters []string) (m, se float64, g int) {
	n := len(xs)
	if n == 0 {
		return 0, 0, 0
	}
	m = mean(xs)
	sums, sizes := groups(xs, clusters)
	g = len(sums)
	if g < 2 {
		return m, 0, g
	}
	var ss float64
	for j, s := range sums {
		e := s - float64(sizes[j])*m // Σ_{i∈g} (x_i − x̄)
		ss += e * e
	}
	v := float64(g) / float64(g-1) * ss / (float64(n) * float64(n))
	return m, math.Sqrt(v), g
}

// StdErr is the ordinary standard error of the mean, s/√n with the n−1
// sample variance; 0 below 2 samples.
func StdErr(xs []float64) float64 {
	n := len(xs)
	if n < 2 {
		return 0
	}
	m := mean(xs)
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss/float64(n-1)) / math.Sqrt(float64(n))
}

// Quantile of sorted xs with linear interpolation between order
// statistics (type 7); NaN for none.
func Quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	pos := q * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(sorted)-1)
	frac := pos - float64(lo)
	return sorted[lo]*(1-frac) + sorted[hi]*frac
}

// percentileCI is the percentile interval of the bootstrap replicates
// (which it sorts).
func percentileCI(reps []float64) (lo, hi float64) {
	sort.Float64s(reps)
	a := (1 - Level) / 2
	return Quantile(reps, a), Quantile(reps, 1-a)
}

// NormalCDF is Φ, the standard normal distribution function.
func NormalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }
