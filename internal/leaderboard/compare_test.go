package leaderboard

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/internal/stats"
	"github.com/benchline/benchline/schemas"
)

// samples builds a run's Samples with ids s0, s1, … over values.
func samples(model string, values []float64, clusters []string) Samples {
	s := Samples{RunID: "r-" + model, Model: model, Values: values, Clusters: clusters}
	for i := range values {
		s.IDs = append(s.IDs, fmt.Sprint("s", i))
	}
	return s
}

// pattern returns n values, 1 where i%k < ones.
func pattern(n, k, ones int) []float64 {
	out := make([]float64, n)
	for i := range out {
		if i%k < ones {
			out[i] = 1
		}
	}
	return out
}

func TestCompare(t *testing.T) {
	// 0/1 values, 100 samples: "strong" passes all, "mid" and "mid2" pass
	// 50 each (not the same ones: 25 discordant pairs each way).
	strong := samples("strong", pattern(100, 1, 1), nil)
	mid := samples("mid", pattern(100, 2, 1), nil)
	mid2 := samples("mid2", pattern(100, 4, 2), nil)

	// b = 8, c = 2 of 20 pairs: exact p = 2·P(X ≤ 2 | 10, ½) = 0.109375.
	a := samples("a", append(pattern(10, 1, 1), pattern(10, 1, 0)...), nil) // 1×10, 0×10
	b := samples("b", []float64{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0}, nil)

	// Clustered: 10 clusters of 20 samples; in 7 clusters x beats y on
	// every sample, in 3 y beats x. Sample by sample that is 140 against
	// 60, far from chance; cluster by cluster it is 7 against 3 (CR1: d̄ =
	// 0.4, SE = √(10/9 · (7·12² + 3·28²)) / 200 = 0.306, z = 1.3).
	var xv, yv []float64
	var keys []string
	for g := range 10 {
		for range 20 {
			keys = append(keys, fmt.Sprint("c", g))
			if g < 7 {
				xv, yv = append(xv, 1), append(yv, 0)
			} else {
				xv, yv = append(xv, 0), append(yv, 1)
			}
		}
	}

	tests := []struct {
		name   string
		runs   []Samples
		check  func(t *testing.T, cs []Comparison)
		ranks  map[string]RankRange
		method string
	}{
		{
			name:  "a clearly better model ranks 1-1; indistinguishable models share a range",
			runs:  []Samples{mid, strong, mid2},
			ranks: map[string]RankRange{"strong": {1, 1}, "mid": {2, 3}, "mid2": {2, 3}},
			check: func(t *testing.T, cs []Comparison) {
				// mid vs strong: b = 0, c = 50: p = 2·2^-50.
				if c := cs[0]; c.ModelA != "mid" || c.ModelB != "strong" || c.Method != MethodMcNemar || !c.Significant || c.Diff != -0.5 || c.N != 100 {
					t.Errorf("%+v", c)
				}
				if c := cs[0]; math.Abs(c.P-2*math.Pow(2, -50)) > 1e-20 || math.Abs(c.PAdjusted-3*c.P) > 1e-20 {
					t.Errorf("p %g adjusted %g", c.P, c.PAdjusted)
				}
				// mid vs mid2: b = c = 25: p = 1.
				if c := cs[1]; c.ModelB != "mid2" || c.P != 1 || c.Significant || c.Diff != 0 {
					t.Errorf("%+v", c)
				}
			},
		},
		{
			name:  "mcnemar by hand",
			runs:  []Samples{a, b},
			ranks: map[string]RankRange{"a": {1, 2}, "b": {1, 2}},
			check: func(t *testing.T, cs []Comparison) {
				c := cs[0]
				if c.Method != MethodMcNemar || math.Abs(c.P-0.109375) > 1e-12 || c.PAdjusted != c.P || c.Significant || math.Abs(c.Diff-0.3) > 1e-12 {
					t.Errorf("%+v", c)
				}
				if c.CILow > c.Diff || c.CIHigh < c.Diff || c.Correction != "holm" {
					t.Errorf("%+v", c)
				}
			},
		},
		{
			name:  "clusters: sample-level significance is not enough",
			runs:  []Samples{samples("x", xv, keys), samples("y", yv, keys)},
			ranks: map[string]RankRange{"x": {1, 2}, "y": {1, 2}},
			check: func(t *testing.T, cs []Comparison) {
				c := cs[0]
				if c.Method != MethodBootstrap || c.Clusters != 10 || c.Significant || c.P < 0.1 || math.Abs(c.Diff-0.4) > 1e-12 {
					t.Errorf("%+v", c)
				}
			},
		},
		{
			name:  "the same samples without clusters",
			runs:  []Samples{samples("x", xv, nil), samples("y", yv, nil)},
			ranks: map[string]RankRange{"x": {1, 1}, "y": {2, 2}},
			check: func(t *testing.T, cs []Comparison) {
				if c := cs[0]; c.Method != MethodMcNemar || c.Clusters != 0 || !c.Significant {
					t.Errorf("%+v", c)
				}
			},
		},
		{
			name: "continuous values: paired bootstrap on the shared samples",
			runs: []Samples{
				{RunID: "r1", Model: "p", IDs: []string{"a", "b", "c", "d", "only-p"}, Values: []float64{0.9, 0.8, 0.7, 0.95, 0}},
				{RunID: "r2", Model: "q", IDs: []string{"d", "c", "b", "a", "only-q"}, Values: []float64{0.5, 0.4, 0.5, 0.6, 1}},
			},
			// d = 0.3, 0.3, 0.3, 0.45 on a, b, c, d: the replicates never
			// reach 0, so p = 1/(B+1); with 4 samples that is significant.
			ranks: map[string]RankRange{"p": {1, 1}, "q": {2, 2}},
			check: func(t *testing.T, cs []Comparison) {
				c := cs[0]
				if c.Method != MethodBootstrap || c.N != 4 || math.Abs(c.Diff-0.3375) > 1e-12 || c.CILow < 0.3-1e-12 || c.CIHigh > 0.45+1e-12 {
					t.Errorf("%+v", c)
				}
				if want := 1 / float64(Resamples(1)+1); math.Abs(c.P-want) > 1e-15 || c.RunA != "r1" || c.RunB != "r2" {
					t.Errorf("p %v want %v; %+v", c.P, want, c)
				}
			},
		},
		{
			name:  "no shared samples",
			runs:  []Samples{{RunID: "r1", Model: "p", IDs: []string{"a"}, Values: []float64{1}}, {RunID: "r2", Model: "q", IDs: []string{"b"}, Values: []float64{0}}},
			ranks: map[string]RankRange{"p": {1, 2}, "q": {1, 2}},
			check: func(t *testing.T, cs []Comparison) {
				if c := cs[0]; c.Method != MethodNone || c.N != 0 || c.P != 1 || c.PAdjusted != 1 || c.Significant {
					t.Errorf("%+v", c)
				}
			},
		},
		{
			name:  "one run",
			runs:  []Samples{strong},
			ranks: map[string]RankRange{"strong": {1, 1}},
			check: func(t *testing.T, cs []Comparison) {
				if len(cs) != 0 {
					t.Errorf("%+v", cs)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs, ranks := Compare("bench", "acc", tc.runs)
			if n := len(tc.runs); len(cs) != n*(n-1)/2 {
				t.Fatalf("%d comparisons for %d runs", len(cs), n)
			}
			for _, c := range cs {
				if c.Dataset != "bench" || c.Metric != "acc" || c.PAdjusted < c.P {
					t.Errorf("%+v", c)
				}
			}
			tc.check(t, cs)
			if len(ranks) != len(tc.ranks) {
				t.Fatalf("ranks %v, want %v", ranks, tc.ranks)
			}
			for m, want := range tc.ranks {
				if ranks[m] != want {
					t.Errorf("rank of %s = %v, want %v (all: %v)", m, ranks[m], want, ranks)
				}
			}
		})
	}
}

// TestCompareHolm checks the correction is Holm's over the benchmark's
// comparisons, in their order.
func TestCompareHolm(t *testing.T) {
	runs := []Samples{
		samples("m1", pattern(60, 3, 3), nil), samples("m2", pattern(60, 3, 2), nil),
		samples("m3", pattern(60, 3, 1), nil), samples("m4", pattern(60, 6, 1), nil),
	}
	cs, _ := Compare("bench", "acc", runs)
	var ps []float64
	for _, c := range cs {
		ps = append(ps, c.P)
	}
	for i, adj := range stats.Holm(ps) {
		if cs[i].PAdjusted != adj || cs[i].Significant != (adj < Alpha) {
			t.Fatalf("comparison %d: %+v, Holm %v", i, cs[i], adj)
		}
	}
}

func writeShard(t *testing.T, store blob.Store, key string, rows []schemas.ResultRow) {
	t.Helper()
	w := pq.NewWriter[schemas.ResultRow](context.Background(), store, key, pq.Options{})
	if err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func row(id, cat, errClass string, metrics map[string]float64) schemas.ResultRow {
	return schemas.ResultRow{RunID: "run1", SampleID: id, Category: cat, ErrorClass: errClass, Metrics: metrics}
}

func withDetails(r schemas.ResultRow, d string) schemas.ResultRow { r.DetailsJSON = d; return r }

func TestLoadSamples(t *testing.T) {
	ctx := context.Background()
	store := blobtest.NewMemory()
	writeShard(t, store, runs.ShardKey("run1", 0), []schemas.ResultRow{
		withDetails(row("a", "en", "", map[string]float64{"acc": 1, "other": 0.5}), `{"k":"a"}`),
		row("b", "zh", schemas.ErrorClassInfrastructure, nil),                   // not scored
		row("c", "zh", "parse_error", map[string]float64{"acc": 0, "other": 0}), // a model failure: scored
	})
	writeShard(t, store, runs.ShardKey("run1", 1), []schemas.ResultRow{
		row("d", "en", schemas.ErrorClassBadSample, map[string]float64{"acc": 1}), // not scored
		row("e", "en", "", map[string]float64{"other": 1}),                        // no acc
		row("f", "", "", map[string]float64{"acc": 0.25}),
	})
	// A checkpoint of a shard in progress is not a result.
	writeShard(t, store, runs.ChunkKey("run1", 1, 0), []schemas.ResultRow{row("zz", "en", "", map[string]float64{"acc": 1})})

	byCategory := func(r schemas.ResultRow) string { return r.Category }
	s, err := LoadSamples(ctx, store, "run1", "m", "acc", byCategory)
	if err != nil {
		t.Fatal(err)
	}
	want := Samples{RunID: "run1", Model: "m", IDs: []string{"a", "c", "f"}, Values: []float64{1, 0, 0.25}, Clusters: []string{"en", "zh", ""}}
	if fmt.Sprint(s) != fmt.Sprint(want) {
		t.Fatalf("got %+v\nwant %+v", s, want)
	}
	s, err = LoadSamples(ctx, store, "run1", "m", "acc", nil)
	if err != nil || s.Clusters != nil || len(s.IDs) != 3 {
		t.Fatalf("%+v %v", s, err)
	}
	// The cluster function sees the row's details (rmtbench and trbench
	// keep their keys there).
	s, err = LoadSamples(ctx, store, "run1", "m", "acc", func(r schemas.ResultRow) string { return r.DetailsJSON })
	if err != nil || fmt.Sprint(s.Clusters) != fmt.Sprint([]string{`{"k":"a"}`, "", ""}) {
		t.Fatalf("%+v %v", s, err)
	}

	t.Run("errors", func(t *testing.T) {
		tests := []struct {
			name   string
			shards [][]schemas.ResultRow
			metric string
			is     error
			says   []string
		}{
			{"no results", nil, "acc", blob.ErrNotFound, []string{"run2", "runs/run2/results/"}},
			{"sample twice", [][]schemas.ResultRow{{row("a", "", "", map[string]float64{"acc": 1})}, {row("a", "", "", map[string]float64{"acc": 0})}},
				"acc", ErrBadResults, []string{`sample "a"`, "shard-00000.parquet", "shard-00001.parquet"}},
			{"NaN", [][]schemas.ResultRow{{row("a", "", "", map[string]float64{"acc": math.NaN()})}}, "acc", ErrBadResults, []string{`sample "a"`, "acc is NaN", "shard-00000.parquet"}},
			{"unknown metric", [][]schemas.ResultRow{{row("a", "", "", map[string]float64{"corr": 1, "instr": 0})}}, "acc", ErrNoMetric, []string{`"acc"`, "corr, instr", "run2"}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				store := blobtest.NewMemory()
				for i, rows := range tc.shards {
					writeShard(t, store, runs.ShardKey("run2", i), rows)
				}
				_, err := LoadSamples(ctx, store, "run2", "m", tc.metric, nil)
				if !errors.Is(err, tc.is) {
					t.Fatalf("err %v, want %v", err, tc.is)
				}
				for _, s := range tc.says {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("%q does not say %q", err, s)
					}
				}
			})
		}
	})

	t.Run("indexes", func(t *testing.T) {
		store := blobtest.NewMemory()
		at := func(r schemas.ResultRow, i int64) schemas.ResultRow { r.SampleIndex = i; return r }
		writeShard(t, store, runs.ShardKey("run4", 0), []schemas.ResultRow{at(row("a", "", "", map[string]float64{"acc": 1}), 7),
			at(row("b", "", schemas.ErrorClassInfrastructure, nil), 8), at(row("c", "", "", map[string]float64{"acc": 0}), 3)})
		s, err := LoadSamples(ctx, store, "run4", "m", "acc", nil)
		if err != nil || fmt.Sprint(s.IDs, s.Indexes) != "[a c] [7 3]" {
			t.Fatalf("%+v %v", s, err)
		}
	})

	t.Run("nothing scored", func(t *testing.T) {
		store := blobtest.NewMemory()
		writeShard(t, store, runs.ShardKey("run3", 0), []schemas.ResultRow{row("a", "", schemas.ErrorClassInfrastructure, nil)})
		s, err := LoadSamples(ctx, store, "run3", "m", "acc", nil)
		if err != nil || len(s.IDs) != 0 {
			t.Fatalf("%+v %v", s, err)
		}
	})
}

