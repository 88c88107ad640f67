package aggregate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
)

// BenchmarkCompute aggregates a 100,000-sample run of 200 result shards in
// an in-memory store: what the Aggregate activity costs besides S3.
func BenchmarkCompute(b *testing.B) {
	ctx := context.Background()
	store := blobtest.NewMemory()
	const shards, rows = 200, 500
	r := rand.New(rand.NewPCG(1, 2))
	for i := range shards {
		batch := make([]schemas.ResultRow, rows)
		for j := range batch {
			idx := int64(i*rows + j)
			batch[j] = schemas.ResultRow{SampleID: fmt.Sprint("s", idx), SampleIndex: idx, Category: []string{"a", "b", "c", "d"}[r.IntN(4)],
				Calls: 1, PromptTokens: 40, CompletionTokens: 8, CostUSD: 0, LatencyMS: r.Float64(),
				Metrics: map[string]float64{"correct": float64(r.IntN(2)), "valid": 1}}
		}
		w := pq.NewWriter[schemas.ResultRow](ctx, store, runs.ShardKey("bench", i), pq.Options{})
		if err := w.Write(batch); err != nil {
			b.Fatal(err)
		}
		if _, err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	plan := runs.Plan{RunID: "bench", Dataset: "d", Shards: shards, Metrics: []string{"correct", "valid"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compute(ctx, store, plan, Options{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
