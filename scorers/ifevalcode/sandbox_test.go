package ifevalcode_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dsifevalcode "github.com/benchline/benchline/datasets/ifevalcode"
	"github.com/benchline/benchline/internal/sandbox"
	"github.com/benchline/benchline/internal/sandbox/lang"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers/ifevalcode"
)

// newScorer returns a Scorer over the real sandbox, or FAILS when the
// sandbox is unavailable: these tests are what makes baseline/reference
// score 100%, so they must run.
func newScorer(t testing.TB, opts ifevalcode.Options) *ifevalcode.Scorer {
	t.Helper()
	sb, err := sandbox.New(sandbox.Config{})
	if err != nil {
		t.Fatalf("sandbox unavailable: %v\nInstall the toolchain with `make setup`.", err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	return ifevalcode.New(sb, opts)
}

func fixtureItems(t testing.TB) []schemas.IFEvalCodeItem {
	t.Helper()
	items, err := dsifevalcode.FixtureItems()
	if err != nil {
		t.Fatal(err)
	}
	return items
}

var fence = map[string]string{"python": "python", "java": "java", "cpp": "cpp", "csharp": "csharp",
	"typescript": "typescript", "javascript": "javascript", "php": "php", "shell": "bash"}

// TestReferenceSolutions scores every fixture's reference solution through
// the real sandbox: each must be correct AND follow the instructions, as
// the reply of baseline/reference. The reference is also scored wrapped in
// reasoning and prose, as a reasoning model would send it.
func TestReferenceSolutions(t *testing.T) {
	s := newScorer(t, ifevalcode.Options{})
	ctx := context.Background()
	for _, row := range fixtureItems(t) {
		t.Run(row.ID, func(t *testing.T) {
			t.Parallel()
			it := ifevalcode.ItemFromRow(row)
			ref := *row.ReferenceSolution
			res, err := s.Score(ctx, it, ref)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Correct || !res.Instruction || res.Status != ifevalcode.StatusOK || res.Detail != "" {
				t.Fatalf("reference: %+v", res)
			}
			if row.ProgrammingLanguage == "typescript" || row.ProgrammingLanguage == "java" {
				return // slow toolchains: one run each is enough
			}
			wrapped := "<think>\nLet me write it.\n```\nnot the answer\n```\n</think>\nHere is the code:\n\n" + ref + "\n\nIt follows every constraint."
			res, err = s.Score(ctx, it, wrapped)
			if err != nil || !res.Correct || !res.Instruction {
				t.Fatalf("reference with reasoning and prose: %+v, %v", res, err)
			}
		})
	}
}

// TestBrokenVariants scores deliberately broken replies
// (testdata/variants/<id>/<kind>.<ext>): a bug fails correctness only, a
// violated constraint fails the instruction check only, and a compile error
// fails correctness with status compile-error.
func TestBrokenVariants(t *testing.T) {
	s := newScorer(t, ifevalcode.Options{})
	ctx := context.Background()
	rows := map[string]schemas.IFEvalCodeItem{}
	for _, r := range fixtureItems(t) {
		rows[r.ID] = r
	}
	files, err := filepath.Glob(filepath.Join("testdata", "variants", "*", "*"))
	if err != nil || len(files) < 16 {
		t.Fatalf("%d variant files (%v), want at least 16", len(files), err)
	}
	for _, f := range files {
		id := filepath.Base(filepath.Dir(f))
		kind := strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
		t.Run(id+"/"+kind, func(t *testing.T) {
			t.Parallel()
			row, ok := rows[id]
			if !ok {
				t.Fatalf("no fixture item %s", id)
			}
			code, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			reply := "```" + fence[row.ProgrammingLanguage] + "\n" + string(code) + "```"
			res, err := s.Score(ctx, ifevalcode.ItemFromRow(row), reply)
			if err != nil {
				t.Fatal(err)
			}
			switch kind {
			case "bug":
				if res.Correct || !res.Instruction || res.Status != ifevalcode.StatusFailed || !strings.HasPrefix(res.Detail, "correctness: ") {
					t.Fatalf("bug: %+v", res)
				}
			case "violation":
				if !res.Correct || res.Instruction || res.Status != ifevalcode.StatusFailed || !strings.HasPrefix(res.Detail, "instruction: ") {
					t.Fatalf("violation: %+v", res)
				}
			case "compile":
				if res.Correct || res.Status != ifevalcode.StatusCompileError || res.CorrectnessStatus != ifevalcode.StatusCompileError {
					t.Fatalf("compile: %+v", res)
				}
			default:
				t.Fatalf("unknown variant kind %q", kind)
			}
			t.Logf("%s: %s", kind, res.Detail)
		})
	}
}

// TestHarnessSemantics checks behaviours of the original's harness that a
// reimplementation must keep.
func TestHarnessSemantics(t *testing.T) {
	s := newScorer(t, ifevalcode.Options{Timeouts: map[string]time.Duration{"python": 2 * time.Second}})
	ctx := context.Background()
	py := ifevalcode.Item{ID: "py", Language: lang.Python,
		CheckCorrectness: "def check_correctness():\n    assert f() == 1",
		CheckInstruction: "def check_instruction(response):\n    assert 'f' in response"}
	tests := []struct {
		name       string
		item       ifevalcode.Item
		response   string
		correct    bool
		instr      bool
		status     ifevalcode.Status
		detailPart string
	}{
		{"no fence: the whole reply is the code", py, "def f():\n    return 1\n", true, true, ifevalcode.StatusOK, ""},
		{"only the first block counts", py, "```python\ndef f():\n    return 2\n```\n```python\ndef f():\n    return 1\n```", false, true, ifevalcode.StatusFailed, "AssertionError"},
		{"timeout", py, "```python\ndef f():\n    while True:\n        pass\n```", false, true, ifevalcode.StatusTimeout, "limit of 2s"},
		{"long output is cut, the exit status decides", py, "```python\nprint('x' * 100000)\ndef f():\n    return 1\n```", true, true, ifevalcode.StatusOK, ""},
		{"instruction check sees the whole reply with quotes, backslashes and CJK",
			ifevalcode.Item{ID: "repr", Language: lang.Python, CheckCorrectness: "def check_correctness():\n    pass",
				CheckInstruction: "def check_instruction(response):\n    assert response == 'It\\'s \"q\" \\\\ 中文\\n```python\\npass\\n```\\t\\x00', repr(response)"},
			"It's \"q\" \\ 中文\n```python\npass\n```\t\x00", true, true, ifevalcode.StatusOK, ""},
		{"instruction check return value is ignored, only exceptions fail",
			ifevalcode.Item{ID: "ret", Language: lang.Python, CheckCorrectness: "def check_correctness():\n    pass",
				CheckInstruction: "def check_instruction(response):\n    return False"},
			"pass", true, true, ifevalcode.StatusOK, ""},
		{"unicode_escape decodes the python check",
			ifevalcode.Item{ID: "esc", Language: lang.Python, CheckCorrectness: `def check_correctness():\n    assert f() == 'a\tb'`,
				CheckInstruction: "def check_instruction(response):\n    pass"},
			"def f():\n    return 'a\\tb'\n", true, true, ifevalcode.StatusOK, ""},
		{"shell: a top-level exit decides",
			ifevalcode.Item{ID: "sh", Language: lang.Shell, CheckCorrectness: "check_correctness() {\n    exit 1\n}",
				CheckInstruction: "def check_instruction(response):\n    pass"},
			"```bash\nexit 0\n```", true, true, ifevalcode.StatusOK, ""},
		{"php: assert() is a no-op as on Debian's php-cli",
			ifevalcode.Item{ID: "php", Language: lang.PHP, CheckCorrectness: "function check_correctness() {\n    assert(f() === 2);\n}",
				CheckInstruction: "def check_instruction(response):\n    pass"},
			"```php\n<?php\nfunction f() { return 1; }\n?>\n```", true, true, ifevalcode.StatusOK, ""},
		{"csharp: a failed Debug.Assert fails (MONO_TRACE_LISTENER=Console.Error)",
			ifevalcode.Item{ID: "cs", Language: lang.CSharp,
				CheckCorrectness: "public class CheckCorrectness\n{\n    public static bool check_correctness()\n    {\n        System.Diagnostics.Debug.Assert(F.One() == 2, \"one is not two\");\n        return true;\n    }\n}",
				CheckInstruction: "def check_instruction(response):\n    pass"},
			"```csharp\nusing System;\nusing System.Numerics;\npublic static class F { public static int One() { BigInteger b = 1; return (int)b; } }\n```", false, true, ifevalcode.StatusFailed, "Fail: one is not two"},
		{"cpp: the reply's main is replaced by the harness's",
			ifevalcode.Item{ID: "cpp", Language: lang.CPP,
				CheckCorrectness: "#include <cassert>\nvoid check_correctness() { assert(one() == 1); }",
				CheckInstruction: "def check_instruction(response):\n    pass"},
			"```cpp\nint one() { return 1; }\nint main() { return 3; }\n```", true, true, ifevalcode.StatusOK, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := s.Score(ctx, tc.item, tc.response)
			if err != nil {
				t.Fatal(err)
			}
			if res.Correct != tc.correct || res.Instruction != tc.instr || res.Status != tc.status || !strings.Contains(res.Detail, tc.detailPart) {
				t.Fatalf("got %+v; want correct=%v instruction=%v status=%s detail containing %q", res, tc.correct, tc.instr, tc.status, tc.detailPart)
			}
		})
	}
}

// failingSandbox reports an infrastructure failure on every run.
type failingSandbox struct{ lang.Sandboxer }

func (failingSandbox) Run(context.Context, sandbox.Cmd) (sandbox.Result, error) {
	return sandbox.Result{Status: sandbox.StatusSandboxError}, &sandbox.InfraError{Op: "create cgroup", Err: errors.New("injected")}
}

func TestSandboxErrorIsReturnedNotScored(t *testing.T) {
	sb, err := sandbox.New(sandbox.Config{})
	if err != nil {
		t.Fatalf("sandbox unavailable: %v", err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	s := ifevalcode.New(failingSandbox{sb}, ifevalcode.Options{})
	res, err := s.Score(context.Background(), ifevalcode.Item{ID: "x", Language: lang.Python,
		CheckCorrectness: "def check_correctness():\n    pass", CheckInstruction: "def check_instruction(r):\n    pass"}, "pass")
	if !sandbox.IsInfrastructure(err) || res.Status != ifevalcode.StatusSandboxError || res.Correct || res.Instruction {
		t.Fatalf("got %+v, %v; want sandbox-error and an infrastructure error", res, err)
	}
}
