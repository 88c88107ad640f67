package judge

import (
	"errors"
	"fmt"
	"math"
)

// Agreement statistics return NaN with one of these errors when the
// statistic is undefined for the data.
var (
	// ErrNoPairs: no item has two ratings to compare (one rater, or every
	// rating but one missing on every item).
	ErrNoPairs = errors.New("judge: agreement undefined: no item has two ratings")
	// ErrNoVariance: every rating compared is the same value, so chance
	// agreement is 1 and the statistic is 0/0. Such raters agree perfectly
	// but the data cannot show that they can tell values apart.
	ErrNoVariance = errors.New("judge: agreement undefined: every rating is the same value")
	// ErrShape: the ratings do not have the shape the statistic needs
	// (Cohen: two lists of equal length; Fleiss: the same number of
	// ratings on every item).
	ErrShape = errors.New("judge: ratings of the wrong shape")
)

// AlphaNominal is Krippendorff's alpha for nominal labels. units holds one
// row per unit (item) with one entry per rater; "" is a missing rating.
// With o_ck the coincidence matrix (each unit u with m_u ≥ 2 ratings adds
// 1/(m_u−1) for every ordered pair of its ratings from different raters),
// n_c = Σ_k o_ck and n = Σ_c n_c:
//
//	alpha = 1 − (n−1) · Σ_{c≠k} o_ck / Σ_{c≠k} n_c·n_k
//
// Units with fewer than two ratings are left out. It returns 1 for perfect
// agreement over at least two values, NaN and ErrNoPairs when no unit has
// two ratings, NaN and ErrNoVariance when every rating is the same value.
func AlphaNominal(units [][]string) (float64, error) {
	return alpha(units, func(s string) bool { return s == "" }, func(a, b string) float64 {
		if a == b {
			return 0
		}
		return 1
	})
}

// AlphaInterval is Krippendorff's alpha for interval values (e.g. 0–4
// scores): AlphaNominal's formula with the squared difference (c−k)² in
// place of 1 for every pair of values. NaN is a missing rating. Edge cases
// as AlphaNominal.
func AlphaInterval(units [][]float64) (float64, error) {
	return alpha(units, math.IsNaN, func(a, b float64) float64 { return (a - b) * (a - b) })
}

// alpha computes Krippendorff's alpha with the squared difference function
// delta2. Values are indexed in order of first appearance, so the sums run
// in an order fixed by the input.
func alpha[T comparable](units [][]T, missing func(T) bool, delta2 func(a, b T) float64) (float64, error) {
	index := map[T]int{}
	var values []T
	var o [][]float64 // coincidences, grown as values appear
	for _, u := range units {
		counts := map[int]float64{}
		var order []int
		m := 0
		for _, v := range u {
			if missing(v) {
				continue
			}
			i, ok := index[v]
			if !ok {
				i = len(values)
				index[v] = i
				values = append(values, v)
				for r := range o {
					o[r] = append(o[r], 0)
				}
				o = append(o, make([]float64, len(values)))
			}
			if counts[i] == 0 {
				order = append(order, i)
			}
			counts[i]++
			m++
		}
		if m < 2 {
			continue
		}
		for _, c := range order {
			for _, k := range order {
				pairs := counts[c] * counts[k]
				if c == k {
					pairs = counts[c] * (counts[c] - 1)
				}
				o[c][k] += pairs / float64(m-1)
			}
		}
	}
	nc := make([]float64, len(values))
	n := 0.0
	for c := range o {
		for k := range o[c] {
			nc[c] += o[c][k]
		}
		n += nc[c]
	}
	if n == 0 {
		return math.NaN(), ErrNoPairs
	}
	observed, expected := 0.0, 0.0
	for c := range values {
		for k := range values {
			d := delta2(values[c], values[k])
			observed += o[c][k] * d
			expected += nc[c] * nc[k] * d
		}
	}
	if expected == 0 {
		return math.NaN(), ErrNoVariance
	}
	return 1 - (n-1)*observed/expected, nil
}

// CohenKappa is Cohen's kappa for two raters: a[i] and b[i] are their
// labels for item i, "" missing. Items missing either label are left out.
// With p_o the share of items with equal labels and p_e = Σ_k p_a(k)·p_b(k)
// the agreement expected from each rater's own label shares:
//
//	kappa = (p_o − p_e) / (1 − p_e)
//
// It returns ErrShape for lists of different lengths, NaN and ErrNoPairs
// when no item has both labels, and NaN and ErrNoVariance when p_e = 1
// (both raters gave one and the same label to every item).
func CohenKappa(a, b []string) (float64, error) {
	if len(a) != len(b) {
		return math.NaN(), fmt.Errorf("%w: cohen's kappa: %d and %d labels", ErrShape, len(a), len(b))
	}
	ca, cb := map[string]float64{}, map[string]float64{}
	var labels []string
	seen := map[string]bool{}
	n, agree := 0.0, 0.0
	for i := range a {
		if a[i] == "" || b[i] == "" {
			continue
		}
		n++
		ca[a[i]]++
		cb[b[i]]++
		if a[i] == b[i] {
			agree++
		}
		for _, l := range []string{a[i], b[i]} {
			if !seen[l] {
				seen[l] = true
				labels = append(labels, l)
			}
		}
	}
	if n == 0 {
		return math.NaN(), ErrNoPairs
	}
	pe := 0.0
	for _, l := range labels {
		pe += (ca[l] / n) * (cb[l] / n)
	}
	if pe >= 1 {
		return math.NaN(), ErrNoVariance
	}
	return (agree/n - pe) / (1 - pe), nil
}

