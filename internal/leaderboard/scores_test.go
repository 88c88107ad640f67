package leaderboard

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/aggregate"
)

// TestRunCostLabelledBatch: scores.json labels a batch-mode run's cost with
// "batch": true beside "cost_usd" in the run's summary, and an interactive
// run carries no batch field (the field is additive: older readers and
// older stamps see what they saw before). A stamp read back keeps the label.
func TestRunCostLabelledBatch(t *testing.T) {
	for _, tc := range []struct {
		name      string
		batch     bool
		wantField string // in the run's summary; "" for none
	}{
		{"interactive", false, ""},
		{"batch", true, `"cost_usd":0.0123,"batch":true`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Scores{Board: "demo", Stamp: "20261127T103000Z", Runs: []Run{{RunID: "r1", Dataset: "bfcl", Model: "acme/model-a",
				Summary: aggregate.Summary{RunID: "r1", CostUSD: 0.0123, Batch: tc.batch}}}}
			b, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			text := string(b)
			if tc.wantField != "" && !strings.Contains(text, tc.wantField) {
				t.Errorf("scores.json %s: want %s", text, tc.wantField)
			}
			if tc.wantField == "" && strings.Contains(text, `"batch"`) {
				t.Errorf("scores.json of an interactive run has a batch field: %s", text)
			}
			var back Scores
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if back.Runs[0].Summary.Batch != tc.batch || back.Runs[0].Summary.CostUSD != 0.0123 {
				t.Errorf("read back: batch %t cost %v, want %t 0.0123", back.Runs[0].Summary.Batch, back.Runs[0].Summary.CostUSD, tc.batch)
			}
		})
	}
}
