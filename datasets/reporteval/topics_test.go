package reporteval

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/shareddata"
)

func TestReadTopics(t *testing.T) {
	got, err := ReadTopics(strings.NewReader(
		`{"category_str": "Education", "topic": "How do children learn?"}`+"\n\n"+
			`{"topic": "Why is the sky blue?", "category_str": "Science & Technology", "extra": 1}`+"\n"), "t.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	// The blank line counts: the second topic is on line 3.
	want := []Topic{{"Education", "How do children learn?", 1}, {"Science & Technology", "Why is the sky blue?", 3}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("ReadTopics = %+v, want %+v", got, want)
	}
}

func TestReadTopicsBadInput(t *testing.T) {
	const ok = `{"category_str": "Other", "topic": "A"}` + "\n"
	for _, tc := range []struct {
		name, input string
		line        int
		msg         string
	}{
		{"not JSON", ok + "{oops\n", 2, "not a JSON object"},
		{"not an object", ok + "\n[1, 2]\n", 3, "not a JSON object"},
		{"missing category", ok + `{"topic": "B"}` + "\n", 2, `"category_str"`},
		{"empty topic", `{"category_str": "Other", "topic": ""}` + "\n", 1, `"topic"`},
		{"category not a string", `{"category_str": 5, "topic": "B"}` + "\n", 1, "category_str"},
		{"repeated topic", ok + ok, 2, "topic repeats line 1"},
		{"not UTF-8", ok + "{\"category_str\": \"Other\", \"topic\": \"\xff\"}\n", 2, "not valid UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadTopics(strings.NewReader(tc.input), "topics.jsonl")
			var ie *datasets.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v, want a *datasets.InputError", err)
			}
			if ie.File != "topics.jsonl" || ie.Line != tc.line || !strings.Contains(ie.Msg, tc.msg) {
				t.Errorf("err = %v, want topics.jsonl:%d: …%s…", err, tc.line, tc.msg)
			}
			if want := fmt.Sprintf("topics.jsonl:%d:", tc.line); !strings.Contains(err.Error(), want) {
				t.Errorf("message %q does not name %s", err, want)
			}
		})
	}
}

func TestLoadTopicsFileMissing(t *testing.T) {
	if _, err := LoadTopicsFile(filepath.Join(t.TempDir(), "none.jsonl")); err == nil {
		t.Fatal("no error for a missing file")
	}
}

// TestRealTopics reads the original's topics file: 100 topics in the 12
// categories with the counts of ../shared/docs/benchmarks.md, each report
// of the bundled report file on one of them.
func TestRealTopics(t *testing.T) {
	dir := shareddata.Require(t, "reporteval")
	topics, err := LoadTopicsFile(filepath.Join(dir, "topics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(topics) != 100 {
		t.Errorf("%d topics, want 100", len(topics))
	}
	counts := map[string]int{}
	for _, tp := range topics {
		counts[tp.Category]++
	}
	want := map[string]int{
		"Science & Technology": 37, "Economy & Business": 16, "Health & Medicine": 10, "Education": 8,
		"Art, Music & Literature": 7, "Politics & Society": 5, "History & Culture": 5,
		"Entertainment & Fashion": 5, "Sports & Fitness": 2, "Other": 2, "Environment & Nature": 2,
		"Lifestyle": 1,
	}
	if !maps.Equal(counts, want) {
		t.Errorf("categories = %v, want %v", counts, want)
	}
	// Every bundled report is on one of the topics (ReadReports checks it).
	f, err := os.Open(filepath.Join(dir, "qwen-reports.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	reports, err := ReadReports(f, "qwen-reports.jsonl", topics, "topics.jsonl")
	if err != nil || len(reports) == 0 {
		t.Errorf("reports: %d, %v", len(reports), err)
	}
}
