package lang

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/sandbox"
)

func newRunner(t testing.TB) *Runner {
	t.Helper()
	sb, err := sandbox.New(sandbox.Config{})
	if err != nil {
		t.Fatalf("sandbox unavailable: %v\nInstall the toolchain with `make setup`.", err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	return NewRunner(sb, Config{})
}

// hello prints "hello 42" read from stdin's "42".
var hello = map[Language]string{
	Python:     "import sys\nprint('hello', sys.stdin.read().strip())\n",
	JavaScript: "const s = require('fs').readFileSync(0, 'utf8').trim();\nconsole.log('hello', s);\n",
	TypeScript: "const fs = require('fs');\nconst s: string = fs.readFileSync(0, 'utf8').trim();\nconsole.log('hello', s);\n",
	PHP:        "<?php\necho 'hello ' . trim(file_get_contents('php://stdin')) . \"\\n\";\n",
	Shell:      "read x\necho hello $x\n",
	CPP:        "#include <iostream>\n#include <string>\nint main(){ std::string s; std::cin >> s; std::cout << \"hello \" << s << std::endl; }\n",
	Java:       "import java.util.*;\npublic class Problem { public static void main(String[] a){ Scanner sc = new Scanner(System.in); System.out.println(\"hello \" + sc.next()); } }\n",
	CSharp:     "using System;\nclass Program { static void Main(){ Console.WriteLine(\"hello \" + Console.ReadLine().Trim()); } }\n",
}

// failing exits non-zero at run time (an assertion-style failure).
var failing = map[Language]string{
	Python:     "assert 1 == 2\n",
	JavaScript: "throw new Error('boom');\n",
	TypeScript: "const n: number = 1;\nif (n !== 2) { throw new Error('boom'); }\n",
	PHP:        "<?php\nthrow new Exception('boom');\n",
	Shell:      "false\nexit 1\n",
	CPP:        "#include <cassert>\nint main(){ assert(1 == 2); }\n",
	Java:       "public class Problem { public static void main(String[] a){ assert 1 == 2 : \"boom\"; } }\n",
	CSharp:     "using System;\nclass Program { static void Main(){ throw new Exception(\"boom\"); } }\n",
}

// broken fails to compile (for compiled languages: a compile-error).
var broken = map[Language]string{
	CPP:        "int main(){ return undefined_thing; }\n",
	Java:       "public class Problem { public static void main(String[] a){ int x = \"s\"; } }\n",
	CSharp:     "class Program { static void Main(){ int x = \"s\"; } }\n",
	TypeScript: "const x: number = 'not a number';\nconsole.log(x);\n", // type error: tsc fails as in IFEvalCode
}

func TestLanguages(t *testing.T) {
	r := newRunner(t)
	ctx := context.Background()
	for _, l := range Languages() {
		t.Run(string(l), func(t *testing.T) {
			t.Parallel()
			res, err := r.Run(ctx, Program{Lang: l, Source: hello[l], Stdin: "42\n"})
			if err != nil || res.Status != sandbox.StatusOK || strings.TrimSpace(res.Stdout) != "hello 42" {
				t.Fatalf("hello: %v %v\nstdout %q\nstderr %q\ncompile %+v", res, err, res.Stdout, res.Stderr, res.Compile)
			}
			t.Logf("hello: run %v; compile %v", res.Result, res.Compile)
			res, err = r.Run(ctx, Program{Lang: l, Source: failing[l]})
			if err != nil || res.Status != sandbox.StatusFailed || res.ExitCode == 0 {
				t.Errorf("failing: %v %v\nstderr %q", res, err, res.Stderr)
			}
			if src, ok := broken[l]; ok {
				res, err = r.Run(ctx, Program{Lang: l, Source: src})
				if err != nil || res.Status != sandbox.StatusCompileError || res.Compile == nil || res.Compile.ExitCode == 0 {
					t.Errorf("broken: %v %v\nstdout %q stderr %q", res, err, res.Stdout, res.Stderr)
				}
			}
		})
	}
}

func TestRunTimeout(t *testing.T) {
	r := newRunner(t)
	loops := map[Language]string{
		Java:   "public class Problem { public static void main(String[] a) throws Exception { Thread.sleep(60000); } }\n",
		CPP:    "#include <unistd.h>\nint main(){ sleep(60); }\n",
		Python: "import time\ntime.sleep(60)\n",
	}
	for l, src := range loops {
		t.Run(string(l), func(t *testing.T) {
			res, err := r.Run(context.Background(), Program{Lang: l, Source: src, Limits: sandbox.Limits{WallTime: 2 * time.Second}})
			if err != nil || res.Status != sandbox.StatusTimeout || res.LimitHit != sandbox.LimitWall {
				t.Errorf("got %v %v, want wall timeout", res, err)
			}
		})
	}
}

func TestJavaMemoryLimit(t *testing.T) {
	r := newRunner(t)
	// Allocating past the heap: -Xmx (derived from the memory limit) stops
	// it before the cgroup does.
	src := "import java.util.*;\npublic class Problem { public static void main(String[] a){ List<long[]> l = new ArrayList<>(); while (true) l.add(new long[1<<20]); } }\n"
	res, err := r.Run(context.Background(), Program{Lang: Java, Source: src, Limits: sandbox.Limits{MemoryBytes: 256 << 20}})
	if err != nil || res.Status == sandbox.StatusOK {
		t.Fatalf("got %v %v", res, err)
	}
	if !strings.Contains(res.Stderr, "OutOfMemoryError") && res.Status != sandbox.StatusMemory {
		t.Errorf("want an OutOfMemoryError or memory status, got %v %q", res, res.Stderr)
	}
}

func TestCompileStepIsSandboxed(t *testing.T) {
	r := newRunner(t)
	// A C++ file that includes a host secret at compile time must not see it.
	res, err := r.Run(context.Background(), Program{Lang: CPP, Source: "#include \"/etc/shadow\"\nint main(){}\n"})
	if err != nil || res.Status != sandbox.StatusCompileError {
		t.Errorf("got %v %v", res, err)
	}
}

func TestUnknownLanguageAndMissingToolchain(t *testing.T) {
	r := newRunner(t)
	if _, err := r.Run(context.Background(), Program{Lang: "cobol", Source: "x"}); !errors.Is(err, ErrUnknownLanguage) {
		t.Errorf("unknown language: %v", err)
	}
	sb, _ := sandbox.New(sandbox.Config{})
	t.Cleanup(func() { _ = sb.Close() })
	r = NewRunner(sb, Config{NodeModules: t.TempDir()})
	res, err := r.Run(context.Background(), Program{Lang: TypeScript, Source: "console.log(1)"})
	if !errors.Is(err, ErrToolchainMissing) || !sandbox.IsInfrastructure(err) || res.Status != sandbox.StatusSandboxError {
		t.Errorf("missing tsc: %v %v", res, err)
	}
}