// TestCompareByIndex: runs paired by sample index compare exactly as the
// same runs paired by id, whatever order each run lists its samples in,
// with dense and sparse indexes, and with one side holding no ids (the
// explorer index's samples).
func TestCompareByIndex(t *testing.T) {
	const n = 500
	type smp struct {
		id  string
		idx int64
		v   float64
	}
	mk := func(model string, stride int64, order func(int) int, value func(int) float64, ids, indexes bool) Samples {
		all := make([]smp, n)
		for i := range n {
			all[i] = smp{fmt.Sprint("s", i), int64(i) * stride, value(i)}
		}
		s := Samples{RunID: "r-" + model, Model: model}
		for k := range n {
			x := all[order(k)]
			if ids {
				s.IDs = append(s.IDs, x.id)
			}
			if indexes {
				s.Indexes = append(s.Indexes, x.idx)
			}
			s.Values = append(s.Values, x.v)
		}
		return s
	}
	same := func(k int) int { return k }
	reversed := func(k int) int { return n - 1 - k }
	shuffled := func(k int) int { return (k * 7) % n } // 7 is prime to 500
	va := func(i int) float64 { return float64(i%3) / 2 }
	vb := func(i int) float64 { return float64(i%5) / 4 }
	vc := func(i int) float64 { return float64((i / 2) % 2) }
	want, wantRanks := Compare("bench", "score", []Samples{
		mk("a", 1, same, va, true, false), mk("b", 1, reversed, vb, true, false), mk("c", 1, shuffled, vc, true, false)})
	if want[0].N != n {
		t.Fatalf("by id: %+v", want[0])
	}
	for _, tc := range []struct {
		name   string
		stride int64
		ids    bool
	}{
		{"dense, ids too", 1, true},
		{"dense, no ids", 1, false},
		{"sparse", 1 << 40, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ranks := Compare("bench", "score", []Samples{
				mk("a", tc.stride, same, va, true, true), mk("b", tc.stride, reversed, vb, tc.ids, true), mk("c", tc.stride, shuffled, vc, tc.ids, true)})
			if fmt.Sprint(got, ranks) != fmt.Sprint(want, wantRanks) {
				t.Fatalf("by index:\n%+v %v\nby id:\n%+v %v", got, ranks, want, wantRanks)
			}
		})
	}
	t.Run("indexes on one side only", func(t *testing.T) {
		got, _ := Compare("bench", "score", []Samples{mk("a", 1, same, va, true, false), mk("b", 1, same, vb, false, true)})
		if got[0].N != 0 || got[0].Method != MethodNone {
			t.Fatalf("%+v", got[0])
		}
	})
}

// TestCompareDeterministic: the comparisons run concurrently, but the
// result is the same on one core or many, and from one call to the next.
func TestCompareDeterministic(t *testing.T) {
	var rs []Samples
	for m := range 5 {
		vals := make([]float64, 300)
		for i := range vals {
			vals[i] = float64((i*(m+3))%7) / 6
		}
		rs = append(rs, samples(fmt.Sprint("m", m), vals, nil))
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	one, oneRanks := Compare("bench", "score", rs)
	runtime.GOMAXPROCS(4)
	many, manyRanks := Compare("bench", "score", rs)
	if fmt.Sprint(one, oneRanks) != fmt.Sprint(many, manyRanks) {
		t.Fatalf("one core:\n%+v %v\nfour:\n%+v %v", one, oneRanks, many, manyRanks)
	}
}
