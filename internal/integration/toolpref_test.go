package integration

import (
	"context"
	"testing"

	"github.com/benchline/benchline/internal/wfclient"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/toolpref"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/schemas"
)

// TestBuildToolPrefLive builds toolpref on the real stack with candidates
// sampled at build time from two baseline models: the worker's Generate
// activities call the stack's baseline server through the gateway, and the
// server answers from the references those activities wrote to MinIO.
// A rebuild reuses the version without calling any model.
func TestBuildToolPrefLive(t *testing.T) {
	req := datasets.Request{Source: toolpref.Embedded, Params: map[string]string{
		"candidates": "baseline/noisy-0.3@0.7x2,baseline/reference@0x1", "synthetic": "false", "pairs": "50", "per_item": "0", "sample_unit": "4"}}
	res, err := buildVia(t, toolpref.Name, req)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Reused && (res.Generated.Units != 2 || res.Generated.Outputs != 24 || res.Generated.Skipped != 0) {
		t.Fatalf("result %+v: want 2 units of 24 sampled replies", res)
	}
	ctx := context.Background()
	m := verifiedManifest(t, res.Dataset, res.Version)
	sampled := 0
	for _, s := range m.Sources {
		if toolpref.IsSampled(s.Name) {
			sampled++
		}
	}
	if sampled != 2 || m.Params["candidates"] != "baseline/noisy-0.3@0.7x2,baseline/reference@0x1" {
		t.Fatalf("manifest: %d sampled sources, params %v", sampled, m.Params)
	}
	rows, err := pq.ReadAll[schemas.ToolPrefPair](ctx, stack.Store, catalog.PartKey(m.Name, m.Version, 0))
	if err != nil {
		t.Fatal(err)
	}
	refChosen := 0
	for _, r := range rows {
		if r.ChosenScore <= r.RejectedScore || r.RejectedSource == "baseline/reference" {
			t.Errorf("pair %s: %s %v over %s %v", r.PairID, r.ChosenSource, r.ChosenScore, r.RejectedSource, r.RejectedScore)
		}
		if r.ChosenSource == "baseline/reference" && r.ChosenScore == 1 {
			refChosen++
		}
	}
	if refChosen == 0 {
		t.Fatalf("no pair chooses a baseline/reference reply (did the baseline server find the references?): %d pairs", len(rows))
	}
	if *update && !res.Reused {
		saveHistory(t, wfclient.BuildWorkflowID(toolpref.Name, req), "build_dataset_toolpref_live.json")
	}
	again, err := buildVia(t, toolpref.Name, req)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Reused || again.Version != res.Version || again.Rows != res.Rows || again.Generated.Calls != 0 {
		t.Fatalf("rebuild %+v, want the reuse of %s", again, res.Version)
	}
}
