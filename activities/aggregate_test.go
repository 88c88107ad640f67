package activities

import (
	"context"
	"fmt"
	"math"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/benchmark/benchmarktest"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
)

// TestAggregateClusters: the Aggregate activity computes a run's
// statistics by cluster when its dataset has a cluster function in
// Eval.Clusters, and as before for other datasets.
func TestAggregateClusters(t *testing.T) {
	ctx := context.Background()
	store := blobtest.NewMemory()
	// Clusters A{1,1} B{0,0} C{1,0} D{1,0} (the category is the key):
	// CR1 SE = √(4/3 · 2/64) = √(1/24).
	vals := []float64{1, 1, 0, 0, 1, 0, 1, 0}
	var rows []schemas.ResultRow
	for i, v := range vals {
		rows = append(rows, schemas.ResultRow{SampleID: fmt.Sprint("s", i), SampleIndex: int64(i), Category: string(rune('A' + i/2)),
			Metrics: map[string]float64{"m": v}})
	}
	for _, dataset := range []string{"clustered", "plain"} {
		plan := runs.Plan{RunID: "r-" + dataset, Dataset: dataset, Shards: 1, Metrics: []string{"m"}}
		if err := blob.PutJSON(ctx, store, runs.PlanKey(plan.RunID), plan); err != nil {
			t.Fatal(err)
		}
		w := pq.NewWriter[schemas.ResultRow](ctx, store, runs.ShardKey(plan.RunID, 0), pq.Options{})
		if err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	clustered := benchmarktest.Task(namedTask{dataset: "clustered"}, schemas.Table{})
	clustered.Cluster, clustered.ClusterBy = func(r schemas.ResultRow) string { return r.Category }, "category"
	a := &Eval{Store: store, Benchmarks: benchmarktest.Registry(t, clustered, benchmarktest.Task(namedTask{dataset: "plain"}, schemas.Table{}))}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	summary := func(run string) aggregate.Summary {
		v, err := env.ExecuteActivity(a.Aggregate, AggregateInput{RunID: run})
		if err != nil {
			t.Fatal(err)
		}
		var sum aggregate.Summary
		if err := v.Get(&sum); err != nil {
			t.Fatal(err)
		}
		return sum
	}
	if m := summary("r-clustered").Metrics[0]; m.Clusters != 4 || m.CIMethod != "cluster-bootstrap" || math.Abs(m.StdErr-math.Sqrt(1.0/24)) > 1e-12 {
		t.Errorf("clustered: %+v", m)
	}
	// The summary table says which interval it is.
	table, err := pq.ReadAll[schemas.SummaryRow](ctx, store, runs.SummaryTableKey("r-clustered"))
	if err != nil || table[0].CIMethod != "cluster-bootstrap" {
		t.Errorf("summary.parquet %+v %v", table, err)
	}
	if m := summary("r-plain").Metrics[0]; m.Clusters != 0 || m.CIMethod != "bootstrap" {
		t.Errorf("plain: %+v", m)
	}
}

// namedTask is a task only named: Aggregate reads no task.
type namedTask struct {
	scorers.Task
	dataset string
}

func (t namedTask) Dataset() string { return t.dataset }
