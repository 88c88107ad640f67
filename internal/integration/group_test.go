package integration

import (
	"context"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/wfclient"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"

	"github.com/benchline/benchline/activities"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/workflows"
)

// TestEvalGroupsFastShards runs 3,000 samples in 30 shards of 100 against
// the baseline server, two activities at once, continuing as new every 16
// shards: once shards report their time, the workflow hands activities
// groups of consecutive shards (a 2 s target), in both workflow runs. Every
// sample has exactly one result row, the summary is right, and the last
// workflow run's history (grouped activities after a continue-as-new) is
// the replay test's evaluate_model_grouped.json with -update.
func TestEvalGroupsFastShards(t *testing.T) {
	const n = 3000
	ds := buildSynthetic(t, n, 31)
	res, err := evalVia(t, "", workflows.EvaluateModelInput{
		Request:             runs.Request{Dataset: ds, Model: "baseline/reference", ShardSize: 100},
		MaxConcurrentShards: 2, ShardsPerRun: 16, ShardTarget: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	checkAllExact(t, res, n)

	// The last workflow run (after the continue-as-new) groups shards.
	sizes, continued := runShardSizes(t, res.RunID)
	if !continued {
		t.Fatal("the run did not continue as new")
	}
	sum, grouped := 0, false
	for _, s := range sizes {
		sum += s
		grouped = grouped || s > 1
	}
	if !grouped || sum != 14 {
		t.Fatalf("the last workflow run's RunShard activities had %v shards (want 14 in all, some grouped)", sizes)
	}
	if *update {
		saveHistory(t, wfclient.EvalWorkflowID(res.RunID), "evaluate_model_grouped.json")
	}
}

// TestEvalHintGroupsFirstWave: a run records its time per sample for the
// model and dataset, and the next run of the model on the dataset groups
// its first wave of shards from it (2,000 samples in 20 shards of 100,
// two activities at once: the first two activities hold several shards
// each), each sample still with exactly one result row. The second run's
// history is the replay test's evaluate_model_hinted.json with -update.
func TestEvalHintGroupsFirstWave(t *testing.T) {
	const n = 2000
	ds := buildSynthetic(t, n, 37)
	in := workflows.EvaluateModelInput{
		Request:             runs.Request{Dataset: ds, Model: "baseline/reference", ShardSize: 100},
		MaxConcurrentShards: 2, ShardTarget: 2 * time.Second}
	if _, err := evalVia(t, "", in); err != nil {
		t.Fatal(err)
	}
	seed := 2
	in.Request.Seed = &seed // another run of the same model on the same dataset
	res, err := evalVia(t, "", in)
	if err != nil {
		t.Fatal(err)
	}
	checkAllExact(t, res, n)
	sizes, _ := runShardSizes(t, res.RunID)
	if len(sizes) < 2 || sizes[0] < 2 || sizes[1] < 2 || sizes[0] != sizes[1] {
		t.Fatalf("the second run's RunShard activities had %v shards: want the first two grouped alike", sizes)
	}
	if *update {
		saveHistory(t, wfclient.EvalWorkflowID(res.RunID), "evaluate_model_hinted.json")
	}
}

// runShardSizes returns how many shards each RunShard activity of the
// run's last workflow run was handed, in the order they were scheduled,
// and whether that workflow run continued another.
func runShardSizes(t *testing.T, runID string) (sizes []int, continued bool) {
	t.Helper()
	iter := stack.Client.GetWorkflowHistory(context.Background(), wfclient.EvalWorkflowID(runID), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.GetWorkflowExecutionStartedEventAttributes(); a != nil {
			continued = a.GetContinuedExecutionRunId() != ""
		}
		a := ev.GetActivityTaskScheduledEventAttributes()
		if a == nil || a.GetActivityType().GetName() != "RunShard" {
			continue
		}
		var in activities.RunShardInput
		if err := converter.GetDefaultDataConverter().FromPayloads(a.GetInput(), &in); err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, max(in.Shards, 1))
	}
	return sizes, continued
}
