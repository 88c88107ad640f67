package taskfile

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/benchline/benchline/internal/sandbox"
	"github.com/benchline/benchline/internal/sandbox/lang"
)

// The code scorer runs the reply's code with a row's tests in the sandbox
// (internal/sandbox/lang): 1 when the program passes (exits 0), else 0,
// with the sandbox's status in the verdict. It runs on the sandbox task
// queue's workers (SandboxTask), never in Evaluate.

// Bounds of the code scorer's parameters (README's Limits table).
const (
	// DefaultCodeTimeout is the run step's wall time when timeout is not
	// given; MaxCodeTimeout bounds it (the sandbox's compile step's).
	DefaultCodeTimeout = 15 * time.Second
	MaxCodeTimeout     = 60 * time.Second
	// MinCodeMemoryMB and MaxCodeMemoryMB bound memory_mb (the language's
	// default, 512 MiB or Java's 1 GiB, when not given).
	MinCodeMemoryMB = 64
	MaxCodeMemoryMB = 4096
	// codeOutputBytes is what is kept of a run's stdout and stderr, each.
	codeOutputBytes = 16 << 10
)

// CodeStatuses are the statuses a code verdict records: ok passes; failed
// (a test failed, memory or output limit), timeout and compile-error are
// the reply's failures.
var CodeStatuses = []string{CodeOK, CodeFailed, CodeTimeout, CodeCompileError}

// Code verdict statuses.
const (
	CodeOK           = "ok"
	CodeFailed       = "failed"
	CodeTimeout      = "timeout"
	CodeCompileError = "compile-error"
)

// codeScorer is the code scorer's parameters.
type codeScorer struct {
	// lang is the fixed language; langColumn, when set, names the column
	// holding it instead.
	lang       lang.Language
	langColumn string
	tests      string
	prelude    string
	timeout    time.Duration
	memoryMB   int
}

func newCode(s Scorer, spec *Spec) (scorer, error) {
	var p struct {
		Language       string `yaml:"language"`
		LanguageColumn string `yaml:"language_column"`
		Tests          string `yaml:"tests"`
		Prelude        string `yaml:"prelude"`
		Timeout        string `yaml:"timeout"`
		MemoryMB       int    `yaml:"memory_mb"`
	}
	if err := params(s.Params, &p); err != nil {
		return nil, err
	}
	if spec.Prompt.Tools != "" {
		return nil, &paramError{key: "type", line: s.line, msg: "code scores a reply's text: a task file with prompt.tools has none to run"}
	}
	c := &codeScorer{lang: lang.Language(p.Language), langColumn: p.LanguageColumn, tests: p.Tests, prelude: p.Prelude,
		timeout: DefaultCodeTimeout, memoryMB: p.MemoryMB}
	switch {
	case p.Language != "" && p.LanguageColumn != "":
		return nil, &paramError{key: "language_column", line: paramLine(s.Params, "language_column"), msg: "give language or language_column, not both"}
	case p.Language == "" && p.LanguageColumn == "":
		return nil, &paramError{key: "language", line: s.line, msg: "is required: " + languageList() + " (or language_column)"}
	case p.Language != "" && lang.MainFile(c.lang) == "":
		return nil, &paramError{key: "language", line: paramLine(s.Params, "language"), msg: fmt.Sprintf("%q: want one of %s", p.Language, languageList())}
	}
	if p.Tests == "" {
		return nil, &paramError{key: "tests", line: s.line, msg: "is required: the column holding each row's tests"}
	}
	if p.Timeout != "" {
		d, err := time.ParseDuration(p.Timeout)
		if err != nil || d <= 0 || d > MaxCodeTimeout {
			return nil, &paramError{key: "timeout", line: paramLine(s.Params, "timeout"), msg: fmt.Sprintf("%q: want a duration above 0 and at most %s (e.g. 10s)", p.Timeout, MaxCodeTimeout)}
		}
		c.timeout = d
	}
	if p.MemoryMB != 0 && (p.MemoryMB < MinCodeMemoryMB || p.MemoryMB > MaxCodeMemoryMB) {
		return nil, &paramError{key: "memory_mb", line: paramLine(s.Params, "memory_mb"), msg: fmt.Sprintf("%d: want %d to %d", p.MemoryMB, MinCodeMemoryMB, MaxCodeMemoryMB)}
	}
	return c, nil
}

func languageList() string {
	var names []string
	for _, l := range lang.Languages() {
		names = append(names, string(l))
	}
	return strings.Join(names, ", ")
}

