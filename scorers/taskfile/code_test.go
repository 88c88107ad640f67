package taskfile

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/sandbox"
	"github.com/benchline/benchline/internal/sandbox/lang"
	"github.com/benchline/benchline/scorers"
)

func TestAssembleCode(t *testing.T) {
	cases := []struct {
		lang                 lang.Language
		code, tests, prelude string
		want, main           string
	}{
		{lang.Python, "def f(): return 1", "assert f() == 1", "import math",
			"import math\ndef f(): return 1\nassert f() == 1\n", "main.py"},
		{lang.JavaScript, "function f() { return 1 }\n", "if (f() !== 1) throw new Error('f')\n", "",
			"function f() { return 1 }\nif (f() !== 1) throw new Error('f')\n", "main.js"},
		{lang.TypeScript, "function f(): number { return 1 }", "if (f() !== 1) throw new Error('f')", "",
			"function f(): number { return 1 }\nif (f() !== 1) throw new Error('f')\n", "main.ts"},
		{lang.Shell, "f() { echo 1; }", `[ "$(f)" = 1 ] || exit 1`, "",
			"#!/bin/bash\nf() { echo 1; }\n[ \"$(f)\" = 1 ] || exit 1\n", "main.sh"},
		{lang.PHP, "<?php\nfunction f() { return 1; }\n?>", "<?php if (f() !== 1) exit(1); ?>", "",
			"<?php\n\nfunction f() { return 1; }\n if (f() !== 1) exit(1); \n", "main.php"},
		// The tests' main wins: the reply's is renamed.
		{lang.CPP, "int f() { return 1; }\nint main() { return f(); }", "int main() { return f() == 1 ? 0 : 1; }", "#include <cstdio>",
			"#include <cstdio>\nint f() { return 1; }\nint benchline_reply_main() { return f(); }\nint main() { return f() == 1 ? 0 : 1; }\n", "main.cpp"},
		// Tests without a main: the reply's stays.
		{lang.CPP, "int main() { return 0; }", "// nothing", "",
			"int main() { return 0; }\n// nothing\n", "main.cpp"},
		{lang.CSharp, "class S { public static int F() => 1; static void Main(string[] a) {} }", "class T { static void Main() { if (S.F() != 1) throw new System.Exception(\"F\"); } }", "",
			"class S { public static int F() => 1; static void BenchlineReplyMain(string[] a) {} }\nclass T { static void Main() { if (S.F() != 1) throw new System.Exception(\"F\"); } }\n", "Program.cs"},
		// Java: the reply's public types are demoted; the file is named
		// for the tests' public class.
		{lang.Java, "public class Solution { public static int f() { return 1; } }\npublic final class Helper {}", "public class Check { public static void main(String[] a) { if (Solution.f() != 1) throw new AssertionError(); } }", "import java.util.*;",
			"import java.util.*;\nclass Solution { public static int f() { return 1; } }\nfinal class Helper {}\npublic class Check { public static void main(String[] a) { if (Solution.f() != 1) throw new AssertionError(); } }\n", "Check.java"},
		{lang.Java, "class S {}", "class T { public static void main(String[] a) {} }", "",
			"class S {}\nclass T { public static void main(String[] a) {} }\n", "Problem.java"},
	}
	for _, tc := range cases {
		t.Run(string(tc.lang), func(t *testing.T) {
			got, main, err := AssembleCode(tc.lang, tc.code, tc.tests, tc.prelude)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want || main != tc.main {
				t.Errorf("got %s %q\nwant %s %q", main, got, tc.main, tc.want)
			}
		})
	}
	if _, _, err := AssembleCode("cobol", "x", "y", ""); err == nil {
		t.Error("cobol assembled")
	}
}

func TestExtractCode(t *testing.T) {
	for in, want := range map[string]string{
		"Here:\n```python\ndef f(): pass\n```\nDone.": "def f(): pass\n",
		"```\nfirst\n```\n```\nsecond\n```":           "first\n",
		"def f(): pass":                               "def f(): pass",
	} {
		if got := ExtractCode(in); got != want {
			t.Errorf("ExtractCode(%q) = %q, want %q", in, got, want)
		}
	}
}

