package ifevalcode_test

import (
	"errors"
	"flag"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/golden"
	"github.com/benchline/benchline/internal/sandbox/lang"
	"github.com/benchline/benchline/scorers/ifevalcode"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

func TestStripReasoning(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"none", "```py\nx\n```", "```py\nx\n```"},
		{"think", "<think>\nplan ```py\nbad\n```\n</think>\n```py\ngood\n```", "\n```py\ngood\n```"},
		{"thinking", "<thinking>a</thinking>b", "b"},
		{"two sections", "<think>a</think>b<think>c</think>d", "bd"},
		{"closing tag only (opening tag was in the prompt)", "reasoning ```py\nbad\n```</think>answer", "answer"},
		{"unclosed (cut off)", "answer<think>never finished", "answer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ifevalcode.StripReasoning(tc.in); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestExtractCode(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"fenced", "Here:\n```python\nprint(1)\n```\nDone.", "print(1)\n"},
		{"no tag", "```\nx = 1\n```", "x = 1\n"},
		{"first block only", "```js\na()\n```\ntext\n```js\nb()\n```", "a()\n"},
		{"no block: whole reply", "def f():\n    pass", "def f():\n    pass"},
		{"unclosed fence: whole reply", "```python\nx = 1\n", "```python\nx = 1\n"},
		{"tag line is skipped lazily to the first newline", "```c++ main.cpp\nint x;\n```", "int x;\n"},
		{"inline triple backticks before a block", "use ```x``` then\n```py\ny\n```", ""},
		{"empty block", "```\n```", ""},
		{"CJK around", "代码如下：\n```java\nclass A {}\n```\n以上。", "class A {}\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ifevalcode.ExtractCode(tc.in); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestExtractCodeMatchesPython runs the original's regex in the host's
// Python on the same inputs (skipped when python3 is absent).
func TestExtractCodeMatchesPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	inputs := []string{"Here:\n```python\nprint(1)\n```\nDone.", "use ```x``` then\n```py\ny\n```", "```a```\n```b\nc```",
		"no fence", "```\n```", "x```\n```y\nz```", "```py\r\ncode\r\n```", "```\n```\n```\nq\n```"}
	for _, in := range inputs {
		cmd := exec.Command(py, "-c", `import re,sys
s=sys.stdin.read()
m=re.search(r"`+"```.*?\\n(.*?)```"+`", s, flags=re.DOTALL)
sys.stdout.write(m.group(1) if m else s)`)
		cmd.Stdin = strings.NewReader(in)
		want, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		if got := ifevalcode.ExtractCode(in); got != string(want) {
			t.Errorf("ExtractCode(%q) = %q, Python gives %q", in, got, want)
		}
	}
}

func TestRemoveCppMain(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"none", "int f() { return 1; }\n", "int f() { return 1; }\n"},
		{"simple", "int f() { return 1; }\n\nint main() {\n    return f();\n}\n", "int f() { return 1; }\n\n\n"},
		{"args, comments before stay", "// entry\nint main(int argc, char* argv[]) { return 0; }", "// entry\n"},
		{"braces in strings and comments", "int main() { const char* s = \"}\"; /* } */ char c = '}'; // }\n return 0; }\nint g();", "\nint g();"},
		{"raw string", "int main() { auto s = R\"x(})x\"; return 0; }int k;", "int k;"},
		{"static and attributes", "[[nodiscard]] static int main() { return 0; }\nint z;", "\nint z;"},
		{"trailing return type", "auto main() -> int { return 0; }", ""},
		{"declaration only stays", "int main();\nint f() { return main(); }", "int main();\nint f() { return main(); }"},
		{"inside a namespace stays", "namespace app { int main() { return 0; } }", "namespace app { int main() { return 0; } }"},
		{"inside a class stays", "struct S { int main() { return 1; } };", "struct S { int main() { return 1; } };"},
		{"inside #ifdef stays", "#ifdef DEMO\nint main() { return 0; }\n#endif\n", "#ifdef DEMO\nint main() { return 0; }\n#endif\n"},
		{"after #include", "#include <iostream>\nint main() {\n std::cout << 1;\n}\n", "#include <iostream>\n\n"},
		{"qualified name stays", "int App::main() { return 0; }", "int App::main() { return 0; }"},
		{"call of main stays", "int x = main();", "int x = main();"},
		{"two mains", "int main() {}\nvoid f() {}\nint main(void) { return 1; }\n", "\nvoid f() {}\n\n"},
		{"template before", "template <typename T> T id(T t) { return t; }\nint main() { return id(0); }", "template <typename T> T id(T t) { return t; }\n"},
		{"non-ASCII", "// 主函数\nint main() { return 0; } // 结束", "// 主函数\n // 结束"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ifevalcode.RemoveCppMain(tc.in); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestPyUnicodeEscape compares with Python's codec on the host.
func TestPyUnicodeEscape(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	inputs := []string{`plain`, `a\nb\tc`, `q\'x\"y\\z`, `\x41\u00e9\U0001F600`, `\101\7\08`, `\q \d unknown`,
		"line\\\ncontinued", "中文 é", `\a\b\f\v\r`, `\u4e2d`, "a\\\r\nb"}
	for _, in := range inputs {
		cmd := exec.Command(py, "-c", `import sys
s=sys.stdin.buffer.read().decode("utf-8")
sys.stdout.buffer.write(s.encode("utf-8").decode("unicode_escape").encode("utf-8"))`)
		cmd.Stdin = strings.NewReader(in)
		want, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		got, err := ifevalcode.PyUnicodeEscape(in)
		if err != nil || got != string(want) {
			t.Errorf("PyUnicodeEscape(%q) = %q, %v; Python gives %q", in, got, err, want)
		}
	}
	for _, bad := range []string{`\x4`, `\u12`, `\U00110000`, `trailing\`, `\ud800`, `\N{BULLET}`} {
		if _, err := ifevalcode.PyUnicodeEscape(bad); !errors.Is(err, ifevalcode.ErrCheckEscape) {
			t.Errorf("PyUnicodeEscape(%q): err = %v, want ErrCheckEscape", bad, err)
		}
	}
}

// TestPyRepr compares with Python's repr on the host.
func TestPyRepr(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	inputs := []string{"", "plain", "it's", `say "hi"`, `both ' and "`, "back\\slash", "tab\tnl\ncr\r",
		"\x00\x01\x1f\x7f", "中文：你好", "é\u00a0\u00ad", "\u2028\u200b", "emoji 😀", "\ufeffbom", "```python\nprint('x')\n```"}
	for _, in := range inputs {
		cmd := exec.Command(py, "-c", `import sys
s=sys.stdin.buffer.read().decode("utf-8")
sys.stdout.buffer.write(repr(s).encode("utf-8"))`)
		cmd.Stdin = strings.NewReader(in)
		want, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		if got := ifevalcode.PyRepr(in); got != string(want) {
			t.Errorf("PyRepr(%q) = %s, Python gives %s", in, got, want)
		}
	}
}

// assemblyCases are the per-language assembly goldens: the reply, the
// item's check_correctness, and the program file written to testdata/golden.
var assemblyCases = []struct {
	name  string
	lang  lang.Language
	reply string
	check string
}{
	{"python", lang.Python, "```python\ndef add(a, b):\n    return a + b\n```",
		`def check_correctness():\n    assert add(1, 2) == 3`},
	{"javascript", lang.JavaScript, "```javascript\nconst add = (a, b) => a + b;\n```",
		"function check_correctness() {\n    if (add(1, 2) !== 3) throw new Error('add');\n}"},
	{"typescript", lang.TypeScript, "```ts\nfunction add(a: number, b: number): number { return a + b; }\n```",
		"function check_correctness(): void {\n    const assert = require('assert');\n    assert.strictEqual(add(1, 2), 3);\n}"},
	{"cpp_with_main", lang.CPP, "```cpp\n#include <cstdio>\nint add(int a, int b) { return a + b; }\nint main() {\n    printf(\"%d\\n\", add(1, 2));\n    return 0;\n}\n```",
		"#include <cassert>\nvoid check_correctness() {\n    assert(add(1, 2) == 3);\n}"},
	{"java_solution", lang.Java, "```java\nimport java.util.*;\n\npublic class Solution {\n    public static int add(int a, int b) { return a + b; }\n}\n```",
		"class TestCases {\n    public static void checkCorrectness() {\n        assert Solution.add(1, 2) == 3;\n    }\n}"},
	{"java_class", lang.Java, "```java\npublic class Adder {\n    public int add(int a, int b) { return a + b; }\n}\npublic class Helper {}\n```",
		"class TestCases {\n    public static void checkCorrectness() {\n        if (new Adder().add(1, 2) != 3) throw new AssertionError();\n    }\n}"},
	{"csharp", lang.CSharp, "```csharp\nusing System;\npublic static class Calc { public static int Add(int a, int b) => a + b; }\n```",
		"public class CheckCorrectness\n{\n    public static bool check_correctness()\n    {\n        return Calc.Add(1, 2) == 3;\n    }\n}"},
	{"php", lang.PHP, "```php\n<?php\nfunction add($a, $b) { return $a + $b; }\necho \"?>\";\n?>\n```",
		"function check_correctness() {\n    if (add(1, 2) !== 3) { throw new Exception('add'); }\n}"},
	{"shell", lang.Shell, "```bash\n#!/bin/bash\nadd() { echo $(( $1 + $2 )); }\n```",
		"check_correctness() {\n    [[ $(add 1 2) == 3 ]] || exit 1\n}"},
	{"python_escapes_decoded", lang.Python, "no fence: x = 1",
		`def check_correctness():\n    assert 'a\tb' != "\u4e2d"`},
	{"javascript_not_decoded", lang.JavaScript, "```js\nconst s = 1;\n```",
		`function check_correctness() { if ("a\nb".length !== 3) throw new Error("len"); }`},
}

// TestAssembleGolden checks each language's assembled program against its
// golden file (go test -run TestAssembleGolden -update rewrites them).
func TestAssembleGolden(t *testing.T) {
	for _, tc := range assemblyCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ifevalcode.Assemble(tc.lang, ifevalcode.ExtractCode(tc.reply), tc.check)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "golden", tc.name+"."+strings.TrimPrefix(filepath.Ext(lang.MainFile(tc.lang)), ".")+".golden")
			golden.Check(t, path, got, *update, "")
		})
	}
}

