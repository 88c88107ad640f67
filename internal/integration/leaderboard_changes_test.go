package integration

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/bfcl"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/leaderboard"
)

// TestLeaderboardRefreshChangesJSON: `leaderboard refresh --json` carries
// "changes" as the list of {"kind", "dataset", "model", ...} objects the
// stamp's changes.json holds, so a script alerting on a new model needs
// nothing from the bucket; without --json the command says it in one
// line, counting models (not cells).
func TestLeaderboardRefreshChangesJSON(t *testing.T) {
	bin := buildBinary(t)
	if _, err := buildVia(t, bfcl.Name, datasets.Request{Source: bfcl.Embedded}); err != nil {
		t.Fatal(err)
	}
	const head = "name: it-changes\nbenchmarks: [{dataset: bfcl}]\nsettings: {seed: 9132, limit: 3}\n"
	out, errs, err := boardCLI(t, bin, "refresh", writeBoard(t, head+"models: [baseline/reference]\n"), "--json")
	if err != nil {
		t.Fatalf("refresh: %v\n%s", err, errs)
	}
	var rep struct {
		Stamp   string           `json:"stamp"`
		Changes []map[string]any `json:"changes"`
		Summary string           `json:"changes_summary"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("refresh --json printed %q: %v", out, err)
	}
	want := []map[string]any{{"kind": "new_model", "dataset": "bfcl", "model": "baseline/reference"}}
	if !reflect.DeepEqual(rep.Changes, want) || rep.Summary != "1 new model (first stamp)" {
		t.Errorf("changes %v (%q), want %v", rep.Changes, rep.Summary, want)
	}
	// The same objects as the stamp's changes.json.
	var stored struct {
		Changes []map[string]any `json:"changes"`
	}
	if err := blob.GetJSON(context.Background(), stack.Store, leaderboard.ChangesKey("it-changes", rep.Stamp), &stored); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(stored.Changes, rep.Changes) {
		t.Errorf("changes.json has %v, --json printed %v", stored.Changes, rep.Changes)
	}

	// A model added: the line says so, naming the previous stamp.
	time.Sleep(1100 * time.Millisecond) // a later stamp (they have seconds)
	out, errs, err = boardCLI(t, bin, "refresh", writeBoard(t, head+"models: [baseline/reference, baseline/noisy-0.5]\n"))
	if err != nil {
		t.Fatalf("second refresh: %v\n%s", err, errs)
	}
	if line := "changes: 1 new model since " + rep.Stamp + "\n"; !strings.Contains(out, line) {
		t.Errorf("refresh printed %q, want the line %q", out, line)
	}
}
