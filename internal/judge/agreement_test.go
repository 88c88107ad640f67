package judge

import (
	"errors"
	"math"
	"strconv"
	"testing"
)

const tol = 1e-12

func near(a, b float64) bool { return math.Abs(a-b) <= tol }

// checkStat compares a statistic with a value or an undefined-statistic
// error (then the value must be NaN).
func checkStat(t *testing.T, got float64, err error, want float64, wantErr error) {
	t.Helper()
	if wantErr != nil {
		if !errors.Is(err, wantErr) || !math.IsNaN(got) {
			t.Fatalf("got %v, %v; want NaN, %v", got, err, wantErr)
		}
		return
	}
	if err != nil || !near(got, want) {
		t.Fatalf("got %.15f, %v; want %.15f", got, err, want)
	}
}

func TestAlphaNominal(t *testing.T) {
	tests := []struct {
		name    string
		units   [][]string
		want    float64
		wantErr error
	}{
		// Units (a,a), (b,b), (a,b): o_aa = 2, o_bb = 2, o_ab = o_ba = 1;
		// n_a = n_b = 3, n = 6. Off-diagonal o sums to 2; Σ_{c≠k} n_c·n_k =
		// 2·3·3 = 18. alpha = 1 − 5·2/18 = 4/9.
		{"hand example", [][]string{{"a", "a"}, {"b", "b"}, {"a", "b"}}, 4.0 / 9, nil},
		// The same pairable values with missing ratings spread over three
		// raters, and a unit with one rating (left out): still 4/9.
		{"missing ratings", [][]string{{"a", "a", ""}, {"b", "", "b"}, {"", "a", "b"}, {"", "", "a"}}, 4.0 / 9, nil},
		// Three raters on one unit (a,a,b): each ordered pair adds 1/(3−1):
		// o_aa = 2·1/2 = 1, o_ab = o_ba = 2·1/2 = 1; with (b,b): o_bb = 2.
		// n_a = 2, n_b = 3, n = 5. alpha = 1 − 4·2/(2·2·3) = 1 − 8/12 = 1/3.
		{"three ratings on a unit", [][]string{{"a", "a", "b"}, {"b", "b", ""}}, 1.0 / 3, nil},
		{"perfect agreement", [][]string{{"a", "a"}, {"b", "b", "b"}}, 1, nil},
		{"no variance", [][]string{{"a", "a"}, {"a", "a", "a"}}, 0, ErrNoVariance},
		{"one rater", [][]string{{"a"}, {"b"}}, 0, ErrNoPairs},
		{"no units", nil, 0, ErrNoPairs},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AlphaNominal(tc.units)
			checkStat(t, got, err, tc.want, tc.wantErr)
		})
	}
}

// krippendorff is the reliability-data example of Krippendorff (2011),
// "Computing Krippendorff's Alpha-Reliability": 4 observers, 12 units,
// values 1–5, "." missing. Observer rows: A, B, C, D.
var krippendorff = [4]string{
	"1 2 3 3 2 1 4 1 2 . . .",
	"1 2 3 3 2 2 4 1 2 5 . 3",
	". 3 3 3 2 3 4 2 2 5 1 .",
	"1 2 3 3 2 4 4 1 2 5 1 .",
}

func krippendorffUnits(t *testing.T) ([][]string, [][]float64) {
	t.Helper()
	labels := make([][]string, 12)
	values := make([][]float64, 12)
	for _, row := range krippendorff {
		for u := range 12 {
			tok := string(row[2*u])
			if tok == "." {
				labels[u] = append(labels[u], "")
				values[u] = append(values[u], math.NaN())
				continue
			}
			v, err := strconv.Atoi(tok)
			if err != nil {
				t.Fatal(err)
			}
			labels[u] = append(labels[u], tok)
			values[u] = append(values[u], float64(v))
		}
	}
	return labels, values
}

