package toolpref

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
)

// Dimensions are what balanced sampling balances over.
var Dimensions = []string{"source", "intensity", "complexity"}

// Intensity buckets a score gap:
//
//	low     gap < 0.35
//	medium  0.35 <= gap < 0.7
//	high    gap >= 0.7
func Intensity(gap float64) string {
	switch {
	case gap >= 0.7:
		return "high"
	case gap >= 0.35:
		return "medium"
	}
	return "low"
}

// Pair is a candidate (chosen, rejected) pair of one item.
type Pair struct {
	ItemID string
	// Dims holds the pair's value of each of Dimensions, in that order.
	Dims [3]string
	// Ref is the caller's handle (e.g. indexes of the two candidates).
	Ref any
}

// Targets are the target proportions of each dimension's values: weights,
// normalized over the values present in the pool. A value present in the
// pool without a weight gets weight 1 when the dimension has no weights at
// all, else 0 (it is excluded).
type Targets [3]map[string]float64

// ParseWeights parses "a=2,b=1" (empty: no weights).
func ParseWeights(s string) (map[string]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	out := map[string]float64{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		w, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if !ok || strings.TrimSpace(k) == "" || err != nil || w < 0 {
			return nil, fmt.Errorf("weight %q: want value=non-negative number", kv)
		}
		out[strings.TrimSpace(k)] = w
	}
	return out, nil
}

// spreadWindow bounds how far into a cell Select looks for a pair of a
// less-used item.
const spreadWindow = 64

// Select picks up to n pairs from pool by balanced multi-dimensional
// sampling and returns their indexes in pick order. Pairs are grouped into
// cells by their three dimension values; each cell is shuffled with seed.
// At step k (0-based) the next pair comes from the cell whose values are
// furthest behind their targets, the sum over dimensions of
// target(value)*(k+1) - picked(value); ties go to the cell that sorts
// first. Within the cell, the pair whose item has the fewest picks so far
// (among the next 64) is taken, spreading pairs over items. An item
// contributes at most perItem pairs (0: no limit). Pairs whose value has target weight 0 are never picked.
func Select(pool []Pair, t Targets, n, perItem int, seed uint64) []int {
	var target [3]map[string]float64
	for d := range 3 {
		present := map[string]bool{}
		for _, p := range pool {
			present[p.Dims[d]] = true
		}
		target[d] = map[string]float64{}
		sum := 0.0
		for v := range present {
			w, ok := t[d][v]
			if !ok {
				w = 0
				if len(t[d]) == 0 {
					w = 1
				}
			}
			target[d][v] = w
			sum += w
		}
		for v := range target[d] {
			if sum > 0 {
				target[d][v] /= sum
			}
		}
	}
	cells := map[[3]string][]int{}
	for i, p := range pool {
		ok := true
		for d := range 3 {
			if target[d][p.Dims[d]] == 0 {
				ok = false
			}
		}
		if ok {
			cells[p.Dims] = append(cells[p.Dims], i)
		}
	}
	keys := make([][3]string, 0, len(cells))
	for k := range cells {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		for d := range 3 {
			if a[d] != b[d] {
				return a[d] < b[d]
			}
		}
		return false
	})
	rng := rand.New(rand.NewPCG(seed, 0x746f6f6c70726566)) // "toolpref"
	for _, k := range keys {
		c := cells[k]
		rng.Shuffle(len(c), func(i, j int) { c[i], c[j] = c[j], c[i] })
	}
	var picked [3]map[string]float64
	for d := range 3 {
		picked[d] = map[string]float64{}
	}
	perItemN := map[string]int{}
	var out []int
	for len(out) < n {
		best, bestPri := -1, 0.0
		for ki, k := range keys {
			c := cells[k]
			for len(c) > 0 && perItem > 0 && perItemN[pool[c[0]].ItemID] >= perItem {
				c = c[1:]
			}
			cells[k] = c
			if len(c) == 0 {
				continue
			}
			pri := 0.0
			for d := range 3 {
				pri += target[d][k[d]]*float64(len(out)+1) - picked[d][k[d]]
			}
			if best < 0 || pri > bestPri+1e-12 {
				best, bestPri = ki, pri
			}
		}
		if best < 0 {
			break
		}
		// Within the cell, prefer the pair whose item has the fewest picks
		// so far (among the next few), so pairs spread over items.
		k := keys[best]
		c := cells[k]
		at := 0
		for j := 1; j < min(len(c), spreadWindow); j++ {
			if perItemN[pool[c[j]].ItemID] < perItemN[pool[c[at]].ItemID] {
				at = j
			}
		}
		i := c[at]
		cells[k] = append(c[:at:at], c[at+1:]...)
		out = append(out, i)
		perItemN[pool[i].ItemID]++
		for d := range 3 {
			picked[d][k[d]]++
		}
	}
	return out
}