// FleissKappa is Fleiss' kappa for a fixed number of raters per item:
// items[i] holds the labels item i received ("" entries are ignored, but
// every item must keep the same number r ≥ 2 of labels; which raters gave
// them may differ). With N items, n_ij the raters giving item i label j,
// p_j = Σ_i n_ij / (N·r), P_i = (Σ_j n_ij² − r) / (r(r−1)):
//
//	kappa = (P̄ − P̄e) / (1 − P̄e),  P̄ = mean_i P_i,  P̄e = Σ_j p_j²
//
// It returns NaN and ErrNoPairs for no items or r < 2, ErrShape when items
// have different numbers of labels, NaN and ErrNoVariance when P̄e = 1.
func FleissKappa(items [][]string) (float64, error) {
	r := -1
	total := map[string]float64{}
	var labels []string
	sumP := 0.0
	for i, it := range items {
		counts := map[string]float64{}
		var order []string
		m := 0
		for _, l := range it {
			if l == "" {
				continue
			}
			if counts[l] == 0 {
				order = append(order, l)
			}
			counts[l]++
			m++
		}
		if r < 0 {
			r = m
		}
		if m != r {
			return math.NaN(), fmt.Errorf("%w: fleiss' kappa: item %d has %d labels, item 0 has %d", ErrShape, i, m, r)
		}
		if r < 2 {
			return math.NaN(), ErrNoPairs
		}
		sq := 0.0
		for _, l := range order {
			sq += counts[l] * counts[l]
			if total[l] == 0 {
				labels = append(labels, l)
			}
			total[l] += counts[l]
		}
		sumP += (sq - float64(r)) / float64(r*(r-1))
	}
	if len(items) == 0 {
		return math.NaN(), ErrNoPairs
	}
	all := float64(len(items) * r)
	pe := 0.0
	for _, l := range labels {
		p := total[l] / all
		pe += p * p
	}
	if pe >= 1 {
		return math.NaN(), ErrNoVariance
	}
	pbar := sumP / float64(len(items))
	return (pbar - pe) / (1 - pe), nil
}

// SwappedPair is a pairwise judgement asked in both orders: Original is
// the verdict with the answers in their original positions, Swapped the
// verdict with the two answers swapped; "" is a judge error.
type SwappedPair struct {
	Original string `json:"original"`
	Swapped  string `json:"swapped"`
}

// Consistency is the position consistency of a judge over pairs asked in
// both orders.
type Consistency struct {
	// Pairs counts the pairs with both verdicts; Excluded those missing one.
	Pairs    int `json:"pairs"`
	Excluded int `json:"excluded,omitempty"`
	// Consistent counts the pairs whose two verdicts name the same answer.
	Consistent int `json:"consistent"`
	// Share is Consistent / Pairs; 0 when Pairs is 0 (see the error).
	Share float64 `json:"share"`
	// FirstBoth and SecondBoth count the inconsistent pairs in which the
	// judge chose the same position both times: a position bias.
	FirstBoth  int `json:"first_both"`
	SecondBoth int `json:"second_both"`
}

// PositionConsistency measures whether a pairwise judge picks the same
// answer when the answers swap positions. first and second are the
// verdicts naming the two positions (e.g. "1" and "2"). A pair is
// consistent when Swapped is the mirror of Original: second for first,
// first for second, and any other verdict (e.g. "tie") mirrored to itself.
// When no pair has both verdicts it returns Share 0 and ErrNoPairs (a
// Consistency is stored as JSON, which has no NaN).
func PositionConsistency(pairs []SwappedPair, first, second string) (Consistency, error) {
	mirror := func(v string) string {
		switch v {
		case first:
			return second
		case second:
			return first
		}
		return v
	}
	var c Consistency
	for _, p := range pairs {
		if p.Original == "" || p.Swapped == "" {
			c.Excluded++
			continue
		}
		c.Pairs++
		switch {
		case p.Swapped == mirror(p.Original):
			c.Consistent++
		case p.Original == first && p.Swapped == first:
			c.FirstBoth++
		case p.Original == second && p.Swapped == second:
			c.SecondBoth++
		}
	}
	if c.Pairs == 0 {
		return c, ErrNoPairs
	}
	c.Share = float64(c.Consistent) / float64(c.Pairs)
	return c, nil
}