// TestAlphaPublishedExample checks the published values 0.743 (nominal) and
// 0.849 (interval). By hand: unit 12 has one value and is left out; the
// others give n = 40 pairable values, n_1..n_5 = 9, 13, 10, 5, 3.
//
// Only units 2 (2,2,3,2), 6 (1,2,3,4) and 8 (1,1,2,1) disagree; each has
// m = 4, so every ordered pair of ratings adds 1/3. Unequal ordered pairs:
// 6 + 12 + 6 = 24, × 1/3 = 8. Nominal: Σ_{c≠k} n_c·n_k = 40² − (81 + 169 +
// 100 + 25 + 9) = 1216, alpha = 1 − 39·8/1216 = 113/152 = 0.74342.
//
// Interval: Σ o_ck·(c−k)² = (6·1 + 2·(1+4+9+1+4+1) + 6·1)/3 = 52/3;
// Σ n_c·n_k·(c−k)² = 2·(9·13·1 + 9·10·4 + 9·5·9 + 9·3·16 + 13·10·1 +
// 13·5·4 + 13·3·9 + 10·5·1 + 10·3·4 + 5·3·1) = 2·2240 = 4480;
// alpha = 1 − 39·(52/3)/4480 = 1 − 676/4480 = 951/1120 = 0.84911.
func TestAlphaPublishedExample(t *testing.T) {
	labels, values := krippendorffUnits(t)
	got, err := AlphaNominal(labels)
	checkStat(t, got, err, 113.0/152, nil)
	if math.Round(got*1000)/1000 != 0.743 {
		t.Errorf("nominal alpha %.4f, published 0.743", got)
	}
	got, err = AlphaInterval(values)
	checkStat(t, got, err, 951.0/1120, nil)
	if math.Round(got*1000)/1000 != 0.849 {
		t.Errorf("interval alpha %.4f, published 0.849", got)
	}
}

func TestAlphaInterval(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name    string
		units   [][]float64
		want    float64
		wantErr error
	}{
		// Units (1,2), (3,3): o_12 = o_21 = 1, o_33 = 2; n_1 = n_2 = 1,
		// n_3 = 2, n = 4. Observed Σ o·(c−k)² = 1 + 1 = 2. Expected
		// Σ n_c·n_k·(c−k)² = 2·(1·1·1 + 1·2·4 + 1·2·1) = 22.
		// alpha = 1 − 3·2/22 = 8/11.
		{"hand example", [][]float64{{1, 2}, {3, 3}}, 8.0 / 11, nil},
		{"missing as NaN", [][]float64{{1, nan, 2}, {nan, 3, 3}, {7, nan, nan}}, 8.0 / 11, nil},
		// Interval alpha weighs distance: (1,2),(3,3) against (1,4),(3,3).
		// Second: o_14 = o_41 = 1; n_1 = n_4 = 1, n_3 = 2. Observed = 2·9 =
		// 18. Expected = 2·(1·1·9 + 1·2·4 + 1·2·1) = 38. alpha = 1 − 3·18/38
		// = −16/38 = −8/19: the one disagreement is larger than chance.
		{"larger distance", [][]float64{{1, 4}, {3, 3}}, -8.0 / 19, nil},
		{"perfect agreement", [][]float64{{0, 0}, {4, 4}}, 1, nil},
		{"no variance", [][]float64{{2, 2}, {2, 2}}, 0, ErrNoVariance},
		{"one rater", [][]float64{{1}, {2, nan}}, 0, ErrNoPairs},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AlphaInterval(tc.units)
			checkStat(t, got, err, tc.want, tc.wantErr)
		})
	}
}

// repeat returns n copies of s.
func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestCohenKappa(t *testing.T) {
	// Wikipedia's example: 50 proposals, both yes 20, A yes B no 5, A no B
	// yes 10, both no 15. p_o = 35/50 = 0.7; A says yes 25/50, B 30/50;
	// p_e = 0.5·0.6 + 0.5·0.4 = 0.5. kappa = (0.7 − 0.5)/(1 − 0.5) = 0.4.
	var wa, wb []string
	for _, c := range []struct {
		a, b string
		n    int
	}{{"yes", "yes", 20}, {"yes", "no", 5}, {"no", "yes", 10}, {"no", "no", 15}} {
		wa = append(wa, repeat(c.a, c.n)...)
		wb = append(wb, repeat(c.b, c.n)...)
	}
	tests := []struct {
		name    string
		a, b    []string
		want    float64
		wantErr error
	}{
		{"published example", wa, wb, 0.4, nil},
		// p_o = 3/4; A: x 1/2, y 1/2; B: x 1/4, y 3/4; p_e = 1/8 + 3/8 =
		// 1/2; kappa = (3/4 − 1/2)/(1/2) = 1/2.
		{"hand example", []string{"x", "x", "y", "y"}, []string{"x", "y", "y", "y"}, 0.5, nil},
		{"item missing a label left out", []string{"x", "x", "y", "y", ""}, []string{"x", "y", "y", "y", "x"}, 0.5, nil},
		// p_o = 1/2; A always x: p_e = 1·1/2 = 1/2; kappa = 0.
		{"one constant rater", []string{"x", "x"}, []string{"x", "y"}, 0, nil},
		{"perfect agreement", []string{"x", "y"}, []string{"x", "y"}, 1, nil},
		{"no variance", []string{"x", "x"}, []string{"x", "x"}, 0, ErrNoVariance},
		{"no common items", []string{"x", ""}, []string{"", "y"}, 0, ErrNoPairs},
		{"lengths differ", []string{"x"}, []string{"x", "y"}, 0, ErrShape},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CohenKappa(tc.a, tc.b)
			checkStat(t, got, err, tc.want, tc.wantErr)
		})
	}
}