// score is the code scorer without a sandbox (task check): no verdict.
func (c *codeScorer) score(Reply, Row) (float64, string) {
	return 0, "not run: the code scorer runs in the sandbox (on the sandbox queue's workers)"
}

// parts are what a row gives the program: its language, tests and
// prelude.
func (c *codeScorer) parts(r Row) (l lang.Language, tests, prelude string, err error) {
	l = c.lang
	if c.langColumn != "" {
		v, ok := r.Fields[c.langColumn].(string)
		if !ok {
			return "", "", "", fmt.Errorf("column %q (the language) is missing or not a string", c.langColumn)
		}
		l = lang.Language(strings.ToLower(strings.TrimSpace(v)))
		if lang.MainFile(l) == "" {
			return "", "", "", fmt.Errorf("column %q: %q is not a language: want one of %s", c.langColumn, v, languageList())
		}
	}
	tests, ok := r.Fields[c.tests].(string)
	if !ok || strings.TrimSpace(tests) == "" {
		return "", "", "", fmt.Errorf("column %q (the tests) is missing, empty or not a string", c.tests)
	}
	if c.prelude != "" {
		v, present := r.Fields[c.prelude]
		if prelude, ok = v.(string); present && v != nil && !ok {
			return "", "", "", fmt.Errorf("column %q (the prelude) is not a string", c.prelude)
		}
	}
	return l, tests, prelude, nil
}

func (c *codeScorer) checkRow(r Row) error {
	_, _, _, err := c.parts(r)
	return err
}

// codeBlock is the first fenced block, whatever its language tag (as
// IFEvalCode's harness extracts code).
var codeBlock = regexp.MustCompile("(?s)```.*?\n(.*?)```")

// ExtractCode is the code of a reply: the body of its first fenced block,
// or the whole reply when it has none.
func ExtractCode(reply string) string {
	if m := codeBlock.FindStringSubmatchIndex(reply); m != nil {
		return reply[m[2]:m[3]]
	}
	return reply
}

var (
	cppMain      = regexp.MustCompile(`\bint\s+main\s*\(`)
	csharpMain   = regexp.MustCompile(`\bstatic\s+(void|int|async\s+Task|async\s+Task<int>)\s+Main\s*\(`)
	javaPublic   = regexp.MustCompile(`\bpublic\s+((?:final\s+|abstract\s+)*)(class|interface|enum|record)\b`)
	javaMainName = regexp.MustCompile(`\bpublic\s+(?:final\s+)?class\s+([A-Za-z_][A-Za-z0-9_]*)`)
)

// AssembleCode puts a reply's code (already extracted) and a row's tests
// (and prelude) together into one program of language l; main is the
// program's main file name. The rules, per language (docs/tasks.md):
//
//	python, javascript, typescript: prelude, code, tests, one after the other
//	shell: "#!/bin/bash", prelude, code, tests
//	php:   "<?php", then prelude, code and tests without their <?php and ?> tags
//	cpp:   prelude, code, tests; when the tests define main, the code's main is renamed
//	csharp: the same, for Main
//	java:  the code's and prelude's public types are made package-private; the file
//	       is named for the tests' public class (Problem when they have none)
func AssembleCode(l lang.Language, code, tests, prelude string) (source, main string, err error) {
	join := func(parts ...string) string {
		var b strings.Builder
		for _, p := range parts {
			if p == "" {
				continue
			}
			b.WriteString(p)
			if !strings.HasSuffix(p, "\n") {
				b.WriteByte('\n')
			}
		}
		return b.String()
	}
	main = lang.MainFile(l)
	switch l {
	case lang.Python, lang.JavaScript, lang.TypeScript:
		return join(prelude, code, tests), main, nil
	case lang.Shell:
		return join("#!/bin/bash", prelude, code, tests), main, nil
	case lang.PHP:
		strip := func(s string) string {
			return strings.ReplaceAll(strings.ReplaceAll(s, "<?php", ""), "?>", "")
		}
		return join("<?php", strip(prelude), strip(code), strip(tests)), main, nil
	case lang.CPP:
		if cppMain.MatchString(tests) {
			code = cppMain.ReplaceAllString(code, "int benchline_reply_main(")
		}
		return join(prelude, code, tests), main, nil
	case lang.CSharp:
		if csharpMain.MatchString(tests) {
			code = csharpMain.ReplaceAllString(code, "static $1 BenchlineReplyMain(")
		}
		return join(prelude, code, tests), main, nil
	case lang.Java:
		demote := func(s string) string { return javaPublic.ReplaceAllString(s, "$1$2") }
		if m := javaMainName.FindStringSubmatch(tests); m != nil {
			main = m[1] + ".java"
		}
		return join(demote(prelude), demote(code), tests), main, nil
	}
	return "", "", fmt.Errorf("taskfile: %w: %q", lang.ErrUnknownLanguage, l)
}

