package stats

import "math"

// McNemar is the exact McNemar test of two pass/fail systems on the same
// samples.
type McNemar struct {
	N int
	// B counts samples a passed and b failed, C the reverse: the
	// discordant pairs.
	B, C int
	P    float64
}

// McNemarExact is the exact two-sided McNemar p-value for b and c
// discordant pairs: under the null each discordant pair favours either
// system with probability 1/2, so with X ~ Binomial(b + c, 1/2)
//
//	p = min(1, 2 · P(X ≤ min(b, c)))
//
// the exact (conditional) test, not the mid-p variant: it never rejects
// more often than its level says. No discordant pairs give p = 1.
func McNemarExact(b, c int) float64 {
	n := b + c
	if n == 0 {
		return 1
	}
	return math.Min(1, 2*binomCDFHalf(min(b, c), n))
}

// binomCDFHalf is P(X ≤ k) for X ~ Binomial(n, 1/2), summed in log space
// so that n in the hundred thousands neither overflows nor underflows.
func binomCDFHalf(k, n int) float64 {
	if k >= n {
		return 1
	}
	lnN1, _ := math.Lgamma(float64(n + 1))
	ln2n := float64(n) * math.Ln2
	var p float64
	for i := 0; i <= k; i++ {
		a, _ := math.Lgamma(float64(i + 1))
		c, _ := math.Lgamma(float64(n - i + 1))
		p += math.Exp(lnN1 - a - c - ln2n)
	}
	return math.Min(1, p)
}

// Binary reports whether every value of xs is 0 or 1.
func Binary(xs []float64) bool {
	for _, x := range xs {
		if x != 0 && x != 1 {
			return false
		}
	}
	return true
}

// McNemarPaired runs McNemarExact on paired 0/1 values (see Binary).
func McNemarPaired(a, b []float64) McNemar {
	m := McNemar{N: len(a)}
	for i := range a {
		switch {
		case a[i] == 1 && b[i] == 0:
			m.B++
		case a[i] == 0 && b[i] == 1:
			m.C++
		}
	}
	m.P = McNemarExact(m.B, m.C)
	return m
}
