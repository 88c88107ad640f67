package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/workflows"
)

// TestBuildOutputSaysWhatLatestNamed: the build's output says what latest
// named before and after it, with their rows, and warns when it moved
// back or shrank; a reused version's skips are the version's; a reporteval
// build with topics missing their report says so.
func TestBuildOutputSaysWhatLatestNamed(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	full := &catalog.Pointed{Version: "00000000000000aa", Rows: 3641, CreatedAt: t0}
	small := &catalog.Pointed{Version: "00000000000000bb", Rows: 600, CreatedAt: t0.Add(time.Hour)}
	for _, tc := range []struct {
		name   string
		res    workflows.BuildDatasetResult
		want   []string
		absent []string
	}{
		{"smaller", workflows.BuildDatasetResult{Dataset: "bfcl", Version: small.Version, Rows: 600, Files: 2,
			Latest: catalog.LatestMove{From: full, To: small}},
			[]string{"built bfcl@00000000000000bb: 600 rows in 2 files",
				"latest: bfcl@00000000000000aa (3,641 rows) -> bfcl@00000000000000bb (600 rows)\n",
				"WARNING: latest of bfcl shrank from 3,641 to 600 rows: plain bfcl (eval --dataset bfcl) now means bfcl@00000000000000bb (600 rows); the version it named is still bfcl@00000000000000aa\n"},
			nil},
		{"reused older", workflows.BuildDatasetResult{Dataset: "bfcl", Version: full.Version, Rows: 3641, Files: 13, Reused: true,
			Stats:  map[string]int64{"skipped_items: memory (not supported)": 155},
			Latest: catalog.LatestMove{From: small, To: full}},
			[]string{"already published, reused bfcl@00000000000000aa",
				"the version's build skipped 155 items: memory 155 (not supported)\n",
				"latest: bfcl@00000000000000bb (600 rows) -> bfcl@00000000000000aa (3,641 rows)\n",
				"WARNING: latest of bfcl moved back to a version built 2026-11-27T09:00:00Z"},
			nil},
		{"unchanged", workflows.BuildDatasetResult{Dataset: "bfcl", Version: full.Version, Rows: 3641, Reused: true,
			Latest: catalog.LatestMove{From: full, To: full}},
			[]string{"latest: bfcl@00000000000000aa (3,641 rows), unchanged\n"},
			[]string{"WARNING"}},
		{"variant", workflows.BuildDatasetResult{Dataset: "reporteval", Version: "00000000000000cc", Variant: true, Tag: "refs"},
			[]string{"a variant (built with --param): latest not moved; tagged reporteval@refs\n"},
			[]string{"latest:", "WARNING"}},
		{"reporteval topic without report", workflows.BuildDatasetResult{Dataset: "reporteval", Version: "00000000000000dd", Rows: 100,
			Stats: map[string]int64{"topics": 100, "topics_with_report": 99}, Latest: catalog.LatestMove{To: &catalog.Pointed{Version: "00000000000000dd", Rows: 100}}},
			[]string{"WARNING: 1 of 100 topics have no report in the reports file", "latest: (none) -> reporteval@00000000000000dd (100 rows)\n"},
			nil},
		{"reporteval every report", workflows.BuildDatasetResult{Dataset: "reporteval", Version: "00000000000000dd", Rows: 100,
			Stats: map[string]int64{"topics": 100, "topics_with_report": 100}},
			nil, []string{"WARNING", "no report"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			writeBuildResult(&b, tc.res, "benchline")
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, b.String())
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(b.String(), a) {
					t.Errorf("output has %q:\n%s", a, b.String())
				}
			}
			rep := newBuildReport(tc.res)
			if tc.res.Latest.Touched() != (rep.Latest != nil) {
				t.Fatalf("--json latest = %+v for %+v", rep.Latest, tc.res.Latest)
			}
			if rep.Latest != nil && (rep.Latest.Shrank != tc.res.Latest.Shrank() || rep.Latest.MovedBack != tc.res.Latest.Back() ||
				(rep.Latest.Warning != "") != strings.Contains(b.String(), "WARNING: latest")) {
				t.Errorf("--json latest = %+v", rep.Latest)
			}
		})
	}
}
