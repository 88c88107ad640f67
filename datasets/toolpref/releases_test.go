package toolpref_test

import (
	"reflect"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/datasetstest"
	"github.com/benchline/benchline/schemas"
)

// TestItemVerdicts builds the hand-written items of bfcl's
// testdata/verdicts.jsonl as bfcl's TestItemVerdicts does: each gets the
// same verdict here (the one rule, bfcl.Check), a skipped item gives no
// pair and the build goes on.
func TestItemVerdicts(t *testing.T) {
	datasetstest.CheckItemVerdicts(t, "../bfcl/testdata/verdicts.jsonl", func(t *testing.T, dir string) (datasets.Plan, []schemas.ToolPrefPair, error) {
		return build(t, datasets.Request{Source: dir})
	}, func(r schemas.ToolPrefPair) string { return r.ItemID })
}

// TestOldReleases builds bfcl's hand-written folders in the shape of
// gorilla's two v3 releases, from disk and over http: the malformed item
// is skipped and named as bfcl's TestOldReleases wants, and both sources
// give the same pairs, version and skip line.
func TestOldReleases(t *testing.T) {
	tests := []struct {
		dir     string
		skipped string // the item bfcl skips too
		stats   map[string]int64
	}{
		{"../bfcl/testdata/releases/v3-first", "parallel_multiple_1", map[string]int64{
			"skipped_item: parallel_multiple_1 (malformed ground truth)":  1,
			"skipped_items: chatable (not supported)":                     1,
			"skipped_items: exec_simple (not supported)":                  1,
			"skipped_items: multi_turn (not supported)":                   1,
			"skipped_items: rest (not supported)":                         1,
			"skipped_items: sql (not supported)":                          1,
			"skipped_items: irrelevance (no possible answers to pair on)": 1,
		}},
		{"../bfcl/testdata/releases/v3-later", "javascript_1", map[string]int64{
			"skipped_item: javascript_1 (ground truth calls an undefined function)": 1,
			"skipped_items: multi_turn (not supported)":                             1,
			"skipped_items: irrelevance (no possible answers to pair on)":           1,
		}},
	}
	for _, tc := range tests {
		var version string
		var pairs int
		for _, src := range datasetstest.DiskAndHTTP(t, tc.dir) {
			t.Run(src, func(t *testing.T) {
				plan, rows, err := build(t, datasets.Request{Source: src})
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(plan.Stats, tc.stats) {
					t.Fatalf("stats %v, want %v", plan.Stats, tc.stats)
				}
				for _, r := range rows {
					if r.ItemID == tc.skipped {
						t.Errorf("pair %s of the skipped item", r.PairID)
					}
				}
				if version == "" {
					version, pairs = plan.Version, len(rows)
				} else if plan.Version != version || len(rows) != pairs {
					t.Errorf("version %s with %d pairs, from disk %s with %d", plan.Version, len(rows), version, pairs)
				}
			})
		}
	}
}
