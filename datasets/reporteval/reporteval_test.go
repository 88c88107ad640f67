package reporteval_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/datasetstest"
	"github.com/benchline/benchline/datasets/reporteval"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/shareddata"
	"github.com/benchline/benchline/schemas"
	scorer "github.com/benchline/benchline/scorers/reporteval"
)

func build(t *testing.T, src string) (datasets.Plan, []schemas.ReportEvalTopic, error) {
	t.Helper()
	return datasetstest.Build[schemas.ReportEvalTopic](t, reporteval.Builder{}, datasets.Request{Source: src}, nil)
}

func TestBuildFixtures(t *testing.T) {
	plan, rows, err := build(t, reporteval.Embedded)
	if err != nil {
		t.Fatal(err)
	}
	srcs := readSources(t)
	if len(rows) != len(srcs) || len(plan.Parts) != 1 || len(plan.Sources) != 2 {
		t.Fatalf("%d rows in %d parts from %d sources, want %d in 1 from 2", len(rows), len(plan.Parts), len(plan.Sources), len(srcs))
	}
	for i, r := range rows {
		s := srcs[i]
		if r.ID != scorer.FileID(s.Topic) || r.Topic != s.Topic || r.Category != s.Category ||
			r.SourceFile != reporteval.Embedded+"/topics.jsonl" || r.SourceLine != int32(i+1) {
			t.Errorf("row %d = %s %q %q %s:%d", i, r.ID, r.Category, r.Topic, r.SourceFile, r.SourceLine)
		}
		if r.Report == nil || *r.Report != s.Report || *r.ReportFile != reporteval.Embedded+"/reports.jsonl" || *r.ReportLine != int32(i+1) {
			t.Errorf("row %d (%s): report not carried with its provenance", i, s.Slug)
		}
	}
	again, _, _ := build(t, reporteval.Embedded)
	if again.Version != plan.Version {
		t.Errorf("rebuild gave version %s, first %s", again.Version, plan.Version)
	}
}

// TestBuildReportsAsReferences: with reports=reference the reports are
// the rows' references (what baseline/reference answers) and no row has a
// report to score, so the model under test is asked; it is a version of
// its own, and reports=score is the default's version.
func TestBuildReportsAsReferences(t *testing.T) {
	withParams := func(params map[string]string) (datasets.Plan, []schemas.ReportEvalTopic, error) {
		return datasetstest.Build[schemas.ReportEvalTopic](t, reporteval.Builder{}, datasets.Request{Source: reporteval.Embedded, Params: params}, nil)
	}
	plan, rows, err := withParams(map[string]string{"reports": "reference"})
	if err != nil {
		t.Fatal(err)
	}
	srcs := readSources(t)
	for i, r := range rows {
		if r.Report != nil || r.Reference == nil || *r.Reference != srcs[i].Report || *r.ReportLine != int32(i+1) {
			t.Errorf("row %d (%s): report %v, reference not the fixture's", i, srcs[i].Slug, r.Report != nil)
		}
	}
	def, _, _ := build(t, reporteval.Embedded)
	score, _, err := withParams(map[string]string{"reports": "score"})
	if err != nil || score.Version != def.Version || plan.Version == def.Version || plan.Params["reports"] != "reference" {
		t.Errorf("versions: reference %s, score %s (%v), default %s", plan.Version, score.Version, err, def.Version)
	}
	for _, params := range []map[string]string{{"reports": "both"}, {"report": "reference"}} {
		if _, _, err := withParams(params); !errors.As(err, new(*datasets.InputError)) {
			t.Errorf("params %v: err = %v, want an InputError", params, err)
		}
	}
}

