package ifevalcode_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/datasetstest"
	"github.com/benchline/benchline/datasets/ifevalcode"
	"github.com/benchline/benchline/internal/shareddata"
	"github.com/benchline/benchline/schemas"
)

// build plans and writes every part, as the workflow's activities do; each
// part must hold only its language's rows.
func build(t *testing.T, src string) (datasets.Plan, []schemas.IFEvalCodeItem, error) {
	t.Helper()
	return datasetstest.Build(t, ifevalcode.Builder{}, datasets.Request{Source: src}, func(p datasets.Part, rows []schemas.IFEvalCodeItem) {
		for _, r := range rows {
			if r.ProgrammingLanguage != p.Label {
				t.Fatalf("part %s holds a %s row (%s)", p.Label, r.ProgrammingLanguage, r.ID)
			}
		}
	})
}

func TestBuildFixtures(t *testing.T) {
	plan, items, err := build(t, ifevalcode.Embedded)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 24 || len(plan.Parts) != 8 {
		t.Fatalf("%d items in %d parts, want 24 in 8", len(items), len(plan.Parts))
	}
	for i, p := range plan.Parts {
		if p.Label != ifevalcode.Languages[i] || p.Rows != 3 {
			t.Errorf("part %d = %s with %d rows, want %s with 3", i, p.Label, p.Rows, ifevalcode.Languages[i])
		}
	}
	byID := map[string]schemas.IFEvalCodeItem{}
	for _, it := range items {
		byID[it.ID] = it
	}
	cs := byID["csharp_2"]
	if cs.ProgrammingLanguage != "csharp" || !strings.Contains(cs.CheckCorrectness, "public class CheckCorrectness\n{\n") ||
		cs.ReferenceSolution == nil || !strings.HasPrefix(*cs.ReferenceSolution, "```csharp\nusing System;") ||
		cs.SourceFile != "embedded://ifevalcode/IFEvalCode.jsonl" || cs.SourceLine != 11 {
		t.Errorf("csharp_2 = %+v", cs)
	}
	var tags []string
	if err := json.Unmarshal([]byte(*byID["python_1"].ConstraintsJSON), &tags); err != nil || tags[1] != "recursion" {
		t.Errorf("constraints_json does not round-trip: %v %v", tags, err)
	}
	if !strings.Contains(byID["shell_3"].ChineseQuestion, "素数") {
		t.Error("Chinese question lost")
	}
	// Same sources, same version.
	again, _, _ := build(t, ifevalcode.Embedded)
	if again.Version != plan.Version {
		t.Errorf("rebuild gave version %s, first %s", again.Version, plan.Version)
	}
}

// writeDir writes the fixture lines to dir/name after edit.
func writeDir(t *testing.T, name string, edit func(lines []string) []string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("fixtures", ifevalcode.DefaultFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(edit(lines), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// setField rewrites one field of a JSON line (nil deletes it).
func setField(t *testing.T, line, field string, v any) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatal(err)
	}
	if v == nil {
		delete(m, field)
	} else {
		m[field] = v
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		name string
		edit func(l []string) []string
		line int
		msg  string
	}{
		{"malformed line", func(l []string) []string { return append(l[:2:2], append([]string{"{not json"}, l[2:]...)...) },
			3, "not a JSON object"},
		{"missing check_instruction", func(l []string) []string { l[4] = setField(t, l[4], "check_instruction", nil); return l },
			5, `item java_2: missing "check_instruction"`},
		{"missing chinese_question", func(l []string) []string { l[0] = setField(t, l[0], "chinese_question", nil); return l },
			1, `missing "chinese_question"`},
		{"empty check_correctness", func(l []string) []string { l[6] = setField(t, l[6], "check_correctness", " "); return l },
			7, `item cpp_1: "check_correctness" is empty`},
		{"unknown language", func(l []string) []string { l[7] = setField(t, l[7], "programming_language", "rust"); return l },
			8, `item cpp_2: unknown programming_language "rust"`},
		{"duplicate id", func(l []string) []string { return append(l, l[3]) },
			25, "duplicate id java_1"},
		{"bad id", func(l []string) []string { l[1] = setField(t, l[1], "id", []int{1}); return l },
			2, `"id" must be a string or an integer`},
		{"instruction check without the function", func(l []string) []string {
			l[2] = setField(t, l[2], "check_instruction", "assert True")
			return l
		}, 3, "does not define check_instruction"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeDir(t, ifevalcode.DefaultFile, tc.edit)
			_, _, err := build(t, dir)
			var ie *datasets.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v, want *InputError", err)
			}
			want := filepath.Join(dir, ifevalcode.DefaultFile)
			if ie.File != want || ie.Line != tc.line || !strings.Contains(ie.Msg, tc.msg) {
				t.Fatalf("got %s:%d %q; want %s:%d containing %q", ie.File, ie.Line, ie.Msg, want, tc.line, tc.msg)
			}
		})
	}
	t.Run("no jsonl files", func(t *testing.T) {
		_, _, err := build(t, t.TempDir())
		var ie *datasets.InputError
		if !errors.As(err, &ie) || !strings.Contains(ie.Msg, "no *.jsonl files") {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestOriginalShape builds lines shaped like the original's: numeric or
// missing ids, no reference solution, no constraints, extra fields.
func TestOriginalShape(t *testing.T) {
	dir := writeDir(t, "IFEvalCode.jsonl", func(l []string) []string {
		a := setField(t, setField(t, setField(t, l[0], "id", 7), "reference_solution", nil), "constraints", nil)
		b := setField(t, setField(t, l[3], "id", nil), "english_response", "ignored")
		return []string{a, b}
	})
	_, items, err := build(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]schemas.IFEvalCodeItem{}
	for _, it := range items {
		ids[it.ID] = it
	}
	if it, ok := ids["7"]; !ok || it.ReferenceSolution != nil || it.ConstraintsJSON != nil {
		t.Errorf("numeric id / absent optional fields: %+v", ids)
	}
	if _, ok := ids["IFEvalCode-2"]; !ok {
		t.Errorf("missing id should become <file stem>-<line>: %v", ids)
	}
}

// TestConformanceIFEvalCode builds the original's IFEvalCode.jsonl when it
// is present in shared/data (it is not distributed with this repository)
// and checks every line arrives once in its language's part.
func TestConformanceIFEvalCode(t *testing.T) {
	dir := shareddata.Require(t, "ifevalcode")
	_, items, err := build(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	lines := jsonlLines(t, dir)
	if len(items) != lines || lines == 0 {
		t.Fatalf("%d rows, files have %d lines", len(items), lines)
	}
	langs := map[string]int{}
	for _, it := range items {
		langs[it.ProgrammingLanguage]++
	}
	if len(langs) != 8 {
		t.Errorf("languages %v, want the original's 8", langs)
	}
}

// jsonlLines counts the non-blank lines of dir's *.jsonl files, each
// read as a stream (the original's lines run to megabytes).
func jsonlLines(t *testing.T, dir string) int {
	t.Helper()
	lines := 0
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) != "" {
				lines++
			}
		}
		err = sc.Err()
		fh.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	return lines
}