func TestAssembleErrors(t *testing.T) {
	if _, err := ifevalcode.Assemble("rust", "", ""); !errors.Is(err, lang.ErrUnknownLanguage) {
		t.Errorf("unknown language: %v", err)
	}
	if _, err := ifevalcode.Assemble(lang.CPP, "", `bad \x escape`); !errors.Is(err, ifevalcode.ErrCheckEscape) {
		t.Errorf("bad escape: %v", err)
	}
	// JavaScript, TypeScript, PHP and shell checks are not decoded.
	if _, err := ifevalcode.Assemble(lang.Shell, "", `echo \x`); err != nil {
		t.Errorf("shell check must not be decoded: %v", err)
	}
}

func TestInstructionProgram(t *testing.T) {
	got := ifevalcode.InstructionProgram("it's \"x\"\n", "def check_instruction(response):\n    pass")
	want := "response = 'it\\'s \"x\"\\n'\ndef check_instruction(response):\n    pass\ncheck_instruction(response)"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestAggregate(t *testing.T) {
	rs := []ifevalcode.Record{
		{Language: "python", QuestionLanguage: "en", Correct: true, Instruction: true},
		{Language: "python", QuestionLanguage: "en", Correct: true},
		{Language: "python", QuestionLanguage: "en"},
		{Language: "python", QuestionLanguage: "zh", Instruction: true},
		{Language: "shell", QuestionLanguage: "en", Correct: true},
		{Language: "shell", QuestionLanguage: "zh", Correct: true, Instruction: true},
	}
	rep := ifevalcode.Aggregate(rs)
	if got := rep.Languages(); strings.Join(got, ",") != "python,shell,all" {
		t.Errorf("languages %v", got)
	}
	py := rep.Metrics("python")
	if py["en_if_correct"] != 66.7 || py["en_if_instruction"] != 33.3 || py["zh_if_correct"] != 0 || py["zh_if_instruction"] != 100 {
		t.Errorf("python metrics %v", py)
	}
	all := rep.Metrics("all")
	if all["en_if_correct"] != 75 || all["en_if_instruction"] != 25 || all["zh_if_correct"] != 50 || all["zh_if_instruction"] != 100 {
		t.Errorf("all metrics %v", all)
	}
	if rep["all"]["en"].N != 4 || rep["shell"]["zh"].Correct != 1 {
		t.Errorf("tallies %v", rep)
	}
	// Python's round(x, 1) on 1/8*100 = 12.5 exactly: ties to even.
	if got := (ifevalcode.Tally{N: 16, Correct: 1}).Corr(); got != 6.2 {
		t.Errorf("6.25 rounds to %v, Python gives 6.2", got)
	}
}
