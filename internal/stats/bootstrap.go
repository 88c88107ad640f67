package stats

import (
	"math"
	"math/rand/v2"
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
// estimator when clusters differ in size).
func replicates(xs []float64, clusters []string, b Bootstrap) []float64 {
	b = b.withDefaults()
	r := &draws{src: rand.NewPCG(b.Seed, 0x62656e63686c696e)} // stream: "benchlin"
	reps := make([]float64, b.Resamples)
	if clusters == nil {
		n := uint32(len(xs))
		for k := range reps {
			var t float64
			for range n {
				t += xs[r.intn(n)]
			}
			reps[k] = t / float64(n)
		}
		return reps
	}
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

// draws are uniform draws from [0, n): each 64-bit output of the PCG
// gives two 32-bit words, mapped to [0, n) by Lemire's multiply-shift with
// rejection (unbiased). Faster than rand.Rand.IntN, which pays an
// interface call and a 64-bit draw per index (BenchmarkDraws).
type draws struct {
	src  *rand.PCG
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
