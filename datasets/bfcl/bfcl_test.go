package bfcl_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/bfcl"
	"github.com/benchline/benchline/datasets/datasetstest"
	"github.com/benchline/benchline/internal/shareddata"
	"github.com/benchline/benchline/schemas"
)

// build plans and writes every part, as the workflow's activities do.
func build(t *testing.T, src string) (datasets.Plan, []schemas.BFCLItem, error) {
	t.Helper()
	return datasetstest.Build[schemas.BFCLItem](t, bfcl.Builder{}, datasets.Request{Source: src}, nil)
}

func TestBuildFixtures(t *testing.T) {
	plan, items, err := build(t, bfcl.Embedded)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 14 || len(plan.Parts) != 6 {
		t.Fatalf("%d items in %d parts, want 14 in 6", len(items), len(plan.Parts))
	}
	byID := map[string]schemas.BFCLItem{}
	for _, it := range items {
		byID[it.ID] = it
	}
	java := byID["simple_java_1"]
	if java.Language != "java" || java.Category != "simple_java" || java.GroundTruthJSON == nil || !strings.Contains(*java.GroundTruthJSON, `"size": [16]`) {
		t.Errorf("simple_java_1 = %+v", java)
	}
	if byID["simple_javascript_0"].Language != "javascript" || byID["multiple_0"].Language != "python" {
		t.Error("language mapping wrong")
	}
	if irr := byID["irrelevance_0"]; irr.GroundTruthJSON != nil || irr.NumFunctions != 1 || irr.NumTurns != 1 {
		t.Errorf("irrelevance_0 = %+v", irr)
	}
	var turns [][]map[string]string
	if err := json.Unmarshal([]byte(byID["parallel_0"].TurnsJSON), &turns); err != nil || turns[0][0]["role"] != "user" {
		t.Errorf("turns_json does not round-trip: %v", err)
	}
	// Same sources, same version.
	again, _, _ := build(t, bfcl.Embedded)
	if again.Version != plan.Version {
		t.Errorf("rebuild gave version %s, first %s", again.Version, plan.Version)
	}
}

// writeDir copies the fixtures to a temp dir, applying edits (file -> new content).
func writeDir(t *testing.T, edits map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"BFCL_v4_simple_python.json", "possible_answer/BFCL_v4_simple_python.json", "BFCL_v4_irrelevance.json"} {
		b, err := os.ReadFile(filepath.Join("fixtures", name))
		if err != nil {
			t.Fatal(err)
		}
		if e, ok := edits[name]; ok {
			b = []byte(e)
		}
		p := filepath.Join(dir, name)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestBadInput(t *testing.T) {
	q, _ := os.ReadFile("fixtures/BFCL_v4_simple_python.json")
	a, _ := os.ReadFile("fixtures/possible_answer/BFCL_v4_simple_python.json")
	ql := strings.Split(strings.TrimSpace(string(q)), "\n")
	al := strings.Split(strings.TrimSpace(string(a)), "\n")
	tests := []struct {
		name  string
		edits map[string]string
		file  string
		line  int
		msg   string
	}{
		{"malformed question line", map[string]string{"BFCL_v4_simple_python.json": ql[0] + "\n{not json\n" + ql[1] + "\n"},
			"BFCL_v4_simple_python.json", 2, "not a JSON object"},
		{"answer without question", map[string]string{"possible_answer/BFCL_v4_simple_python.json": strings.Join(al, "\n") + "\n" + `{"id": "simple_python_99", "ground_truth": [{"f": {}}]}` + "\n"},
			"possible_answer/BFCL_v4_simple_python.json", 5, `answer id "simple_python_99" has no question`},
		{"question without answer", map[string]string{"possible_answer/BFCL_v4_simple_python.json": strings.Join(al[:3], "\n") + "\n"},
			"BFCL_v4_simple_python.json", 4, "simple_python_3 has no possible answer"},
		{"duplicate id", map[string]string{"BFCL_v4_simple_python.json": strings.Join(ql, "\n") + "\n" + ql[0] + "\n"},
			"BFCL_v4_simple_python.json", 5, "duplicate id simple_python_0"},
		// An item's own bad data (e.g. an empty ground truth) is skipped,
		// not fatal (TestItemVerdicts); a line that is no item is fatal.
		{"answer that is not JSON", map[string]string{"possible_answer/BFCL_v4_simple_python.json": al[0] + "\n{\"id\": \"simple_python_1\", \"ground_truth\": [\n" + strings.Join(al[2:], "\n") + "\n"},
			"possible_answer/BFCL_v4_simple_python.json", 2, "not a JSON object"},
		{"missing answer file", map[string]string{"possible_answer/BFCL_v4_simple_python.json": ""},
			"", 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeDir(t, tc.edits)
			if tc.name == "missing answer file" {
				os.Remove(filepath.Join(dir, "possible_answer/BFCL_v4_simple_python.json"))
				tc.file, tc.msg = "possible_answer/BFCL_v4_simple_python.json", "needs a possible-answer file"
			}
			_, _, err := build(t, dir)
			var ie *datasets.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v, want *InputError", err)
			}
			if ie.File != filepath.Join(dir, tc.file) || ie.Line != tc.line || !strings.Contains(ie.Msg, tc.msg) {
				t.Fatalf("got %s:%d %q; want %s:%d containing %q", ie.File, ie.Line, ie.Msg, tc.file, tc.line, tc.msg)
			}
		})
	}
}

// TestConformanceBFCLv4 builds the real BFCL v4 files and checks every item
// of every file arrives once, with its ground truth where BFCL has one.
func TestConformanceBFCLv4(t *testing.T) {
	dir := shareddata.Require(t, "bfcl")
	_, items, err := build(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	files, _ := filepath.Glob(filepath.Join(dir, "BFCL_v4_*.json"))
	for _, f := range files {
		cat := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "BFCL_v4_"), ".json")
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) != "" {
				want[cat]++
			}
		}
		fh.Close()
	}
	got := map[string]int{}
	ids := map[string]bool{}
	for _, it := range items {
		got[it.Category]++
		if ids[it.ID] {
			t.Errorf("duplicate id %s", it.ID)
		}
		ids[it.ID] = true
		if (it.GroundTruthJSON != nil) != bfcl.HasGroundTruth(it.Category) {
			t.Errorf("%s: ground truth present=%v for category %s", it.ID, it.GroundTruthJSON != nil, it.Category)
		}
	}
	total := 0
	for cat, n := range want {
		total += n
		if got[cat] != n {
			t.Errorf("category %s: %d rows, file has %d lines", cat, got[cat], n)
		}
	}
	if len(items) != total || total < 3000 {
		t.Fatalf("%d rows, want %d", len(items), total)
	}
}
