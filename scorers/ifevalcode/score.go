package ifevalcode

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"runtime"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/benchline/benchline/internal/sandbox"
	"github.com/benchline/benchline/internal/sandbox/lang"
	"github.com/benchline/benchline/schemas"
)

// Status is the outcome of scoring one response.
type Status string

// Statuses. Only StatusOK passes a check; StatusSandboxError is an
// infrastructure failure that says nothing about the response (retry it).
const (
	StatusOK           Status = "ok"
	StatusFailed       Status = "failed"
	StatusTimeout      Status = "timeout"
	StatusCompileError Status = "compile-error"
	StatusSandboxError Status = "sandbox-error"
)

// Item is what scoring needs from an IFEvalCode item.
type Item struct {
	ID               string
	Language         lang.Language // programming_language
	CheckCorrectness string
	CheckInstruction string
}

// ItemFromRow returns the scoring fields of a dataset row.
func ItemFromRow(r schemas.IFEvalCodeItem) Item {
	return Item{ID: r.ID, Language: lang.Language(r.ProgrammingLanguage),
		CheckCorrectness: r.CheckCorrectness, CheckInstruction: r.CheckInstruction}
}

// Result is the verdict on one response. Correct (Corr.) and Instruction
// (Instr.) are independent, as in the original.
type Result struct {
	Correct     bool
	Instruction bool
	// Status is the first non-ok status of the correctness run then the
	// instruction run, or ok when both pass.
	Status Status
	// Detail is a short reason ("correctness: ...; instruction: ..."),
	// empty when both pass.
	Detail string
	// CorrectnessStatus and InstructionStatus are the two runs' statuses.
	CorrectnessStatus Status
	InstructionStatus Status
}

// Options configure a Scorer. Zero values take the defaults.
type Options struct {
	// Lang configures the language runner (TypeScript packages, Python).
	Lang lang.Config
	// Timeouts overrides the run step's wall time per language (the
	// original's: 15 s, JavaScript 5 s, C# 10 s). The key "instruction"
	// sets the instruction check's (15 s).
	Timeouts map[string]time.Duration
	// Concurrency bounds ScoreLines' responses in flight (default: the
	// number of CPUs). Each response runs its two programs one after the
	// other, so this is also the number of sandboxes in use.
	Concurrency int
	// Attempts is how often ScoreLines tries a response whose run hit a
	// sandbox-error before reporting sandbox-error (default 3).
	Attempts int
}

// Scorer scores IFEvalCode responses in the sandbox. Safe for concurrent use.
type Scorer struct {
	runner *lang.Runner
	opts   Options
}

// New returns a Scorer that runs programs through sb. The sandboxer is
// wrapped so that C# runs as the original's eval_cs.py does: mcs gets
// -r:System.Numerics.dll and mono runs with MONO_TRACE_LISTENER=Console.Error
// (which makes a failed Debug.Assert visible on stderr).
func New(sb lang.Sandboxer, opts Options) *Scorer {
	if opts.Concurrency <= 0 {
		opts.Concurrency = runtime.NumCPU()
	}
	if opts.Attempts <= 0 {
		opts.Attempts = 3
	}
	return &Scorer{runner: lang.NewRunner(monoCompat{sb}, opts.Lang), opts: opts}
}

// outputBytes is what the original keeps of stdout and stderr (2048 bytes
// each); the program runs on and the rest is dropped.
const outputBytes = 2048

// timeout returns the run step's wall time for key (a language or
// "instruction").
func (s *Scorer) timeout(key string) time.Duration {
	if d, ok := s.opts.Timeouts[key]; ok && d > 0 {
		return d
	}
	switch key {
	case string(lang.JavaScript):
		return 5 * time.Second
	case string(lang.CSharp):
		return 10 * time.Second
	}
	return 15 * time.Second
}

