package reporteval

import (
	"fmt"
	"slices"
	"testing"
)

func TestPairs(t *testing.T) {
	all4 := [][2]int{{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}}
	for _, tc := range []struct {
		name    string
		n, max  int
		seed    uint64
		want    [][2]int
		wantLen int // when want is nil
	}{
		{name: "no sections", n: 0},
		{name: "one section", n: 1},
		{name: "two sections", n: 2, max: 30, want: [][2]int{{0, 1}}},
		{name: "all pairs when few", n: 4, max: 30, want: all4},
		{name: "all pairs when exactly max", n: 4, max: 6, want: all4},
		// SplitMix64 from seed 0 gives 16294208416658607535 and
		// 7960286522194355700. Floyd over ranks 0..5 picking 2:
		// j=4: 16294208416658607535 mod 5 = 0, take rank 0;
		// j=5: 7960286522194355700 mod 6 = 0, taken, so take rank 5.
		// Ranks 0 and 5 are (0,1) and (2,3).
		{name: "sample of 2 of 6, worked by hand", n: 4, max: 2, seed: 0, want: [][2]int{{0, 1}, {2, 3}}},
		{name: "8 sections: 28 pairs, all", n: 8, max: 30, wantLen: 28},
		{name: "9 sections: 36 pairs, 30 sampled", n: 9, max: 30, seed: 7, wantLen: 30},
		{name: "max 0 means 30", n: 9, max: 0, seed: 7, wantLen: 30},
		{name: "negative max means 30", n: 40, max: -1, seed: 1, wantLen: 30},
		{name: "max 1", n: 40, max: 1, seed: 1, wantLen: 1},
		{name: "many sections", n: 5000, max: 30, seed: 99, wantLen: 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Pairs(tc.n, tc.max, tc.seed)
			if tc.want != nil && !slices.Equal(got, tc.want) {
				t.Fatalf("Pairs(%d, %d, %d) = %v, want %v", tc.n, tc.max, tc.seed, got, tc.want)
			}
			wantLen := tc.wantLen
			if tc.want != nil {
				wantLen = len(tc.want)
			}
			if len(got) != wantLen {
				t.Fatalf("len = %d, want %d", len(got), wantLen)
			}
			for i, p := range got {
				if p[0] < 0 || p[0] >= p[1] || p[1] >= tc.n {
					t.Errorf("pair %d = %v out of range for n=%d", i, p, tc.n)
				}
				if i > 0 && !less(got[i-1], p) {
					t.Errorf("pairs %v, %v not strictly increasing", got[i-1], p)
				}
			}
			if again := Pairs(tc.n, tc.max, tc.seed); !slices.Equal(got, again) {
				t.Errorf("second call gave %v, first %v", again, got)
			}
		})
	}
}

func less(p, q [2]int) bool { return p[0] < q[0] || p[0] == q[0] && p[1] < q[1] }

func TestPairsSeedMatters(t *testing.T) {
	a, b := Pairs(20, 30, 1), Pairs(20, 30, 2)
	if slices.Equal(a, b) {
		t.Fatalf("seeds 1 and 2 gave the same sample %v", a)
	}
}

// TestPairsUniform checks that each of the 190 pairs of 20 sections is
// drawn about equally often over 10,000 seeds: 10,000·30/190 ≈ 1579 times,
// with a standard deviation of about 36.5; ±10% is over 4 of them, so a
// sampler that favours or never draws some rank fails.
func TestPairsUniform(t *testing.T) {
	const n, k, seeds = 20, 30, 10000
	counts := map[[2]int]int{}
	for s := range uint64(seeds) {
		for _, p := range Pairs(n, k, s) {
			counts[p]++
		}
	}
	if len(counts) != n*(n-1)/2 {
		t.Fatalf("%d distinct pairs drawn, want %d", len(counts), n*(n-1)/2)
	}
	want := float64(seeds) * k / (n * (n - 1) / 2)
	for p, c := range counts {
		if float64(c) < 0.9*want || float64(c) > 1.1*want {
			t.Errorf("pair %v drawn %d times, want about %.0f", p, c, want)
		}
	}
}

func TestUnrankPairs(t *testing.T) {
	for _, tc := range []struct {
		n     int
		ranks []uint64
		want  [][2]int
	}{
		{4, []uint64{0, 1, 2, 3, 4, 5}, [][2]int{{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}}},
		{4, []uint64{2, 3}, [][2]int{{0, 3}, {1, 2}}},
		// n=10: rows hold 9, 8, 7, … pairs; rank 17 is the first of row
		// 2, rank 44 the last pair.
		{10, []uint64{8, 9, 17, 44}, [][2]int{{0, 9}, {1, 2}, {2, 3}, {8, 9}}},
	} {
		t.Run(fmt.Sprint(tc.n, tc.ranks), func(t *testing.T) {
			if got := unrankPairs(tc.n, tc.ranks); !slices.Equal(got, tc.want) {
				t.Errorf("unrankPairs(%d, %v) = %v, want %v", tc.n, tc.ranks, got, tc.want)
			}
		})
	}
}

func TestSplitMix64(t *testing.T) {
	// The first outputs of SplitMix64 seeded with 0, as published with
	// the reference implementation (xoshiro's splitmix64.c).
	g := splitMix64{}
	for i, want := range []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f} {
		if got := g.next(); got != want {
			t.Errorf("output %d = %#x, want %#x", i, got, want)
		}
	}
}
