package aggregate

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
)

// writeShards writes n result shards of 50 rows each with random scores,
// costs and latencies, and returns the values in row order.
func writeShards(t *testing.T, store blob.Store, run string, n int) (scores, costs []float64) {
	t.Helper()
	ctx := context.Background()
	r := rand.New(rand.NewPCG(7, 7))
	for i := range n {
		var rows []schemas.ResultRow
		for j := range 50 {
			idx := int64(i*50 + j)
			row := schemas.ResultRow{SampleID: fmt.Sprint("s", idx), SampleIndex: idx, Category: []string{"a", "b", "c"}[r.IntN(3)],
				Calls: 1, PromptTokens: 10, CompletionTokens: 2, CostUSD: r.Float64() / 1000, LatencyMS: r.Float64() * 100}
			if r.IntN(20) == 0 {
				row.ErrorClass = schemas.ErrorClassInfrastructure
			} else {
				row.Metrics = map[string]float64{"score": r.Float64()}
				scores = append(scores, row.Metrics["score"])
			}
			costs = append(costs, row.CostUSD)
			rows = append(rows, row)
		}
		w := pq.NewWriter[schemas.ResultRow](ctx, store, runs.ShardKey(run, i), pq.Options{})
		if err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return scores, costs
}

// TestComputeReadsShardsInOrder: shards are read in parallel but merged in
// order, so the summary is what a sequential read gives: the same values
// in the same order (the bootstrap resamples by position), the cost summed
// row by row, and the same summary on every call.
func TestComputeReadsShardsInOrder(t *testing.T) {
	ctx := context.Background()
	store := blobtest.NewMemory()
	const n = 3*shardReads + 1
	scores, costs := writeShards(t, store, "rord", n)
	plan := runs.Plan{RunID: "rord", Dataset: "d", Shards: n, Metrics: []string{"score"}}
	first, err := Compute(ctx, store, plan, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := Stat("score", scores, Options{})
	if got := first.Metrics[0]; got != want {
		t.Errorf("overall %+v, want Stat of the values in row order %+v", got, want)
	}
	var cost float64
	for _, c := range costs {
		cost += c
	}
	if first.CostUSD != cost || first.Samples != int64(n*50) || first.Scored+first.InfraFailed != first.Samples {
		t.Errorf("cost %v samples %d scored %d infra %d; want cost %v over %d samples", first.CostUSD, first.Samples, first.Scored, first.InfraFailed, cost, n*50)
	}
	for range 3 {
		again, err := Compute(ctx, store, plan, Options{})
		if err != nil || !reflect.DeepEqual(again, first) {
			t.Fatalf("a second Compute differs: %v\n%+v\n%+v", err, again, first)
		}
	}
}

// TestComputeNamesFirstBadShard: with several shards missing or broken,
// the error names the first in shard order, whichever read failed first,
// and Compute returns (the reads still in flight do not hold it).
func TestComputeNamesFirstBadShard(t *testing.T) {
	ctx := context.Background()
	store := blobtest.NewMemory()
	const n = 3 * shardReads
	writeShards(t, store, "rbad", n)
	if err := store.Delete(ctx, runs.ShardKey("rbad", 11)); err != nil {
		t.Fatal(err)
	}
	if err := blob.PutBytes(ctx, store, runs.ShardKey("rbad", 5), []byte("not parquet")); err != nil {
		t.Fatal(err)
	}
	plan := runs.Plan{RunID: "rbad", Dataset: "d", Shards: n, Metrics: []string{"score"}}
	_, err := Compute(ctx, store, plan, Options{})
	if err == nil || !strings.Contains(err.Error(), "shard 5 ("+runs.ShardKey("rbad", 5)+")") {
		t.Fatalf("err = %v, want shard 5 named", err)
	}
	if err := store.Delete(ctx, runs.ShardKey("rbad", 5)); err != nil {
		t.Fatal(err)
	}
	if err := store.Delete(ctx, runs.ShardKey("rbad", 0)); err != nil {
		t.Fatal(err)
	}
	_, err = Compute(ctx, store, plan, Options{})
	if !errors.Is(err, blob.ErrNotFound) || !strings.Contains(err.Error(), "shard 0 (") {
		t.Fatalf("err = %v, want shard 0 not found", err)
	}
}
