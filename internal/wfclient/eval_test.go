package wfclient_test

import (
	"context"
	"github.com/benchline/benchline/internal/wfclient"
	"strconv"
	"testing"
	"time"

	"github.com/benchline/benchline/activities"
	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/synthetic"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/internal/registry"
	"github.com/benchline/benchline/internal/runs"
)

// publishSynthetic writes a synthetic dataset version of rows rows in parts
// of 100 to store and returns its manifest.
func publishSynthetic(t *testing.T, store blob.Store, rows int) catalog.Manifest {
	t.Helper()
	ctx := context.Background()
	b := synthetic.Builder{}
	plan, err := b.Plan(ctx, datasets.Env{Store: store}, datasets.Request{Params: map[string]string{"rows": strconv.Itoa(rows), "part_rows": "100"}})
	if err != nil {
		t.Fatal(err)
	}
	m := catalog.Manifest{Name: plan.Dataset, Version: plan.Version, Schema: plan.Schema, BuilderVersion: plan.BuilderVersion, Params: plan.Params}
	for _, p := range plan.Parts {
		key := catalog.PartKey(plan.Dataset, plan.Version, p.Index)
		info, err := b.WritePart(ctx, datasets.Env{Store: store}, plan, p, key, func(int64) {})
		if err != nil {
			t.Fatal(err)
		}
		m.Files = append(m.Files, catalog.File{Path: catalog.PartPath(p.Index), Rows: info.Rows, Bytes: info.Bytes, SHA256: info.SHA256})
		m.Rows += info.Rows
	}
	if err := catalog.Publish(ctx, store, m, "card", catalog.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestResolveRunAgreesWithPlanRun checks that the client's plan (the run id
// it attaches to) and the plan the PlanRun activity writes agree for every
// field that shapes a run.
func TestResolveRunAgreesWithPlanRun(t *testing.T) {
	ctx := context.Background()
	store := blobtest.NewMemory()
	m := publishSynthetic(t, store, 250)
	tasks := registry.Default()
	seed := 7
	temp := float32(0.5)
	cases := []runs.Request{
		{Dataset: "synthetic", Model: "baseline/reference"},
		{Dataset: "synthetic@latest", Model: "baseline/noisy-0.3", ShardSize: 40},
		{Dataset: "synthetic@" + m.Version, Model: "openai/gpt-x", Limit: 120, Seed: &seed},
		{Dataset: "synthetic", Model: "baseline/reference", Judges: map[string]string{"judge": "baseline/first"}, Params: modelapi.Params{Temperature: &temp}},
		{Dataset: "synthetic", Model: "baseline/reference", NoCache: true, ShardSize: 1000},
	}
	created := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for _, req := range cases {
		resolved, err := wfclient.ResolveRun(ctx, store, tasks, req)
		if err != nil {
			t.Fatal(err)
		}
		a := &activities.Eval{Store: store, Benchmarks: tasks}
		res, err := a.PlanRun(ctx, activities.PlanRunInput{Request: req, CreatedAt: created})
		if err != nil {
			t.Fatal(err)
		}
		var written runs.Plan
		if err := blob.GetJSON(ctx, store, runs.PlanKey(res.RunID), &written); err != nil {
			t.Fatal(err)
		}
		if resolved.RunID != res.RunID || resolved.RunID != written.RunID {
			t.Errorf("%+v: client run %s, PlanRun %s, plan.json %s", req, resolved.RunID, res.RunID, written.RunID)
		}
		if resolved.Samples != written.Samples || resolved.Shards != written.Shards || resolved.DatasetVersion != written.DatasetVersion || len(resolved.Files) != len(written.Files) {
			t.Errorf("%+v: client plan %d samples %d shards of %s, written %d samples %d shards of %s",
				req, resolved.Samples, resolved.Shards, resolved.DatasetVersion, written.Samples, written.Shards, written.DatasetVersion)
		}
		if !written.CreatedAt.Equal(created) {
			t.Errorf("plan.json created_at %v, want %v", written.CreatedAt, created)
		}
	}
}
