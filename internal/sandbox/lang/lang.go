// Package lang compiles and runs programs in IFEvalCode's eight languages
// inside the sandbox. The compile step (C++, Java, C#, TypeScript) runs in
// its own sandbox with its own limits; a failed compile gets the status
// sandbox.StatusCompileError.
//
// The runner only runs files: assembling a program from a model response
// and a test harness is the scorer's job. Program.Main defaults to the file
// name IFEvalCode uses (MainFile), so an assembled Java program whose public
// class is Problem compiles as Problem.java.
package lang

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/benchline/benchline/internal/sandbox"
)

// Language is an IFEvalCode programming_language value.
type Language string

// The eight IFEvalCode languages.
const (
	Python     Language = "python"
	Java       Language = "java"
	CPP        Language = "cpp"
	CSharp     Language = "csharp"
	TypeScript Language = "typescript"
	JavaScript Language = "javascript"
	PHP        Language = "php"
	Shell      Language = "shell"
)

// Languages lists the supported languages.
func Languages() []Language {
	return []Language{Python, Java, CPP, CSharp, TypeScript, JavaScript, PHP, Shell}
}

// ErrUnknownLanguage is returned for a language not in Languages.
var ErrUnknownLanguage = errors.New("lang: unknown language")

// ErrToolchainMissing is returned when a compiler or interpreter is not
// installed; it also matches sandbox.ErrInfrastructure.
var ErrToolchainMissing = errors.New("toolchain missing: run `make setup`")

// MainFile is the default entry file of a language, as IFEvalCode names it
// where it matters (Java's public class Problem).
func MainFile(l Language) string {
	switch l {
	case Python:
		return "main.py"
	case Java:
		return "Problem.java"
	case CPP:
		return "main.cpp"
	case CSharp:
		return "Program.cs"
	case TypeScript:
		return "main.ts"
	case JavaScript:
		return "main.js"
	case PHP:
		return "main.php"
	case Shell:
		return "main.sh"
	}
	return ""
}

// Program is one program to compile (if needed) and run.
type Program struct {
	Lang Language
	// Source is the content of the main file (Main). It may be empty if
	// Files holds the main file.
	Source string
	// Main is the main file name; default MainFile(Lang). For Java its base
	// name is the class that is run.
	Main string
	// Files are extra files (relative path -> content) in the work dir.
	Files map[string]string
	// Stdin is the run step's standard input.
	Stdin string
	// Limits of the run step and of the compile step; zero fields take
	// the language's defaults (RunLimits, CompileLimits).
	Limits, CompileLimits sandbox.Limits
	// DiscardExcessOutput: see sandbox.Cmd (IFEvalCode keeps the first 2048
	// bytes and lets the program run on).
	DiscardExcessOutput bool
}

// Result is the outcome of a Program. The embedded Result is the run step,
// or the compile step when compilation failed (Status compile-error).
type Result struct {
	sandbox.Result
	// Compile is the compile step's result, nil for interpreted languages.
	Compile *sandbox.Result `json:"compile,omitempty"`
}

// Sandboxer is what the runner needs from the sandbox.
type Sandboxer interface {
	Run(ctx context.Context, c sandbox.Cmd) (sandbox.Result, error)
	NewWorkDir(files map[string][]byte) (*sandbox.WorkDir, error)
}

// Config configures a Runner.
type Config struct {
	// NodeModules holds typescript 5.x and @types/node (default
	// ${BENCHLINE_CACHE:-$HOME/.cache/benchline}/node/node_modules). It is
	// mounted read-only at /node_modules in the sandbox, where tsc finds
	// @types/node as IFEvalCode's set-up does.
	NodeModules string
	// Python is the interpreter (default /usr/bin/python3, Debian's: the
	// pyenv shim is slow and not visible in the sandbox).
	Python string
}

// Runner compiles and runs programs in a sandbox. Safe for concurrent use.
type Runner struct {
	sb          Sandboxer
	nodeModules string
	python      string

	tsMu  sync.Mutex
	tsDir string // readable copy of the TypeScript packages
}

// NewRunner returns a Runner that uses sb.
func NewRunner(sb Sandboxer, cfg Config) *Runner {
	r := &Runner{sb: sb, nodeModules: cfg.NodeModules, python: cfg.Python}
	if r.nodeModules == "" {
		cache := os.Getenv("BENCHLINE_CACHE")
		if cache == "" {
			home, _ := os.UserHomeDir()
			cache = filepath.Join(home, ".cache", "benchline")
		}
		r.nodeModules = filepath.Join(cache, "node", "node_modules")
	}
	if r.python == "" {
		r.python = "/usr/bin/python3"
	}
	return r
}

