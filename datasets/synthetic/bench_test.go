package synthetic_test

import (
	"context"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/synthetic"
	"github.com/benchline/benchline/internal/blob/blobtest"
)

// BenchmarkWritePart measures generating and encoding one 100k-row part into
// an in-memory store (no network): the CPU cost of a build per row.
func BenchmarkWritePart(b *testing.B) {
	ctx := context.Background()
	env := datasets.Env{Store: blobtest.NewMemory()}
	plan, err := synthetic.Builder{}.Plan(ctx, env, datasets.Request{Params: map[string]string{"rows": "100000"}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := (synthetic.Builder{}).WritePart(ctx, env, plan, plan.Parts[0], "p", func(int64) {}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(100000*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
