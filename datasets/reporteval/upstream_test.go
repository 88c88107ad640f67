package reporteval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/shareddata"
	scorer "github.com/benchline/benchline/scorers/reporteval"
)

// checkUpstream builds dir (DeepResearch-ReportEval's data/ folder as
// published: topic/high_quality_topics.jsonl, report/qwen-reports.jsonl)
// and compares every row with its topic and report lines. It returns the
// rows and how many have a report.
func checkUpstream(t *testing.T, dir string) (rows, withReport int, stats map[string]int64) {
	t.Helper()
	plan, got, err := build(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	topics := readJSONL(t, filepath.Join(dir, "topic", "high_quality_topics.jsonl"))
	reports := map[string]string{}
	for _, r := range readJSONL(t, filepath.Join(dir, "report", "qwen-reports.jsonl")) {
		reports[r["topic"]] = r["report"]
	}
	if len(got) != len(topics) {
		t.Fatalf("%d rows, the topics file has %d", len(got), len(topics))
	}
	for i, r := range got {
		want := topics[i]
		if r.Topic != want["topic"] || r.Category != want["category_str"] || r.ID != scorer.FileID(want["topic"]) {
			t.Errorf("row %d = %s/%q, want topic line %d", i, r.Category, r.Topic, i+1)
		}
		if strings.Contains(r.SourceFile, dir) || (r.ReportFile != nil && strings.Contains(*r.ReportFile, dir)) {
			t.Errorf("row %d names the build's local directory: %s", i, r.SourceFile)
		}
		rep, ok := reports[r.Topic]
		switch {
		case ok && (r.Report == nil || *r.Report != rep):
			t.Errorf("row %d: report differs from the upstream's", i)
		case !ok && r.Report != nil:
			t.Errorf("row %d: a report the upstream does not have", i)
		case ok:
			withReport++
		}
	}
	return len(got), withReport, plan.Stats
}

func readJSONL(t *testing.T, path string) []map[string]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for line := range bytes.Lines(raw) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var m map[string]string
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// TestUpstreamAsPublished builds a slice of the original's data/ folder
// with its subfolders as published (testdata/upstream/README.md).
func TestUpstreamAsPublished(t *testing.T) {
	rows, with, stats := checkUpstream(t, "testdata/upstream/data")
	if rows != 3 || with != 2 || stats["topics"] != 3 || stats["topics_with_report"] != 2 {
		t.Errorf("%d rows, %d with a report, stats %v; want 3, 2", rows, with, stats)
	}
	// The topics folder alone builds the topics, and says no topic has a report.
	plan, got, err := build(t, "testdata/upstream/data/topic")
	if err != nil || len(got) != 3 || plan.Stats["topics_with_report"] != 0 {
		t.Errorf("topic/ alone: %d rows, stats %v, err %v; want 3 rows, none with a report", len(got), plan.Stats, err)
	}
}

// TestUpstreamSectionsIDs: `score reporteval-sections` on the original's
// reports file (which has no ids) gives each line the id the builder gives
// its topic's row.
func TestUpstreamSectionsIDs(t *testing.T) {
	_, rows, err := build(t, "testdata/upstream/data")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, r := range rows {
		if r.Report != nil {
			ids[r.ID] = true
		}
	}
	in, err := os.Open("testdata/upstream/data/report/qwen-reports.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var out bytes.Buffer
	if err := scorer.ScoreSectionsLines(context.Background(), in, &out); err != nil {
		t.Fatal(err)
	}
	n := 0
	for line := range bytes.Lines(out.Bytes()) {
		var o struct{ ID string }
		if err := json.Unmarshal(line, &o); err != nil || !ids[o.ID] {
			t.Errorf("sections line %d: id %q (%v) is not a built row's", n+1, o.ID, err)
		}
		n++
	}
	if n != len(ids) {
		t.Errorf("%d sections lines, %d rows with a report", n, len(ids))
	}
}

// TestUpstreamFull builds the whole data/ folder named by
// BENCHLINE_UPSTREAM_REPORTEVAL: 100 topics with their 100 reports.
func TestUpstreamFull(t *testing.T) {
	dir := shareddata.Upstream(t, "BENCHLINE_UPSTREAM_REPORTEVAL", "HKUDS/DeepResearch-Eval's data/ folder")
	rows, with, stats := checkUpstream(t, dir)
	if rows != 100 || with != 100 || stats["topics_with_report"] != 100 {
		t.Errorf("%d rows, %d with a report (stats %v); want 100 and 100", rows, with, stats)
	}
}
