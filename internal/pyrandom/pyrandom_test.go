package pyrandom

import (
	"fmt"
	"testing"
)

// The tables' values were printed by CPython 3.11.7:
// random.Random(seed).getrandbits(32) and, on one state per row,
// random.Random(seed).sample(range(pop), k) for each k in turn (as
// lm-eval draws each document's examples from one state).

func TestGetRandBits(t *testing.T) {
	for _, tc := range []struct {
		seed int64
		want []uint32
	}{
		{1234, []uint32{4150886329, 3342196574, 1892932127, 501869158}},
		{0, []uint32{3626764237, 1654615998, 3255389356, 3823568514}},
		{42, []uint32{2746317213, 478163327, 107420369, 3184935163}},
		{-7, []uint32{1390851128, 4071050724, 647892279, 1695753998}},
		{1099511627781, []uint32{2166296868, 2220160828, 1153647273, 2850991874}}, // 2**40+5: two key words
	} {
		r := New(tc.seed)
		for i, w := range tc.want {
			if got := r.GetRandBits(32); got != w {
				t.Errorf("Random(%d) draw %d: %d, Python's %d", tc.seed, i+1, got, w)
			}
		}
	}
}

func TestSample(t *testing.T) {
	for _, tc := range []struct {
		seed int64
		pop  int
		want [][]int
	}{
		{1234, 8, [][]int{{7, 0, 6}, {1, 6, 4}, {0, 5, 6}}},
		{1234, 7473, [][]int{{6374, 3610, 957, 61, 742, 7462}, {6610, 4769, 286, 5501, 5677, 687}, {806, 6279, 2905, 1939, 142, 252}, {6461, 129, 2835, 5311, 5105, 3966, 5044, 3797, 1216}}},
		{1234, 20, [][]int{{14, 3, 0, 2, 1}, {2, 3, 11, 7, 0, 15}, {0, 11, 15, 14, 4, 1, 2, 18, 16, 19, 8, 7, 3, 10, 5, 17, 9, 6, 13, 12}}},
		{42, 100, [][]int{{81}, {14, 3, 94, 35, 31, 28, 17, 13, 86, 69, 11, 75, 54, 4, 98, 89, 27, 29, 64, 77, 85, 71, 25, 90, 53, 97, 57, 96, 0, 20, 87, 43, 72, 19, 83, 68, 92, 5, 24, 6, 22, 76, 59, 38, 16, 51, 2, 46, 82, 34}}},
		{7, 1000, [][]int{{331, 970, 154, 404, 666, 49, 74, 840}, {548, 96, 374, 596, 59, 931, 519, 219}}},
	} {
		r := New(tc.seed)
		for i, w := range tc.want {
			got, err := r.Sample(tc.pop, len(w))
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(w) {
				t.Errorf("Random(%d) sample %d of range(%d), call %d: %v, Python's %v", tc.seed, len(w), tc.pop, i+1, got, w)
			}
		}
	}
}

func TestSampleBad(t *testing.T) {
	r := New(1)
	for _, tc := range []struct{ pop, k int }{{3, 4}, {3, -1}} {
		if _, err := r.Sample(tc.pop, tc.k); err == nil {
			t.Errorf("sample %d of %d: no error", tc.k, tc.pop)
		}
	}
}
