package stats

import (
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// Bootstrap sets how bootstrap replicates are drawn.
type Bootstrap struct {
	// Resamples is the number of replicates [2000].
	Resamples int
	// Seed seeds the generator [1]: the same data, seed and Resamples
	// give the same replicates.
	Seed uint64
}

// DefaultResamples is Bootstrap.Resamples when unset.
const DefaultResamples = 2000

func (b Bootstrap) withDefaults() Bootstrap {
	if b.Resamples <= 0 {
		b.Resamples = DefaultResamples
	}
	if b.Seed == 0 {
		b.Seed = 1
	}
	return b
}

// replicates draws the bootstrap replicates of the mean of xs: each
// resamples the G clusters with replacement (samples, when clusters is
// nil) and takes the mean of the samples drawn, Σ sums / Σ sizes (a ratio
// estimator when clusters differ in size). Without clusters, when xs takes
// few distinct values (0/1 accuracy, a paired difference of pass/fail
// scores in {−1, 0, 1}, a rubric's grid), a replicate draws how many of
// each value it holds instead of n indices (countMeans): the same
// distribution of replicates for k draws instead of n, so a million-sample
// comparison costs what a thousand-sample one does.
func replicates(xs []float64, clusters []string, b Bootstrap) []float64 {
	b = b.withDefaults()
	src := rand.NewPCG(b.Seed, 0x62656e63686c696e) // stream: "benchlin"
	if clusters == nil {
		if reps, ok := countMeans(xs, b.Resamples, src); ok {
			return reps
		}
		return indexMeans(xs, b.Resamples, src)
	}
	r := &draws{src: src}
	reps := make([]float64, b.Resamples)
	sums, sizes := groups(xs, clusters)
	g := uint32(len(sums))
	for k := range reps {
		var t float64
		var m int
		for range g {
			j := r.intn(g)
			t += sums[j]
			m += sizes[j]
		}
		reps[k] = t / float64(m)
	}
	return reps
}

// MaxSupport is the most distinct values for which countMeans resamples
// by counts.
const MaxSupport = 64

// countMeans returns resamples bootstrap means of xs drawn by counts, when
// xs has few distinct values: a resample's counts of the k distinct values
// v_j (n_j times in xs) are Multinomial(n; n_j/n), drawn as k−1 binomials,
// each of the samples left with the value's share of the values left
// (gonum's sampler on src), so a resample costs k draws instead of n. The
// values are taken in sorted order, so the result depends on xs only as a
// multiset. ok is false, and nothing is drawn, when index draws are as
// cheap (n < 32·k: few samples, or many distinct values), k > MaxSupport,
// or xs holds a NaN.
func countMeans(xs []float64, resamples int, src rand.Source) (means []float64, ok bool) {
	n := len(xs)
	if n == 0 {
		return nil, false
	}
	counts := map[float64]int{}
	for _, x := range xs {
		if x != x { // NaN: no map key equals it
			return nil, false
		}
		counts[x]++
		if 32*len(counts) > n || len(counts) > MaxSupport {
			return nil, false
		}
	}
	vals := make([]float64, 0, len(counts))
	for v := range counts {
		vals = append(vals, v)
	}
	sort.Float64s(vals)
	// share[j] is the chance that a sample not among values < j is value j.
	share := make([]float64, len(vals))
	left := n
	for j, v := range vals {
		share[j] = float64(counts[v]) / float64(left)
		left -= counts[v]
	}
	bin := distuv.Binomial{Src: src}
	means = make([]float64, resamples)
	for b := range means {
		var t float64
		rest := n
		for j, v := range vals {
			c := rest
			if j < len(vals)-1 && share[j] < 1 {
				bin.N, bin.P = float64(rest), share[j]
				c = int(bin.Rand())
			}
			t += v * float64(c)
			if rest -= c; rest == 0 {
				break
			}
		}
		means[b] = t / float64(n)
	}
	return means, true
}

// indexMeans returns resamples bootstrap means of xs, each of n indices
// drawn with replacement from src (the draws countMeans stands in for).
func indexMeans(xs []float64, resamples int, src rand.Source) []float64 {
	r := &draws{src: src}
	means := make([]float64, resamples)
	n := uint32(len(xs))
	for k := range means {
		var t float64
		for range n {
			t += xs[r.intn(n)]
		}
		means[k] = t / float64(n)
	}
	return means
}

// draws are uniform draws from [0, n): each 64-bit output of the PCG
// gives two 32-bit words, mapped to [0, n) by Lemire's multiply-shift with
// rejection (unbiased). Faster than rand.Rand.IntN, which pays an
// interface call and a 64-bit draw per index (BenchmarkDraws).
type draws struct {
	src  rand.Source
	lo   uint32
	have bool
}

func (d *draws) next() uint32 {
	if d.have {
		d.have = false
		return d.lo
	}
	v := d.src.Uint64()
	d.lo, d.have = uint32(v), true
	return uint32(v >> 32)
}

// intn is a uniform draw from [0, n), n ≥ 1 (D. Lemire, "Fast random
// integer generation in an interval", 2019).
func (d *draws) intn(n uint32) uint32 {
	m := uint64(d.next()) * uint64(n)
	if low := uint32(m); low < n {
		thresh := -n % n
		for low < thresh {
			m = uint64(d.next()) * uint64(n)
			low = uint32(m)
		}
	}
	return uint32(m >> 32)
}

// MeanCI is a mean with its bootstrap percentile interval.
type MeanCI struct {
	N, Clusters   int
	Mean          float64
	CILow, CIHigh float64
	// StdErr is the standard deviation of the replicates.
	StdErr float64
}

// BootstrapMean is the (cluster) bootstrap percentile 95% interval of the
// mean of xs. With clusters it resamples whole clusters, so samples that
// share a cluster are drawn together. Empty xs gives zeros.
func BootstrapMean(xs []float64, clusters []string, b Bootstrap) MeanCI {
	out := MeanCI{N: len(xs), Clusters: Clusters(len(xs), clusters)}
	if len(xs) == 0 {
		return out
	}
	out.Mean = mean(xs)
	reps := replicates(xs, clusters, b)
	out.StdErr = sd(reps)
	out.CILow, out.CIHigh = percentileCI(reps)
	return out
}

// Paired is the comparison of two systems on the same samples.
type Paired struct {
	N, Clusters int
	// Diff is mean(a) − mean(b) with its 95% interval.
	Diff, CILow, CIHigh float64
	// StdErr is the standard deviation of the bootstrap replicates of Diff.
	StdErr float64
	// P is the two-sided p-value of "no difference".
	P float64
}

// PairedBootstrap compares a and b (paired: a[i] and b[i] are one sample,
// clusters[i] its cluster) by the bootstrap of the mean difference
// d̄ = mean(a − b): the percentile 95% interval of the replicates d̄*, and
// the two-sided p-value of the shifted (null) distribution,
//
//	p = (1 + #{k : |d̄*_k − d̄| ≥ |d̄|}) / (B + 1)
//
// (Davison & Hinkley 1997, §4.4: the replicates centred on 0 stand for the
// null; the +1 counts the observed statistic, so p ≥ 1/(B+1)). With
// clusters it resamples whole clusters. a and b must have the same length.
func PairedBootstrap(a, b []float64, clusters []string, o Bootstrap) Paired {
	o = o.withDefaults()
	n := len(a)
	out := Paired{N: n, Clusters: Clusters(n, clusters), P: 1}
	if n == 0 {
		return out
	}
	d := make([]float64, n)
	for i := range d {
		d[i] = a[i] - b[i]
	}
	out.Diff = mean(d)
	reps := replicates(d, clusters, o)
	out.StdErr = sd(reps)
	obs := math.Abs(out.Diff)
	const eps = 1e-12 // replicates equal to the observed difference up to rounding count as at least as extreme
	extreme := 0
	for _, r := range reps {
		if math.Abs(r-out.Diff) >= obs-eps {
			extreme++
		}
	}
	out.P = float64(1+extreme) / float64(len(reps)+1)
	out.CILow, out.CIHigh = percentileCI(reps)
	return out
}

// sd is the standard deviation of xs (n − 1 denominator).
func sd(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	m := mean(xs)
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}
