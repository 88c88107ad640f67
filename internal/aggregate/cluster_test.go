package aggregate

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
)

func TestClusterStat(t *testing.T) {
	big := make([]float64, 30000)
	bigKeys := make([]string, len(big))
	for i := range big {
		big[i] = float64(i % 4 / 3)
		bigKeys[i] = fmt.Sprint("c", i%300)
	}
	tests := []struct {
		name     string
		xs       []float64
		keys     []string
		mean, se float64
		method   string
		clusters int
	}{
		// Clusters A{1,1} B{0,0} C{1,0} D{1,0}: x̄ = 0.5; residual sums per
		// cluster +1, −1, 0, 0; SE² = G/(G−1)·Σ/n² = 4/3 · 2/64 = 1/24.
		{"four clusters", []float64{1, 1, 0, 0, 1, 0, 1, 0}, []string{"A", "A", "B", "B", "C", "C", "D", "D"}, 0.5, math.Sqrt(1.0 / 24), "cluster-bootstrap", 4},
		// Every sample its own cluster: CR1 is s/√n. xs 0,1,1,1: x̄ = 3/4,
		// s² = (9/16 + 3/16)/3 = 1/4, s/√n = 1/4.
		{"singletons", []float64{0, 1, 1, 1}, []string{"", "", "", ""}, 0.75, 0.25, "cluster-bootstrap", 4},
		// One cluster: not estimable; the unclustered statistics, G = 1.
		{"one cluster", []float64{0, 1, 1, 1}, []string{"x", "x", "x", "x"}, 0.75, 0.25, "bootstrap", 1},
		{"no clusters", []float64{0, 1, 1, 1}, nil, 0.75, 0.25, "bootstrap", 0},
		{"no samples", nil, []string{}, 0, 0, "none", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := ClusterStat("m", tc.xs, tc.keys, Options{})
			if s.N != len(tc.xs) || math.Abs(s.Mean-tc.mean) > 1e-12 || math.Abs(s.StdErr-tc.se) > 1e-12 || s.CIMethod != tc.method || s.Clusters != tc.clusters {
				t.Fatalf("%+v; want mean %v se %v %s G=%d", s, tc.mean, tc.se, tc.method, tc.clusters)
			}
			if s.N > 0 && (s.CILow > s.Mean || s.CIHigh < s.Mean || s.CILow < 0 || s.CIHigh > 1) {
				t.Fatalf("interval [%v, %v] for mean %v", s.CILow, s.CIHigh, s.Mean)
			}
		})
	}
	t.Run("above BootstrapMaxN: mean ± 1.96 CR1 SE", func(t *testing.T) {
		s := ClusterStat("m", big, bigKeys, Options{})
		if s.CIMethod != "cluster-normal" || s.Clusters != 300 || math.Abs(s.CIHigh-s.Mean-1.96*s.StdErr) > 1e-12 {
			t.Fatalf("%+v", s)
		}
	})
	t.Run("seeded", func(t *testing.T) {
		xs, keys := big[:3000], bigKeys[:3000]
		a, b, c := ClusterStat("m", xs, keys, Options{}), ClusterStat("m", xs, keys, Options{}), ClusterStat("m", xs, keys, Options{Seed: 9})
		if a != b || a == c {
			t.Fatalf("%+v %+v %+v", a, b, c)
		}
	})
}

// TestComputeClusters writes result rows whose samples share clusters
// (the cluster key in the details, as rmtbench's character) and checks
// the summary's statistics are clustered overall and per category, with
// the hand-computed CR1 standard error.
func TestComputeClusters(t *testing.T) {
	ctx := context.Background()
	store := blobtest.NewMemory()
	plan := runs.Plan{RunID: "rclu", Dataset: "d", Shards: 2, Metrics: []string{"score"}}
	detail := func(c string) string { b, _ := json.Marshal(map[string]string{"cluster": c}); return string(b) }
	// The four-cluster example of TestClusterStat, across two shards and
	// two categories, plus an infrastructure failure (not scored) in a
	// fifth cluster.
	vals := []float64{1, 1, 0, 0, 1, 0, 1, 0}
	keys := []string{"A", "A", "B", "B", "C", "C", "D", "D"}
	var shards [2][]schemas.ResultRow
	for i, v := range vals {
		shards[i/4] = append(shards[i/4], schemas.ResultRow{SampleID: fmt.Sprint("s", i), SampleIndex: int64(i), Category: []string{"x", "y"}[i%2],
			Metrics: map[string]float64{"score": v}, DetailsJSON: detail(keys[i])})
	}
	shards[1] = append(shards[1], schemas.ResultRow{SampleID: "s8", SampleIndex: 8, Category: "x", ErrorClass: schemas.ErrorClassInfrastructure, DetailsJSON: detail("E")})
	for i, rows := range shards {
		w := pq.NewWriter[schemas.ResultRow](ctx, store, runs.ShardKey(plan.RunID, i), pq.Options{})
		if err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	var seen []string
	var mu sync.Mutex // Compute reads shards, and calls cluster, in parallel
	cluster := func(r schemas.ResultRow) string {
		var d struct{ Cluster string }
		_ = json.Unmarshal([]byte(r.DetailsJSON), &d)
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, r.SampleID)
		return d.Cluster
	}
	s, err := Compute(ctx, store, plan, Options{Cluster: cluster})
	if err != nil {
		t.Fatal(err)
	}
	m := s.Metrics[0]
	if m.N != 8 || m.Clusters != 4 || m.CIMethod != "cluster-bootstrap" || math.Abs(m.StdErr-math.Sqrt(1.0/24)) > 1e-12 {
		t.Fatalf("overall %+v", m)
	}
	if len(seen) != 8 {
		t.Errorf("cluster asked for %v, want the 8 scored samples", seen)
	}
	// Category x holds samples 0, 2, 4, 6: values 1, 0, 1, 1 in clusters
	// A, B, C, D: one sample per cluster, so CR1 is s/√n: x̄ = 3/4,
	// s² = (3·1/16 + 9/16)/3 = 1/4, s/√n = 1/2/2 = 1/4.
	x := s.Categories[0].Metrics[0]
	if s.Categories[0].Category != "x" || x.Clusters != 4 || x.CIMethod != "cluster-bootstrap" || math.Abs(x.StdErr-0.25) > 1e-12 {
		t.Fatalf("category x %+v", x)
	}
	if rows := s.Rows(); rows[0].CIMethod != "cluster-bootstrap" {
		t.Errorf("summary row %+v", rows[0])
	}

	// Without a cluster function the same run is unclustered.
	s, err = Compute(ctx, store, plan, Options{})
	if err != nil || s.Metrics[0].Clusters != 0 || s.Metrics[0].CIMethod != "bootstrap" {
		t.Fatalf("%+v %v", s.Metrics, err)
	}
}
