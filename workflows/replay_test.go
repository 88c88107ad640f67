package workflows

import (
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/worker"
)

// TestReplay replays recorded histories (workflows/testdata/*.json, recorded
// from real runs by `go test ./internal/integration -run Build -update`)
// against the current workflow code: a non-deterministic change fails here.
func TestReplay(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no recorded histories in workflows/testdata")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflow(BuildDataset)
			r.RegisterWorkflow(EvaluateModel)
			r.RegisterWorkflow(RefreshLeaderboard)
			r.RegisterWorkflow(PublishDataset)
			if err := r.ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
				t.Fatalf("replay %s: %v", f, err)
			}
		})
	}
}
