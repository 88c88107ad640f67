package bfcl_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/bfcl"
	"github.com/benchline/benchline/internal/shareddata"
	"github.com/benchline/benchline/schemas"
)

// checkUpstream builds dir (a BFCL data folder as gorilla publishes it),
// compares every row with its question and answer lines, and returns the
// rows by category and the plan's stats.
func checkUpstream(t *testing.T, dir string) (map[string]int, map[string]int64) {
	t.Helper()
	plan, items, err := build(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	byCat := map[string]int{}
	lines := map[string][]string{}
	for _, it := range items {
		byCat[it.Category]++
		if strings.Contains(it.SourceFile, dir) {
			t.Errorf("%s: source_file %q holds the build's local directory", it.ID, it.SourceFile)
		}
		q, ok := lines[it.Category]
		if !ok {
			b, err := os.ReadFile(filepath.Join(dir, "BFCL_v4_"+it.Category+".json"))
			if err != nil {
				t.Fatal(err)
			}
			q = strings.Split(string(b), "\n")
			lines[it.Category] = q
		}
		var want struct {
			ID       string `json:"id"`
			Question any    `json:"question"`
			Function any    `json:"function"`
		}
		if err := json.Unmarshal([]byte(q[it.SourceLine-1]), &want); err != nil {
			t.Fatal(err)
		}
		var turns, funcs any
		_ = json.Unmarshal([]byte(it.TurnsJSON), &turns)
		_ = json.Unmarshal([]byte(it.FunctionsJSON), &funcs)
		if want.ID != it.ID || !reflect.DeepEqual(want.Question, turns) || !reflect.DeepEqual(want.Function, funcs) {
			t.Errorf("%s (line %d) differs from the upstream line", it.ID, it.SourceLine)
		}
	}
	return byCat, plan.Stats
}

// TestUpstreamAsPublished builds a slice of BFCL's data folder exactly as
// gorilla publishes it (testdata/upstream/README.md): the unsupported
// categories and format_sensitivity are skipped and counted, the rest built.
func TestUpstreamAsPublished(t *testing.T) {
	byCat, stats := checkUpstream(t, "testdata/upstream/data")
	if len(byCat) != len(bfcl.Categories) {
		t.Errorf("built categories %v, want the %d supported ones", byCat, len(bfcl.Categories))
	}
	for cat, n := range byCat {
		if n != 2 {
			t.Errorf("%s: %d rows, want 2", cat, n)
		}
	}
	want := map[string]int64{
		"skipped_items: multi_turn (not supported)":                                           4,
		"skipped_items: memory (not supported)":                                               1,
		"skipped_items: web_search (not supported)":                                           1,
		"skipped_files: BFCL_v4_format_sensitivity.json (format_sensitivity: not a category)": 1,
	}
	if !reflect.DeepEqual(stats, want) {
		t.Errorf("stats = %v, want %v", stats, want)
	}
	if s := datasets.SkipSummary(stats); s != "skipped 6 items: memory 1 (not supported), multi_turn 4 (not supported), web_search 1 (not supported); skipped files: BFCL_v4_format_sensitivity.json (format_sensitivity: not a category)" {
		t.Errorf("summary = %q", s)
	}
}

// TestUpstreamFull builds the whole data folder named by
// BENCHLINE_UPSTREAM_BFCL and checks its counts: 3,641 single-turn items,
// 1,055 skipped.
func TestUpstreamFull(t *testing.T) {
	dir := shareddata.Upstream(t, "BENCHLINE_UPSTREAM_BFCL", "gorilla's berkeley-function-call-leaderboard/bfcl_eval/data")
	byCat, stats := checkUpstream(t, dir)
	total := 0
	for _, n := range byCat {
		total += n
	}
	if total != 3641 {
		t.Errorf("%d rows (%v), want 3641", total, byCat)
	}
	if s := datasets.SkipSummary(stats); !strings.HasPrefix(s, "skipped 1,055 items: memory 155 (not supported), multi_turn 800 (not supported), web_search 100 (not supported)") ||
		!strings.Contains(s, "format_sensitivity: not a category") {
		t.Errorf("skips: %s", s)
	}
}

var _ = schemas.BFCLItem{}
