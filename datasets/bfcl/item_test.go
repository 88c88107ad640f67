package bfcl_test

import (
	"encoding/json"
	"testing"

	"github.com/benchline/benchline/datasets/bfcl"
	"github.com/benchline/benchline/datasets/datasetstest"
)

// TestCheckVerdicts: Check alone gives each case of testdata/verdicts.jsonl
// its verdict, the one both builders give it (TestItemVerdicts).
func TestCheckVerdicts(t *testing.T) {
	for _, c := range datasetstest.ItemCases(t, "testdata/verdicts.jsonl") {
		var raw bfcl.Raw
		if err := json.Unmarshal(c.Question, &raw); err != nil {
			t.Fatal(err)
		}
		raw.GroundTruth = c.GroundTruth
		got := ""
		if _, d := bfcl.Check(raw); d != nil {
			got = d.Reason
			if d.ID != raw.ID || d.Detail == "" {
				t.Errorf("%s: defect %+v", c.Case, d)
			}
		}
		if got != c.Verdict {
			t.Errorf("%s: Check says %q, want %q", c.Case, got, c.Verdict)
		}
	}
}