// run runs the reply with row r's tests through runner: its score, the
// status and why. err is an infrastructure failure (no verdict).
func (c *codeScorer) run(ctx context.Context, runner *lang.Runner, reply Reply, r Row) (float64, string, string, error) {
	l, tests, prelude, err := c.parts(r)
	if err != nil {
		// The build checks every row: a row that breaks here is not the
		// reply's failure.
		return 0, "", "", fmt.Errorf("row %s: %w", r.ID, err)
	}
	source, main, err := AssembleCode(l, ExtractCode(reply.Text), tests, prelude)
	if err != nil {
		return 0, "", "", err
	}
	lim := sandbox.Limits{WallTime: c.timeout, OutputBytes: codeOutputBytes}
	if c.memoryMB > 0 {
		lim.MemoryBytes = int64(c.memoryMB) << 20
	}
	res, err := runner.Run(ctx, lang.Program{Lang: l, Source: source, Main: main, Limits: lim, DiscardExcessOutput: true})
	if err != nil {
		if ctx.Err() != nil {
			return 0, "", "", ctx.Err()
		}
		return 0, "", "", fmt.Errorf("sandbox: run %s: %w", l, err)
	}
	switch res.Status {
	case sandbox.StatusOK:
		return 1, CodeOK, "", nil
	case sandbox.StatusFailed:
		return 0, CodeFailed, failureOf(res.Result), nil
	case sandbox.StatusTimeout:
		what := res.LimitHit
		if what == "" {
			what = "time"
		}
		return 0, CodeTimeout, fmt.Sprintf("%s limit of %s hit", what, c.timeout), nil
	case sandbox.StatusMemory:
		return 0, CodeFailed, "memory limit hit", nil
	case sandbox.StatusOutputLimit:
		return 0, CodeFailed, "output limit hit", nil
	case sandbox.StatusCompileError:
		out := res.Result
		if res.Compile != nil {
			out = *res.Compile
		}
		return 0, CodeCompileError, lastLines(out.Stderr+"\n"+out.Stdout, "error"), nil
	}
	return 0, "", "", &sandbox.InfraError{Op: "run " + string(l), Err: errors.New("status " + string(res.Status) + ": " + res.Detail)}
}

// failureOf says why a run failed: the last line of stderr (else stdout)
// that names an error, with the exit code.
func failureOf(r sandbox.Result) string {
	why := lastLines(r.Stderr, "error")
	if why == "" {
		why = lastLines(r.Stdout, "")
	}
	if why == "" {
		return fmt.Sprintf("exit %d", r.ExitCode)
	}
	return fmt.Sprintf("exit %d: %s", r.ExitCode, why)
}

// lastLines is the last non-empty line of out that contains want (any
// case), else its last non-empty line, clipped.
func lastLines(out, want string) string {
	lines := strings.Split(out, "\n")
	last := ""
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "[sandbox:") {
			continue
		}
		if last == "" {
			last = l
		}
		if want != "" && strings.Contains(strings.ToLower(l), want) {
			return clip(l)
		}
	}
	return clip(last)
}

// codeScorers are the task's code scorers' indexes.
func (c *Compiled) codeScorers() []int {
	var out []int
	for i, s := range c.scorers {
		if _, ok := s.(*codeScorer); ok {
			out = append(out, i)
		}
	}
	return out
}

// HasSandbox says whether the task's scoring runs in the sandbox (it has a
// code scorer).
func (c *Compiled) HasSandbox() bool { return len(c.codeScorers()) > 0 }

// ScoreSandboxed is ScoreReplies with code scorers run through runner. An
// error is an infrastructure failure (no verdict).
func (c *Compiled) ScoreSandboxed(ctx context.Context, runner *lang.Runner, r Row, replies []Reply) (map[string]float64, []Verdict, [][]Verdict, error) {
	return c.scoreReplies(r, replies, func(reply Reply) ([]Verdict, error) {
		_, vs := c.Score(r, reply)
		for _, i := range c.codeScorers() {
			score, status, why, err := c.scorers[i].(*codeScorer).run(ctx, runner, reply, r)
			if err != nil {
				return nil, fmt.Errorf("scorers[%d] (%s): %w", i, vs[i].Metric, err)
			}
			vs[i].Score, vs[i].Status, vs[i].Why = score, status, why
		}
		return vs, nil
	})
}
