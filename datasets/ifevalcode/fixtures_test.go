package ifevalcode_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/benchline/benchline/datasets/ifevalcode"
	"github.com/benchline/benchline/internal/golden"
)

var update = flag.Bool("update", false, "regenerate fixtures/IFEvalCode.jsonl from testdata/src")

// ext and fence are the source file extension and the code fence tag of
// each language in testdata/src.
var ext = map[string]string{"python": "py", "java": "java", "cpp": "cpp", "csharp": "cs",
	"typescript": "ts", "javascript": "js", "php": "php", "shell": "sh"}

var fence = map[string]string{"python": "python", "java": "java", "cpp": "cpp", "csharp": "csharp",
	"typescript": "typescript", "javascript": "javascript", "php": "php", "shell": "bash"}

// fixtureLine is one fixture line, in the original's field names plus
// benchline's reference_solution and constraints.
type fixtureLine struct {
	ID                  string   `json:"id"`
	ProgrammingLanguage string   `json:"programming_language"`
	EnglishQuestion     string   `json:"english_question"`
	ChineseQuestion     string   `json:"chinese_question"`
	CheckCorrectness    string   `json:"check_correctness"`
	CheckInstruction    string   `json:"check_instruction"`
	ReferenceSolution   string   `json:"reference_solution"`
	Constraints         []string `json:"constraints"`
}

// generate renders testdata/src/<language>_<n>/ into JSON lines, in the
// original's language order.
func generate(t *testing.T) []byte {
	t.Helper()
	read := func(dir, name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, l := range ifevalcode.Languages {
		dirs, _ := filepath.Glob(filepath.Join("testdata", "src", l+"_*"))
		if len(dirs) < 3 {
			t.Fatalf("%s: %d fixture items, want at least 3", l, len(dirs))
		}
		for _, dir := range dirs {
			code := read(dir, "reference."+ext[l])
			line := fixtureLine{
				ID: filepath.Base(dir), ProgrammingLanguage: l,
				EnglishQuestion:   strings.TrimRight(read(dir, "en.md"), "\n"),
				ChineseQuestion:   strings.TrimRight(read(dir, "zh.md"), "\n"),
				CheckCorrectness:  strings.TrimRight(read(dir, "check_correctness."+ext[l]), "\n"),
				CheckInstruction:  strings.TrimRight(read(dir, "check_instruction.py"), "\n"),
				ReferenceSolution: "```" + fence[l] + "\n" + code + "```",
				Constraints:       strings.Fields(read(dir, "constraints.txt")),
			}
			if err := enc.Encode(line); err != nil {
				t.Fatal(err)
			}
		}
	}
	return buf.Bytes()
}

// TestFixturesUpToDate checks that the embedded JSON lines are generated
// from testdata/src (run with -update to regenerate them).
func TestFixturesUpToDate(t *testing.T) {
	want := generate(t)
	path := filepath.Join("fixtures", ifevalcode.DefaultFile)
	golden.Check(t, path, string(want), *update, "stale: run go test ./datasets/ifevalcode -run TestFixturesUpToDate -update")
}

// TestFixtureRules checks the rules the fixtures follow: both questions,
// a Chinese question that is Chinese, checks in the shape the original's
// harness assembles, and checks of the languages whose check_correctness
// the original decodes with unicode_escape free of backslashes and
// non-ASCII text (so that decoding leaves them unchanged).
func TestFixtureRules(t *testing.T) {
	items, err := ifevalcode.FixtureItems()
	if err != nil {
		t.Fatal(err)
	}
	perLang := map[string]int{}
	for _, it := range items {
		perLang[it.ProgrammingLanguage]++
		hasCJK := false
		for _, r := range it.ChineseQuestion {
			hasCJK = hasCJK || (r >= 0x4e00 && r <= 0x9fff)
		}
		if !hasCJK || it.EnglishQuestion == "" {
			t.Errorf("%s: needs an English and a Chinese question", it.ID)
		}
		if it.ReferenceSolution == nil || it.ConstraintsJSON == nil {
			t.Errorf("%s: needs a reference solution and constraints", it.ID)
		}
		check := it.CheckCorrectness
		switch it.ProgrammingLanguage {
		case "python", "cpp", "java", "csharp":
			if strings.Contains(check, `\`) || !isASCII(check) {
				t.Errorf("%s: check_correctness must be plain ASCII without backslashes (the original unicode_escape-decodes it)", it.ID)
			}
		}
		switch it.ProgrammingLanguage {
		case "java":
			if !strings.Contains(check, "class TestCases") || !strings.Contains(check, "checkCorrectness()") {
				t.Errorf("%s: Java checks define TestCases.checkCorrectness()", it.ID)
			}
		case "csharp":
			if !strings.Contains(check, "public class CheckCorrectness\n{\n") {
				t.Errorf("%s: C# checks must contain the literal the harness injects Main into", it.ID)
			}
			if !strings.Contains(it.EnglishQuestion, "C# 7.2") || !strings.Contains(it.ChineseQuestion, "C# 7.2") {
				t.Errorf("%s: C# questions must say C# 7.2 (mcs)", it.ID)
			}
		case "typescript":
			if !strings.Contains(it.EnglishQuestion, "TypeScript 5") {
				t.Errorf("%s: TypeScript questions must say TypeScript 5.x", it.ID)
			}
		default:
			if !strings.Contains(check, "check_correctness") {
				t.Errorf("%s: check must define check_correctness", it.ID)
			}
		}
	}
	for _, l := range ifevalcode.Languages {
		if perLang[l] < 3 {
			t.Errorf("%s: %d items, want at least 3", l, perLang[l])
		}
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
