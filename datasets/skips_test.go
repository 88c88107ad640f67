package datasets_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets"
)

// TestSkipItemNamesUpToTheLimit: skipped items are named one by one up to
// MaxNamedItems, then counted by group; the summary counts them all and
// lists named items among the groups in order of name.
func TestSkipItemNamesUpToTheLimit(t *testing.T) {
	stats := map[string]int64{}
	datasets.SkipItems(stats, "multi_turn", "not supported", 800)
	n := datasets.MaxNamedItems + 3
	for i := range n {
		datasets.SkipItem(stats, "parallel", fmt.Sprintf("parallel_%02d", i), "malformed ground truth")
	}
	datasets.SkipItem(stats, "parallel", "parallel_00", "malformed ground truth") // named already: still named
	named := 0
	for k := range stats {
		if strings.HasPrefix(k, "skipped_item: ") {
			named++
		}
	}
	if named != datasets.MaxNamedItems || stats["skipped_items: parallel (malformed ground truth)"] != 3 ||
		stats["skipped_item: parallel_00 (malformed ground truth)"] != 2 {
		t.Fatalf("%d named, stats %v", named, stats)
	}
	s := datasets.SkipSummary(stats)
	want := fmt.Sprintf("skipped %d items: multi_turn 800 (not supported), parallel 3 (malformed ground truth), "+
		"parallel_00 x2 (malformed ground truth), parallel_01 (malformed ground truth)", 800+n+1)
	if !strings.HasPrefix(s, want) {
		t.Fatalf("summary %q, want it to start %q", s, want)
	}
}