// fixtureLines returns the lines of a fixture file.
func fixtureLines(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("fixtures", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

// writeFiles writes a source directory: file name → lines.
func writeFiles(t *testing.T, files map[string][]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, lines := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestBuildTopicsOnly builds topics without reports: every report is null
// (the model under test writes them), and the version differs from the
// build with reports.
func TestBuildTopicsOnly(t *testing.T) {
	dir := writeFiles(t, map[string][]string{"high_quality_topics.jsonl": fixtureLines(t, "topics.jsonl"),
		"notes.jsonl": {"ignored"}, "README.md": {"ignored"}})
	plan, rows, err := build(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	withReports, _, _ := build(t, reporteval.Embedded)
	if len(rows) != len(readSources(t)) || len(plan.Sources) != 1 || plan.Version == withReports.Version {
		t.Fatalf("%d rows, %d sources, version %s (with reports %s)", len(rows), len(plan.Sources), plan.Version, withReports.Version)
	}
	for _, r := range rows {
		if r.Report != nil || r.ReportFile != nil || r.ReportLine != nil {
			t.Errorf("%s: report without a reports file", r.ID)
		}
	}
}

// TestBuildPartialReports leaves topics without a report null, and reads
// reports in any order, skipping blank lines.
func TestBuildPartialReports(t *testing.T) {
	reports := fixtureLines(t, "reports.jsonl")
	dir := writeFiles(t, map[string][]string{"topics.jsonl": fixtureLines(t, "topics.jsonl"),
		"qwen-reports.jsonl": {reports[5], "", reports[2]}})
	_, rows, err := build(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		want := map[int]int32{5: 1, 2: 3}
		if line, ok := want[i]; ok != (r.Report != nil) || (ok && *r.ReportLine != line) {
			t.Errorf("row %d: report %v, want one from line %d: %v", i, r.Report != nil, line, ok)
		}
	}
}

func TestBadInput(t *testing.T) {
	topics, reports := fixtureLines(t, "topics.jsonl"), fixtureLines(t, "reports.jsonl")
	with := func(lines []string, i int, line string) []string {
		out := append([]string(nil), lines...)
		out[i] = line
		return out
	}
	for _, tc := range []struct {
		name  string
		files map[string][]string
		file  string // "" for the location
		line  int
		msg   string
	}{
		{"report for an unknown topic", map[string][]string{"topics.jsonl": topics,
			"reports.jsonl": with(reports, 3, `{"topic": "Something else entirely", "report": "# R"}`)},
			"reports.jsonl", 4, `the topic "Something else entirely" matches no topic of`},
		{"topic differing in one space", map[string][]string{"topics.jsonl": topics,
			"reports.jsonl": with(reports, 0, strings.Replace(reports[0], "Assess how", "Assess  how", 1))},
			"reports.jsonl", 1, "matches no topic"},
		{"second report for a topic", map[string][]string{"topics.jsonl": topics,
			"reports.jsonl": append(append([]string(nil), reports...), reports[2])},
			"reports.jsonl", len(reports) + 1, "a second report for the topic of line 3"},
		{"empty report", map[string][]string{"topics.jsonl": topics,
			"reports.jsonl": with(reports, 1, fmt.Sprintf(`{"topic": %q, "report": " \n"}`, readSources(t)[1].Topic))},
			"reports.jsonl", 2, `empty string field "report"`},
		{"report missing its topic", map[string][]string{"topics.jsonl": topics,
			"reports.jsonl": with(reports, 6, `{"report": "# R"}`)},
			"reports.jsonl", 7, `field "topic"`},
		{"report not JSON", map[string][]string{"topics.jsonl": topics, "reports.jsonl": with(reports, 2, "{oops")},
			"reports.jsonl", 3, "not a JSON object"},
		{"report not UTF-8", map[string][]string{"topics.jsonl": topics,
			"reports.jsonl": with(reports, 0, "{\"topic\": \"\xff\", \"report\": \"x\"}")},
			"reports.jsonl", 1, "not valid UTF-8"},
		{"bad topics line", map[string][]string{"topics.jsonl": with(topics, 4, `{"topic": "no category"}`)},
			"topics.jsonl", 5, `"category_str"`},
		{"repeated topic", map[string][]string{"topics.jsonl": append(append([]string(nil), topics...), topics[0])},
			"topics.jsonl", len(topics) + 1, "topic repeats line 1"},
		{"no topics file", map[string][]string{"reports.jsonl": reports}, "", 0, "no *topics*.jsonl file"},
		{"two topics files", map[string][]string{"a-topics.jsonl": topics, "b-topics.jsonl": topics}, "", 0,
			"2 topics files (a-topics.jsonl, b-topics.jsonl)"},
		{"two reports files", map[string][]string{"topics.jsonl": topics, "reports.jsonl": reports, "more-reports.jsonl": reports},
			"", 0, "2 reports files"},
		{"a name saying both", map[string][]string{"topics.jsonl": topics, "topics-reports.jsonl": reports},
			"topics-reports.jsonl", 0, "both topics and reports"},
		{"no topics", map[string][]string{"topics.jsonl": {""}}, "topics.jsonl", 0, "no topics"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeFiles(t, tc.files)
			_, _, err := build(t, dir)
			var ie *datasets.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v, want a *datasets.InputError", err)
			}
			want := dir
			if tc.file != "" {
				want = filepath.Join(dir, tc.file)
			}
			if ie.File != want || ie.Line != tc.line || !strings.Contains(ie.Msg, tc.msg) {
				t.Fatalf("got %s:%d %q; want %s:%d containing %q", ie.File, ie.Line, ie.Msg, want, tc.line, tc.msg)
			}
		})
	}
}

// TestBuildOverHTTP builds from a plain http URL, which cannot be listed:
// the builder probes the file names.
func TestBuildOverHTTP(t *testing.T) {
	plan, rows, err := build(t, datasetstest.ServeDir(t, "fixtures"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(readSources(t)) || rows[0].Report == nil || len(plan.Sources) != 2 {
		t.Fatalf("%d rows, %d sources", len(rows), len(plan.Sources))
	}
	if fixturesPlan, _, _ := build(t, reporteval.Embedded); plan.Version != fixturesPlan.Version {
		t.Errorf("the same files over http gave version %s, embedded %s", plan.Version, fixturesPlan.Version)
	}
}

// TestParts splits topics into parts of PartRows in file order, each part
// written byte for byte the same when written again.
func TestParts(t *testing.T) {
	n := 2*reporteval.PartRows + 1
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf(`{"category_str": "Other", "topic": "Topic number %d"}`, i)
	}
	dir := writeFiles(t, map[string][]string{"topics.jsonl": lines})
	plan, rows, err := build(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Parts) != 3 || plan.Parts[2].Start != int64(2*reporteval.PartRows) || plan.Parts[2].Rows != 1 || len(rows) != n {
		t.Fatalf("parts %+v, %d rows", plan.Parts, len(rows))
	}
	for i, r := range rows {
		if r.Topic != fmt.Sprintf("Topic number %d", i) || r.SourceLine != int32(i+1) {
			t.Fatalf("row %d is %q from line %d", i, r.Topic, r.SourceLine)
		}
	}

	ctx := context.Background()
	env := datasets.Env{Store: blobtest.NewMemory()}
	plan, err = reporteval.Builder{}.Plan(ctx, env, datasets.Request{Source: reporteval.Embedded})
	if err != nil {
		t.Fatal(err)
	}
	var sums [2][32]byte
	for i := range sums {
		key := catalog.PartKey(plan.Dataset, plan.Version, 0) + fmt.Sprint(i)
		if _, err := (reporteval.Builder{}).WritePart(ctx, env, plan, plan.Parts[0], key, func(int64) {}); err != nil {
			t.Fatal(err)
		}
		b, err := blob.GetBytes(ctx, env.Store, key)
		if err != nil {
			t.Fatal(err)
		}
		sums[i] = sha256.Sum256(b)
	}
	if sums[0] != sums[1] {
		t.Error("writing the same part twice gave different bytes")
	}
}

// TestCard names the columns and says where the fixtures come from.
func TestCard(t *testing.T) {
	plan, _, err := build(t, reporteval.Embedded)
	if err != nil {
		t.Fatal(err)
	}
	card := reporteval.Builder{}.Card(catalog.Manifest{Name: plan.Dataset, Version: plan.Version, Schema: plan.Schema,
		BuilderVersion: plan.BuilderVersion, Rows: 8, Sources: plan.Sources})
	for _, want := range []string{"# reporteval @ " + plan.Version, "report_file", "HKUDS/DeepResearch-Eval",
		"embedded://reporteval/reports.jsonl", "sources.benchline.test"} {
		if !strings.Contains(card, want) {
			t.Errorf("card lacks %q", want)
		}
	}
}

// TestRealData builds the original's 100 topics with its 100 reports from
// ../shared/data/reporteval (not distributed with this repository): each
// report lands on its topic's row.
func TestRealData(t *testing.T) {
	dir := shareddata.Require(t, "reporteval")
	plan, rows, err := build(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 100 || len(plan.Sources) != 2 {
		t.Fatalf("%d rows from %d sources, want 100 from topics.jsonl and qwen-reports.jsonl", len(rows), len(plan.Sources))
	}
	raw, err := os.ReadFile(filepath.Join(dir, "qwen-reports.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for line := range bytes.Lines(raw) {
		var r struct{ Topic, Report string }
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		want[scorer.FileID(r.Topic)] = r.Report
	}
	cats := map[string]int{}
	for _, r := range rows {
		cats[r.Category]++
		if r.Report == nil || *r.Report != want[r.ID] || r.ID != scorer.FileID(r.Topic) {
			t.Errorf("%s: report missing or not its topic's", r.ID)
		}
	}
	if len(cats) != 12 || cats["Science & Technology"] != 37 {
		t.Errorf("categories %v", cats)
	}
}