// RunLimits are the default run-step limits of a language.
func RunLimits(l Language) sandbox.Limits {
	lim := sandbox.Limits{WallTime: 15 * time.Second, MemoryBytes: 512 << 20, Processes: 64}
	switch l {
	case Java:
		lim.Processes = 256 // JVM threads count against the pids limit
		lim.AddressSpaceBytes = -1
		lim.MemoryBytes = 1 << 30
	case CSharp, JavaScript, TypeScript:
		lim.Processes = 128
		lim.AddressSpaceBytes = -1 // reserved, not used: memory is bounded by cgroup or heap flags
	}
	return lim
}

// CompileLimits are the default compile-step limits of a language.
func CompileLimits(l Language) sandbox.Limits {
	lim := sandbox.Limits{WallTime: 60 * time.Second, CPUTime: 60 * time.Second, MemoryBytes: 1 << 30,
		Processes: 128, CPUs: 1, FileSizeBytes: 256 << 20, TmpBytes: 256 << 20}
	switch l {
	case Java, CSharp, TypeScript:
		lim.Processes = 256
		lim.AddressSpaceBytes = -1
	}
	return lim
}

func merge(base, over sandbox.Limits) sandbox.Limits {
	if over.WallTime > 0 {
		base.WallTime = over.WallTime
	}
	if over.CPUTime > 0 {
		base.CPUTime = over.CPUTime
	}
	if over.MemoryBytes > 0 {
		base.MemoryBytes = over.MemoryBytes
	}
	if over.AddressSpaceBytes != 0 {
		base.AddressSpaceBytes = over.AddressSpaceBytes
	}
	if over.Processes > 0 {
		base.Processes = over.Processes
	}
	if over.FileSizeBytes > 0 {
		base.FileSizeBytes = over.FileSizeBytes
	}
	if over.OutputBytes > 0 {
		base.OutputBytes = over.OutputBytes
	}
	if over.OpenFiles > 0 {
		base.OpenFiles = over.OpenFiles
	}
	if over.TmpBytes > 0 {
		base.TmpBytes = over.TmpBytes
	}
	if over.CPUs != 0 {
		base.CPUs = over.CPUs
	}
	return base
}

// jvmFlags keep the JVM fast to start and inside its memory limit (the JVM
// cannot see the cgroup from inside the sandbox, so it would size its heap
// from the host's RAM).
func jvmFlags(l sandbox.Limits) []string {
	mem := l.WithDefaults().MemoryBytes
	heap := max(mem/2, 32<<20)
	return []string{"-Xshare:auto", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:-UsePerfData",
		"-Xmx" + strconv.FormatInt(heap>>20, 10) + "m", "-XX:ReservedCodeCacheSize=64m",
		"-XX:MaxMetaspaceSize=" + strconv.FormatInt(max(mem/4, 64<<20)>>20, 10) + "m"}
}

// steps returns the compile (nil if none) and run commands for p.
func (r *Runner) steps(p Program, main string, runLim, compLim sandbox.Limits) (compile, run []string, binds []sandbox.Bind, err error) {
	switch p.Lang {
	case Python:
		return nil, []string{r.python, main}, nil, nil
	case JavaScript:
		return nil, []string{"/usr/bin/node", main}, nil, nil
	case PHP:
		return nil, []string{"/usr/bin/php", main}, nil, nil
	case Shell:
		return nil, []string{"/bin/bash", main}, nil, nil
	case CPP:
		// IFEvalCode: g++ -std=c++17 (no optimisation flags).
		return []string{"/usr/bin/g++", "-std=c++17", "-o", "main", main}, []string{"./main"}, nil, nil
	case Java:
		class := strings.TrimSuffix(main, ".java")
		compile = []string{"/usr/bin/javac", "-encoding", "UTF-8", "-d", "."}
		for _, f := range jvmFlags(compLim) {
			compile = append(compile, "-J"+f)
		}
		compile = append(compile, main)
		run = append([]string{"/usr/bin/java"}, jvmFlags(runLim)...)
		return compile, append(run, "-ea", "-cp", ".", class), nil, nil
	case CSharp:
		// IFEvalCode: mcs /d:DEBUG, then mono.
		return []string{"/usr/bin/mcs", "/d:DEBUG", "-out:main.exe", main}, []string{"/usr/bin/mono", "main.exe"}, nil, nil
	case TypeScript:
		mods, err := r.tsModules()
		if err != nil {
			return nil, nil, nil, err
		}
		// IFEvalCode: tsc --target esnext --moduleResolution node, then node.
		// tsc exits non-zero on type errors, which fail the program as in
		// the original. --skipLibCheck only skips re-checking the pinned
		// .d.ts files (lib + @types/node, which check clean): the program's
		// own code is type-checked exactly as before, at a third of the
		// CPU time (measured: 2.6 s vs 8-10 s user on this host).
		compile = []string{"/usr/bin/node", "/node_modules/typescript/bin/tsc", "--target", "esnext",
			"--moduleResolution", "node", "--skipLibCheck", main}
		js := strings.TrimSuffix(main, ".ts") + ".js"
		return compile, []string{"/usr/bin/node", js}, []sandbox.Bind{{Src: mods, Dst: "/node_modules"}}, nil
	}
	return nil, nil, nil, fmt.Errorf("%w: %q", ErrUnknownLanguage, p.Lang)
}