// fleissWikipedia is the example of Wikipedia's "Fleiss' kappa" article:
// 10 subjects, 14 raters, 5 categories; each row counts the raters per
// category. Published: P̄ = 0.378, P̄e = 0.213, kappa = 0.210.
var fleissWikipedia = [][5]int{
	{0, 0, 0, 0, 14}, {0, 2, 6, 4, 2}, {0, 0, 3, 5, 6}, {0, 3, 9, 2, 0}, {2, 2, 8, 1, 1},
	{7, 7, 0, 0, 0}, {3, 2, 6, 3, 0}, {2, 5, 3, 2, 2}, {6, 5, 2, 1, 0}, {0, 2, 2, 3, 7},
}

func TestFleissKappa(t *testing.T) {
	var wiki [][]string
	for _, row := range fleissWikipedia {
		var labels []string
		for j, n := range row {
			labels = append(labels, repeat(strconv.Itoa(j+1), n)...)
		}
		wiki = append(wiki, labels)
	}
	tests := []struct {
		name    string
		items   [][]string
		want    float64
		wantErr error
	}{
		// By hand: Σ_i Σ_j n_ij² = 196 + 60 + 70 + 94 + 74 + 98 + 58 + 46 +
		// 66 + 66 = 828, so P̄ = (828 − 10·14)/(10·14·13) = 688/1820 =
		// 0.37802. Column sums 20, 28, 39, 21, 32 of 140 give P̄e = (400 +
		// 784 + 1521 + 441 + 1024)/19600 = 4170/19600 = 0.21276. kappa =
		// (688/1820 − 4170/19600)/(1 − 4170/19600) = 4211/20059 = 0.20993.
		{"published example", wiki, 4211.0 / 20059, nil},
		// Items (a,a), (a,b), (b,b), r = 2: P_i = (4−2)/2 = 1, (1+1−2)/2 =
		// 0, 1; P̄ = 2/3. p_a = p_b = 3/6; P̄e = 1/2. kappa = (2/3 − 1/2)/(1/2)
		// = 1/3.
		{"hand example", [][]string{{"a", "a"}, {"a", "b"}, {"b", "b"}}, 1.0 / 3, nil},
		{"missing entries, same count per item", [][]string{{"a", "a", ""}, {"", "a", "b"}, {"b", "", "b"}}, 1.0 / 3, nil},
		{"perfect agreement", [][]string{{"a", "a", "a"}, {"b", "b", "b"}}, 1, nil},
		{"no variance", [][]string{{"a", "a"}, {"a", "a"}}, 0, ErrNoVariance},
		{"one rater", [][]string{{"a"}, {"b"}}, 0, ErrNoPairs},
		{"no items", nil, 0, ErrNoPairs},
		{"unequal raters", [][]string{{"a", "a"}, {"a", "b", "b"}}, 0, ErrShape},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FleissKappa(tc.items)
			checkStat(t, got, err, tc.want, tc.wantErr)
		})
	}
	got, _ := FleissKappa(wiki)
	if math.Round(got*1000)/1000 != 0.210 {
		t.Errorf("Fleiss' kappa %.4f, published 0.210", got)
	}
}

func TestPositionConsistency(t *testing.T) {
	pairs := []SwappedPair{
		{"1", "2"},     // the same answer both times: consistent
		{"2", "1"},     // consistent
		{"1", "1"},     // first position both times
		{"2", "2"},     // second position both times
		{"tie", "tie"}, // a tie mirrors to itself: consistent
		{"tie", "1"},   // inconsistent, no position bias
		{"", "1"},      // judge error: excluded
	}
	got, err := PositionConsistency(pairs, "1", "2")
	// 6 pairs with both verdicts, 3 consistent: 3/6 = 0.5.
	want := Consistency{Pairs: 6, Excluded: 1, Consistent: 3, Share: 0.5, FirstBoth: 1, SecondBoth: 1}
	if err != nil || got != want {
		t.Errorf("PositionConsistency = %+v, %v; want %+v", got, err, want)
	}
	got, err = PositionConsistency([]SwappedPair{{"", "2"}}, "1", "2")
	if !errors.Is(err, ErrNoPairs) || got.Share != 0 || got.Excluded != 1 {
		t.Errorf("no complete pair: %+v, %v", got, err)
	}
	got, err = PositionConsistency([]SwappedPair{{"A", "B"}, {"B", "A"}}, "A", "B")
	if err != nil || got.Share != 1 {
		t.Errorf("perfectly consistent: %+v, %v", got, err)
	}
}
