package reporteval

import (
	"math"
	"slices"
)

// DefaultMaxPairs is the original's repeat_nums: at most this many section
// pairs are judged per report.
const DefaultMaxPairs = 30

// Pairs returns the index pairs (a, b), a < b < n, of the sections to judge
// for redundancy, sorted by a then b. When there are at most maxPairs of
// them (maxPairs ≤ 0 means DefaultMaxPairs) it returns them all, as the
// original does; otherwise a sample of maxPairs distinct pairs drawn with
// the seed.
//
// The original samples with Python's unseeded random.sample, so its choice
// cannot be reproduced; ours is a documented, reproducible one: Robert
// Floyd's sampling of maxPairs distinct pair ranks (rank = position in the
// sorted list of all pairs), driven by SplitMix64 seeded with seed, with
// bounded draws by rejection. Every step is defined here, so the same
// (n, maxPairs, seed) gives the same pairs on every platform and Go release.
// n must be below 2^31. Pairs returns nil when n < 2.
func Pairs(n, maxPairs int, seed uint64) [][2]int {
	if n < 2 {
		return nil
	}
	if n >= 1<<31 {
		panic("reporteval: Pairs: n too large")
	}
	if maxPairs <= 0 {
		maxPairs = DefaultMaxPairs
	}
	total := uint64(n) * uint64(n-1) / 2
	if total <= uint64(maxPairs) {
		out := make([][2]int, 0, total)
		for a := 0; a < n-1; a++ {
			for b := a + 1; b < n; b++ {
				out = append(out, [2]int{a, b})
			}
		}
		return out
	}
	rng := splitMix64{state: seed}
	chosen := make(map[uint64]bool, maxPairs)
	ranks := make([]uint64, 0, maxPairs)
	for j := total - uint64(maxPairs); j < total; j++ {
		t := rng.below(j + 1)
		if chosen[t] {
			t = j
		}
		chosen[t] = true
		ranks = append(ranks, t)
	}
	slices.Sort(ranks)
	return unrankPairs(n, ranks)
}

// unrankPairs turns sorted pair ranks into pairs: rank r is the r-th pair
// (from 0) of the list (0,1), (0,2), …, (0,n-1), (1,2), ….
func unrankPairs(n int, ranks []uint64) [][2]int {
	out := make([][2]int, 0, len(ranks))
	a, first := 0, uint64(0) // first: rank of (a, a+1)
	for _, r := range ranks {
		for r >= first+uint64(n-1-a) {
			first += uint64(n - 1 - a)
			a++
		}
		out = append(out, [2]int{a, a + 1 + int(r-first)})
	}
	return out
}

// splitMix64 is Steele, Lea and Flood's SplitMix64 generator (the seeding
// generator of the xoshiro family).
type splitMix64 struct{ state uint64 }

func (g *splitMix64) next() uint64 {
	g.state += 0x9e3779b97f4a7c15
	z := g.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// below returns a uniform value in [0, bound), bound > 0, rejecting draws
// from the incomplete last block of size bound.
func (g *splitMix64) below(bound uint64) uint64 {
	for {
		x := g.next()
		r := x % bound
		if x-r <= math.MaxUint64-(bound-1) {
			return r
		}
	}
}