// Run compiles (if needed) and runs p. As with sandbox.Run, a non-nil error
// means no verdict about the program (retry if it matches
// sandbox.ErrInfrastructure).
func (r *Runner) Run(ctx context.Context, p Program) (Result, error) {
	main := p.Main
	if main == "" {
		main = MainFile(p.Lang)
	}
	runLim := merge(RunLimits(p.Lang), p.Limits)
	compLim := merge(CompileLimits(p.Lang), p.CompileLimits)
	compLim.OutputBytes = max(compLim.OutputBytes, 64<<10)
	compile, run, binds, err := r.steps(p, main, runLim, compLim)
	if err != nil {
		return Result{Result: sandbox.Result{Status: sandbox.StatusSandboxError, ExitCode: -1, Detail: err.Error()}}, err
	}
	files := make(map[string][]byte, len(p.Files)+1)
	for name, content := range p.Files {
		files[name] = []byte(content)
	}
	if p.Source != "" || files[main] == nil {
		files[main] = []byte(p.Source)
	}
	wd, err := r.sb.NewWorkDir(files)
	if err != nil {
		return Result{Result: sandbox.Result{Status: sandbox.StatusSandboxError, ExitCode: -1, Detail: err.Error()}}, err
	}
	defer wd.Remove()

	var out Result
	if compile != nil {
		cres, err := r.sb.Run(ctx, sandbox.Cmd{Args: compile, Dir: wd.Path, Binds: binds, Limits: compLim,
			Lang: string(p.Lang), Step: "compile"})
		out.Compile = &cres
		if err != nil {
			out.Result = cres
			return out, err
		}
		if cres.Status != sandbox.StatusOK {
			out.Result = cres
			out.Result.Status = sandbox.StatusCompileError
			if cres.Status != sandbox.StatusFailed {
				out.Result.Detail = "compile step: " + string(cres.Status) + ": " + cres.Detail
			}
			return out, nil
		}
	}
	res, err := r.sb.Run(ctx, sandbox.Cmd{Args: run, Dir: wd.Path, Binds: binds, Stdin: []byte(p.Stdin),
		Limits: runLim, DiscardExcessOutput: p.DiscardExcessOutput, Lang: string(p.Lang), Step: "run"})
	out.Result = res
	return out, err
}

// RunUnsandboxed runs p's compile and run commands directly on the host,
// as the sandbox's benchmarks' baseline: no isolation and no limits. Never
// use it for code you do not trust. Its work directory is on the same file
// system the sandbox uses (sandbox.DefaultWorkRoot), so that the two
// differ only by the sandbox.
func (r *Runner) RunUnsandboxed(ctx context.Context, p Program) error {
	dir, err := os.MkdirTemp(sandbox.DefaultWorkRoot(), "benchline-plain-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	main := MainFile(p.Lang)
	if err := os.WriteFile(filepath.Join(dir, main), []byte(p.Source), 0o644); err != nil {
		return err
	}
	compile, run, _, err := r.steps(p, main, RunLimits(p.Lang), CompileLimits(p.Lang))
	if err != nil {
		return err
	}
	if p.Lang == TypeScript { // tsc finds @types/node in an ancestor node_modules
		if err := os.Symlink(r.nodeModules, filepath.Join(dir, "node_modules")); err != nil {
			return err
		}
	}
	fix := func(args []string) []string {
		out := slices.Clone(args)
		for i, a := range out {
			out[i] = strings.Replace(a, "/node_modules", r.nodeModules, 1)
		}
		return out
	}
	for _, args := range [][]string{compile, run} {
		if args == nil {
			continue
		}
		args = fix(args)
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + dir, "LANG=C.UTF-8"}
		cmd.Stdin = strings.NewReader(p.Stdin)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return &exec.ExitError{ProcessState: cmd.ProcessState, Stderr: out.Bytes()}
		}
	}
	return nil
}