// Score scores one response: the whole reply text of the model. Reasoning
// is stripped first (StripReasoning); the code is the first fenced block of
// what is left (ExtractCode); the instruction check sees all of what is
// left. A non-nil error means no verdict: it matches sandbox.ErrInfrastructure
// for a sandbox failure (Result.Status is sandbox-error; retry), and is a
// plain error for an unknown language, a check_correctness that cannot be
// decoded (ErrCheckEscape) or a canceled context.
func (s *Scorer) Score(ctx context.Context, it Item, response string) (Result, error) {
	if lang.MainFile(it.Language) == "" {
		return Result{Status: StatusFailed}, fmt.Errorf("ifevalcode: item %s: %w: %q", it.ID, lang.ErrUnknownLanguage, it.Language)
	}
	response = StripReasoning(response)
	program, err := Assemble(it.Language, ExtractCode(response), it.CheckCorrectness)
	if err != nil {
		return Result{Status: StatusFailed}, fmt.Errorf("ifevalcode: item %s: %w", it.ID, err)
	}
	var res Result
	corr, corrDetail, err := s.run(ctx, it.Language, program, s.timeout(string(it.Language)))
	if err != nil {
		return Result{Status: StatusSandboxError, CorrectnessStatus: StatusSandboxError, Detail: "correctness: " + err.Error()},
			fmt.Errorf("ifevalcode: item %s: correctness: %w", it.ID, err)
	}
	instr, instrDetail, err := s.run(ctx, lang.Python, InstructionProgram(response, it.CheckInstruction), s.timeout("instruction"))
	if err != nil {
		return Result{Status: StatusSandboxError, CorrectnessStatus: corr, InstructionStatus: StatusSandboxError,
			Detail: "instruction: " + err.Error()}, fmt.Errorf("ifevalcode: item %s: instruction: %w", it.ID, err)
	}
	res.CorrectnessStatus, res.InstructionStatus = corr, instr
	res.Correct, res.Instruction = corr == StatusOK, instr == StatusOK
	res.Status = StatusOK
	var details []string
	if corr != StatusOK {
		res.Status = corr
		details = append(details, "correctness: "+corrDetail)
	}
	if instr != StatusOK {
		if res.Status == StatusOK {
			res.Status = instr
		}
		details = append(details, "instruction: "+instrDetail)
	}
	res.Detail = strings.Join(details, "; ")
	return res, nil
}

// run runs one program and maps the sandbox's verdict to a Status. err is
// non-nil only when there is no verdict (infrastructure or context).
func (s *Scorer) run(ctx context.Context, l lang.Language, source string, wall time.Duration) (Status, string, error) {
	p := lang.Program{Lang: l, Source: source, DiscardExcessOutput: true,
		Limits: sandbox.Limits{WallTime: wall, OutputBytes: outputBytes}}
	if l == lang.CSharp {
		// eval_cs.py captures all of stderr, where it looks for the
		// failure markers: keep far more than 2048 bytes.
		p.Limits.OutputBytes = 1 << 20
	}
	res, err := s.runner.Run(ctx, p)
	if err != nil {
		if ctx.Err() != nil {
			return StatusSandboxError, "", ctx.Err()
		}
		if !sandbox.IsInfrastructure(err) {
			err = &sandbox.InfraError{Op: "run " + string(l), Err: err}
		}
		return StatusSandboxError, "", err
	}
	switch res.Status {
	case sandbox.StatusOK, sandbox.StatusFailed:
		if l == lang.CSharp {
			// eval_cs.py: "mono return 0 even when failing" -- the
			// verdict is read from stderr and the exit code is ignored.
			if m := csharpFailure(res.Stderr); m != "" {
				return StatusFailed, orDefault(telling(res.Stderr), m), nil
			}
			return StatusOK, "", nil
		}
		if res.Status == sandbox.StatusOK {
			return StatusOK, "", nil
		}
		return StatusFailed, failureReason(res.Result), nil
	case sandbox.StatusTimeout:
		return StatusTimeout, fmt.Sprintf("%s limit of %s hit", orDefault(res.LimitHit, "time"), wall), nil
	case sandbox.StatusMemory:
		return StatusFailed, "memory limit hit", nil
	case sandbox.StatusOutputLimit:
		return StatusFailed, "output limit hit", nil
	case sandbox.StatusCompileError:
		return StatusCompileError, compileReason(res), nil
	}
	return StatusSandboxError, "", &sandbox.InfraError{Op: "run " + string(l), Err: errors.New("status " + string(res.Status) + ": " + res.Detail)}
}

