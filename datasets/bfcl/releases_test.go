package bfcl_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/bfcl"
	"github.com/benchline/benchline/datasets/datasetstest"
	"github.com/benchline/benchline/schemas"
)

// TestItemVerdicts builds each hand-written item of
// testdata/verdicts.jsonl beside a kept item of its category: an item
// whose own data is malformed is skipped and named with its reason, the
// build goes on. toolpref's TestItemVerdicts builds the same cases and
// wants the same verdicts.
func TestItemVerdicts(t *testing.T) {
	datasetstest.CheckItemVerdicts(t, "testdata/verdicts.jsonl", build, func(r schemas.BFCLItem) string { return r.ID })
}

// TestOldReleases builds hand-written folders in the shape of gorilla's
// two v3 releases (testdata/releases/README.md), and the slice of its v4
// folder, from disk and over http: the v3 names are probed, one malformed
// item is skipped and named, the unsupported categories counted, and both
// give the same rows, version and skip line.
func TestOldReleases(t *testing.T) {
	tests := []struct {
		dir   string
		rows  int
		stats map[string]int64
		line  string
	}{
		{"testdata/upstream/data", 2 * len(bfcl.Categories), map[string]int64{
			"skipped_items: multi_turn (not supported)":                                           4,
			"skipped_items: memory (not supported)":                                               1,
			"skipped_items: web_search (not supported)":                                           1,
			"skipped_files: BFCL_v4_format_sensitivity.json (format_sensitivity: not a category)": 1,
		}, "skipped 6 items: memory 1 (not supported), multi_turn 4 (not supported), web_search 1 (not supported); " +
			"skipped files: BFCL_v4_format_sensitivity.json (format_sensitivity: not a category)"},
		{"testdata/releases/v3-first", 5, map[string]int64{
			"skipped_item: parallel_multiple_1 (malformed ground truth)": 1,
			"skipped_items: chatable (not supported)":                    1,
			"skipped_items: exec_simple (not supported)":                 1,
			"skipped_items: multi_turn (not supported)":                  1,
			"skipped_items: rest (not supported)":                        1,
			"skipped_items: sql (not supported)":                         1,
		}, "skipped 6 items: chatable 1 (not supported), exec_simple 1 (not supported), multi_turn 1 (not supported), " +
			"parallel_multiple_1 (malformed ground truth), rest 1 (not supported), sql 1 (not supported)"},
		{"testdata/releases/v3-later", 5, map[string]int64{
			"skipped_item: javascript_1 (ground truth calls an undefined function)": 1,
			"skipped_items: multi_turn (not supported)":                             1,
		}, "skipped 2 items: javascript_1 (ground truth calls an undefined function), multi_turn 1 (not supported)"},
	}
	for _, tc := range tests {
		var version string
		for _, src := range datasetstest.DiskAndHTTP(t, tc.dir) {
			t.Run(src, func(t *testing.T) {
				plan, rows, err := build(t, src)
				if err != nil {
					t.Fatal(err)
				}
				if len(rows) != tc.rows || !reflect.DeepEqual(plan.Stats, tc.stats) {
					t.Fatalf("%d rows, stats %v; want %d rows, stats %v", len(rows), plan.Stats, tc.rows, tc.stats)
				}
				if s := datasets.SkipSummary(plan.Stats); s != tc.line {
					t.Errorf("skip line %q, want %q", s, tc.line)
				}
				for _, r := range rows {
					if strings.Contains(tc.dir, "v3") && !strings.Contains(r.SourceFile, "BFCL_v3_") {
						t.Errorf("%s read from %s, want a v3 file", r.ID, r.SourceFile)
					}
				}
				if version == "" {
					version = plan.Version
				} else if plan.Version != version {
					t.Errorf("version %s, from disk %s", plan.Version, version)
				}
			})
		}
	}
}
