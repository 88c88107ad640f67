package leaderboard

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestChangesList: changes.json carries every change as one list of
// {"kind", "dataset", "model", ...} objects (what `leaderboard refresh
// --json` prints as "changes"), each kind with its details, made from the
// other lists whatever Changes.Changes holds; testdata/changes.golden.json
// is the document.
func TestChangesList(t *testing.T) {
	ch := Changes{Board: "b", Stamp: "20260104T030405Z", Previous: "20260103T030405Z", Alpha: Alpha,
		Moves: []Move{{Dataset: "bfcl", Model: "baseline/noisy-0.3", Metric: "accuracy", RunFrom: "r2", RunTo: "r2b",
			From: 1, To: 0.25, N: 12, Diff: -0.75, CILow: -1, CIHigh: -0.5, Method: "mcnemar", P: 0.002, PAdjusted: 0.004, Correction: "holm"}},
		NewModels:     []CellRef{{Dataset: "bfcl", Model: "openai/gpt-4o-mini"}},
		DroppedModels: []CellRef{{Dataset: "synthetic", Model: "baseline/reference"}},
		Failed:        []FailedCell{{Dataset: "synthetic", Model: "baseline/no-such-model", RunID: "r9", Error: "no such model"}},
		NewVersions:   []VersionChange{{Dataset: "synthetic", From: "1", To: "2"}},
		Changes:       []Change{{Kind: "stale"}}, // replaced by the lists' entries
	}
	got, err := json.MarshalIndent(ch, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden := filepath.Join("testdata", "changes.golden.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("changes.json:\n%s\nwant (%s):\n%s", got, golden, want)
	}

	// It reads back, and the list is what a script reads.
	var back struct {
		Changes []map[string]any `json:"changes"`
	}
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	kinds := []string{KindSignificantChange, KindNewModel, KindDroppedModel, KindFailedCell, KindNewVersion}
	if len(back.Changes) != len(kinds) {
		t.Fatalf("%d changes, want %d: %v", len(back.Changes), len(kinds), back.Changes)
	}
	for i, c := range back.Changes {
		if c["kind"] != kinds[i] || c["dataset"] == "" {
			t.Errorf("change %d: %v, want kind %s with its dataset", i, c, kinds[i])
		}
		if _, ok := c["model"]; !ok {
			t.Errorf("change %d has no model: %v", i, c)
		}
	}
	var decoded Changes
	if err := json.Unmarshal(got, &decoded); err != nil {
		t.Fatal(err)
	}
	if m := decoded.Changes[0].Move; m == nil || m.PAdjusted != 0.004 || decoded.Changes[3].FailedCell.Error != "no such model" {
		t.Errorf("decoded: %+v", decoded.Changes)
	}
	if empty, _ := json.Marshal(Changes{NoChange: true}); !bytes.Contains(empty, []byte(`"changes":[]`)) {
		t.Errorf("no change: %s, want \"changes\": []", empty)
	}
}