// csharpFailure returns the marker eval_cs.py looks for in mono's stderr,
// or "" when there is none.
func csharpFailure(stderr string) string {
	for _, m := range []string{"System.Diagnostics.DefaultTraceListener.Fail", "Unhandled Exception"} {
		if strings.Contains(stderr, m) {
			return m
		}
	}
	return ""
}

const truncMarker = "[sandbox: output truncated"

// failureReason says why a run failed: the last line of stderr (else
// stdout) that names an error, exception, assertion or failure, skipping
// stack frames ("at ..."), else the last non-empty line, with the exit code.
func failureReason(r sandbox.Result) string {
	reason := ""
	for _, out := range []string{r.Stderr, r.Stdout} {
		if reason = telling(out); reason != "" {
			break
		}
	}
	if reason == "" {
		for _, out := range []string{r.Stderr, r.Stdout} {
			if reason = lastLine(out, ""); reason != "" {
				break
			}
		}
	}
	if reason == "" {
		return fmt.Sprintf("exit %d", r.ExitCode)
	}
	return fmt.Sprintf("exit %d: %s", r.ExitCode, reason)
}

// errorHeader matches the header line of an exception report, e.g.
// "AssertionError [ERR_ASSERTION]: ...", "java.lang.AssertionError: ...",
// "PHP Fatal error:  Uncaught Exception: ...".
var errorHeader = regexp.MustCompile(`(?i)(error|exception)\b[^:]{0,40}:`)

// telling returns the last exception header line of out, else the last line
// that names an error, exception, assertion or failure, skipping stack
// frames; "" if none.
func telling(out string) string {
	lines := strings.Split(out, "\n")
	var fallback string
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "at ") || strings.HasPrefix(l, truncMarker) {
			continue
		}
		if errorHeader.MatchString(l) {
			return clip(l)
		}
		if fallback == "" {
			low := strings.ToLower(l)
			for _, w := range []string{"error", "exception", "assert", "fail"} {
				if strings.Contains(low, w) {
					fallback = clip(l)
					break
				}
			}
		}
	}
	return fallback
}

// compileReason is the first line of the compiler's output that mentions an
// error, else its first line.
func compileReason(r lang.Result) string {
	out := r.Stderr + "\n" + r.Stdout
	if r.Compile != nil {
		out = r.Compile.Stderr + "\n" + r.Compile.Stdout
	}
	first := ""
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, truncMarker) {
			continue
		}
		if first == "" {
			first = l
		}
		if strings.Contains(strings.ToLower(l), "error") {
			return clip(l)
		}
	}
	if first == "" {
		return "compile step failed: " + r.Detail
	}
	return clip(first)
}

// lastLine returns the last non-empty line of out (the last one containing
// want, when want is set), clipped.
func lastLine(out, want string) string {
	lines := strings.Split(out, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, truncMarker) || (want != "" && !strings.Contains(l, want)) {
			continue
		}
		return clip(l)
	}
	return want
}

// clip shortens s to at most 200 bytes on a rune boundary.
func clip(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// monoCompat runs C# as the original's eval_cs.py: mcs references
// System.Numerics.dll, and mono reports Debug/Trace failures on stderr.
type monoCompat struct{ lang.Sandboxer }

func (m monoCompat) Run(ctx context.Context, c sandbox.Cmd) (sandbox.Result, error) {
	if len(c.Args) > 0 {
		switch path.Base(c.Args[0]) {
		case "mcs":
			args := make([]string, 0, len(c.Args)+1)
			args = append(args, c.Args[0], "-r:System.Numerics.dll")
			c.Args = append(args, c.Args[1:]...)
		case "mono":
			c.Env = append(append([]string(nil), c.Env...), "MONO_TRACE_LISTENER=Console.Error")
		}
	}
	return m.Sandboxer.Run(ctx, c)
}