const codeTask = `name: t
description: code in every language
data:
  test: {path: data/test.jsonl}
columns: {target: solution}
prompt:
  messages:
    - {role: user, content: "{{ question }}"}
scorers:
  - {type: code, name: pass, language_column: lang, tests: tests, prelude: prelude, timeout: 20s}
  - {type: includes, name: fenced, values: ["` + "```" + `"]}
`

// TestCodeScorerSandbox runs a right and a wrong reply in each of the 8
// languages in the real sandbox (bubblewrap): the right one passes its
// tests, the wrong one fails them, with the status recorded; a reply that
// loops times out and one that does not compile is a compile-error, both
// scored 0, not errors.
func TestCodeScorerSandbox(t *testing.T) {
	sb, err := sandbox.New(sandbox.Config{})
	if err != nil {
		t.Fatalf("sandbox unavailable: %v (make setup)", err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	c, err := Load("t.yaml", []byte(codeTask))
	if err != nil {
		t.Fatal(err)
	}
	task := NewTaskWith(c, sb)
	ds, ok := task.(scorers.DeferredScorer)
	if !ok || ds.ScoreQueue() != SandboxQueue {
		t.Fatalf("a task file with a code scorer is %T, not a deferred scorer on the sandbox queue", task)
	}
	cases := []struct {
		lang           lang.Language
		prelude, tests string
		right, wrong   string
		wrongStatus    string
	}{
		{lang.Python, "", "assert add(2, 3) == 5", "def add(a, b):\n    return a + b", "def add(a, b):\n    return a - b", CodeFailed},
		{lang.JavaScript, "", "if (add(2, 3) !== 5) throw new Error('add')", "function add(a, b) { return a + b }", "function add(a, b) { return a - b }", CodeFailed},
		{lang.TypeScript, "", "if (add(2, 3) !== 5) throw new Error('add')", "function add(a: number, b: number): number { return a + b }", "function add(a: number, b: number): string { return 'x' }", CodeCompileError},
		{lang.PHP, "", "<?php if (add(2, 3) !== 5) { exit(1); }", "<?php\nfunction add($a, $b) { return $a + $b; }\n?>", "<?php\nfunction add($a, $b) { return $a - $b; }", CodeFailed},
		{lang.Shell, "", `[ "$(add 2 3)" = 5 ] || exit 1`, "add() { echo $(($1 + $2)); }", "add() { echo $(($1 - $2)); }", CodeFailed},
		{lang.CPP, "#include <cstdlib>", "int main() { return add(2, 3) == 5 ? 0 : 1; }", "int add(int a, int b) { return a + b; }\nint main() { return 0; }", "int add(int a, int b) { return a - b; }", CodeFailed},
		{lang.CSharp, "using System;", "public class Check { public static void Main() { if (Solution.Add(2, 3) != 5) throw new Exception(\"add\"); } }",
			"public class Solution { public static int Add(int a, int b) { return a + b; } public static void Main() {} }", "public class Solution { public static int Add(int a, int b) { return a - b; } }", CodeFailed},
		{lang.Java, "import java.util.*;", "public class Check { public static void main(String[] args) { if (Solution.add(2, 3) != 5) throw new AssertionError(\"add\"); } }",
			"public class Solution { public static int add(int a, int b) { return a + b; } }", "public class Solution { public static int add(int a, int b) { return a - b }", CodeCompileError},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	score := func(t *testing.T, fields map[string]any, reply string) (float64, Verdict) {
		t.Helper()
		r := &sample{row: TaskRow{ID: "r"}, fields: fields}
		out, err := ds.Score(ctx, scorers.Sample{ID: "r", Row: r}, scorers.Outcome{Response: reply})
		if err != nil {
			t.Fatalf("Score: %v", err)
		}
		d := out.Details.(Details)
		if len(d.Verdicts) != 2 || out.Metrics["fenced"] != d.Verdicts[1].Score {
			t.Fatalf("verdicts %+v, metrics %v: want both scorers'", d.Verdicts, out.Metrics)
		}
		return out.Metrics["pass"], d.Verdicts[0]
	}
	for _, tc := range cases {
		t.Run(string(tc.lang), func(t *testing.T) {
			t.Parallel()
			fields := map[string]any{"lang": string(tc.lang), "tests": tc.tests, "prelude": tc.prelude}
			if got, v := score(t, fields, "Here it is:\n```"+string(tc.lang)+"\n"+tc.right+"\n```\n"); got != 1 || v.Status != CodeOK {
				t.Errorf("right reply: %v %+v, want 1 ok", got, v)
			}
			if got, v := score(t, fields, tc.wrong); got != 0 || v.Status != tc.wrongStatus || v.Why == "" {
				t.Errorf("wrong reply: %v %+v, want 0 %s with a reason", got, v, tc.wrongStatus)
			}
		})
	}
	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		c, err := Load("t.yaml", []byte(strings.Replace(codeTask, "timeout: 20s", "timeout: 1s", 1)))
		if err != nil {
			t.Fatal(err)
		}
		ds := NewTaskWith(c, sb).(scorers.DeferredScorer)
		r := &sample{row: TaskRow{ID: "r"}, fields: map[string]any{"lang": "python", "tests": "assert f() == 1"}}
		out, err := ds.Score(ctx, scorers.Sample{ID: "r", Row: r}, scorers.Outcome{Response: "def f():\n    while True:\n        pass"})
		if err != nil {
			t.Fatalf("a reply that loops is the reply's failure, not an error: %v", err)
		}
		if v := out.Details.(Details).Verdicts[0]; out.Metrics["pass"] != 0 || v.Status != CodeTimeout {
			t.Errorf("loop: %v %+v, want 0 timeout", out.Metrics["pass"], v)
		}
	})
}

func TestCodeScorerWithoutSandbox(t *testing.T) {
	c, err := Load("t.yaml", []byte(codeTask))
	if err != nil {
		t.Fatal(err)
	}
	ds := NewTaskWith(c, nil).(scorers.DeferredScorer)
	r := &sample{row: TaskRow{ID: "r"}, fields: map[string]any{"lang": "python", "tests": "assert True"}}
	if _, err := ds.Score(context.Background(), scorers.Sample{ID: "r", Row: r}, scorers.Outcome{Response: "x"}); err == nil || !strings.Contains(err.Error(), "no sandbox") {
		t.Errorf("scored without a sandbox: %v, want an infrastructure error", err)
	}
	// A task file without a code scorer needs no sandbox worker.
	plain := NewTaskWith(compileScorers(t, "  - type: exact_match\n"), nil)
	if _, ok := plain.(scorers.DeferredScorer); ok {
		t.Error("a task file without a code scorer is a deferred scorer")
	}
}

func TestCodeScorerParams(t *testing.T) {
	for _, tc := range []struct{ scorers, key string }{
		{"  - {type: code, tests: t}\n", "scorers[0].language"},
		{"  - {type: code, language: cobol, tests: t}\n", "scorers[0].language"},
		{"  - {type: code, language: python, language_column: l, tests: t}\n", "scorers[0].language_column"},
		{"  - {type: code, language: python}\n", "scorers[0].tests"},
		{"  - {type: code, language: python, tests: t, timeout: 2m}\n", "scorers[0].timeout"},
		{"  - {type: code, language: python, tests: t, timeout: soon}\n", "scorers[0].timeout"},
		{"  - {type: code, language: python, tests: t, memory_mb: 8}\n", "scorers[0].memory_mb"},
		{"  - {type: code, language: python, tests: t, stdin: x}\n", "scorers[0].stdin"},
	} {
		_, err := Load("t.yaml", []byte(base+"scorers:\n"+tc.scorers))
		if err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%s: %v, want an error naming %s", strings.TrimSpace(tc.scorers), err, tc.key)
		}
	}
	c := compileScorers(t, "  - {type: code, language_column: l, tests: t}\n")
	for _, tc := range []struct {
		fields map[string]any
		want   string
	}{
		{map[string]any{"l": "python", "t": "assert 1"}, ""},
		{map[string]any{"l": "Fortran", "t": "assert 1"}, `"Fortran" is not a language`},
		{map[string]any{"l": "python", "t": ""}, `column "t" (the tests)`},
		{map[string]any{"t": "x"}, `column "l" (the language)`},
	} {
		err := c.CheckRow(Row{ID: "r", Fields: tc.fields})
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckRow(%v) = %v, want %q", tc.fields, err, tc.want)
		}
	}
}
