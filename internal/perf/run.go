package perf

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Row is one figure's line of the table (and of --json).
type Row struct {
	Name        string   `json:"name"`
	Section     string   `json:"section"`
	Status      string   `json:"status"` // ok, not run, failed
	Measured    *float64 `json:"measured,omitempty"`
	Unit        string   `json:"unit"`
	Goal        string   `json:"goal"`
	RatioToGoal *float64 `json:"ratio_to_goal,omitempty"`
	Met         *bool    `json:"met,omitempty"`
	Reference   string   `json:"reference,omitempty"`
	Command     string   `json:"command"`
	Detail      string   `json:"detail,omitempty"` // why not run, or the error
	Seconds     float64  `json:"seconds"`          // wall time of the command (shared with the figures it also gives)
}

// Execer runs argv in dir and returns its combined output.
type Execer func(ctx context.Context, dir string, argv []string) ([]byte, error)

// Runner runs figures.
type Runner struct {
	Root    string        // the module root: go test and scripts run there
	Self    string        // the benchline executable for Self figures
	Quick   bool          // shorter benchtimes
	Timeout time.Duration // bound on each command (0: 20 minutes)
	Exec    Execer        // nil: os/exec
	Log     io.Writer     // a line per command run; nil: none

	outputs map[string]output
}

type output struct {
	out     []byte
	err     error
	seconds float64
}

// Select returns the figures whose name matches only (all when only is nil).
func Select(figs []Figure, only *regexp.Regexp) []Figure {
	var out []Figure
	for _, f := range figs {
		if only == nil || only.MatchString(f.Name) {
			out = append(out, f)
		}
	}
	return out
}

// Missing returns what the figure needs and this machine lacks.
func (f Figure) Missing() []string {
	var m []string
	for _, n := range f.Needs {
		if n.Present == nil || !n.Present() {
			m = append(m, n.What)
		}
	}
	return m
}

// Run measures figs in order. Figures sharing a command share one run of it.
// A figure that needs something missing is reported "not run" unless
// selected is true (the user named it with --only), in which case it runs.
func (r *Runner) Run(ctx context.Context, figs []Figure, selected bool) []Row {
	if r.outputs == nil {
		r.outputs = map[string]output{}
	}
	rows := make([]Row, 0, len(figs))
	for _, f := range figs {
		row := Row{Name: f.Name, Section: f.Section, Unit: f.Unit, Goal: f.Goal.String(),
			Reference: f.RefNote, Command: ShellQuote(f.Command(r.Quick))}
		miss := f.Missing()
		if len(miss) > 0 && !selected {
			row.Status, row.Detail = "not run", "needs "+strings.Join(miss, "; ")
			rows = append(rows, row)
			continue
		}
		o := r.output(ctx, f)
		row.Seconds = o.seconds
		v, err := f.read(o.out)
		if o.err != nil {
			err = fmt.Errorf("%w\n%s", o.err, tail(o.out, 15))
		}
		if err != nil {
			row.Status, row.Detail = "failed", err.Error()
			if len(miss) > 0 {
				row.Detail = "selected with --only although it needs " + strings.Join(miss, "; ") + ": " + row.Detail
			}
			rows = append(rows, row)
			continue
		}
		row.Status, row.Measured = "ok", &v
		if ratio, met, ok := f.Goal.Judge(v); ok {
			row.RatioToGoal, row.Met = &ratio, &met
		}
		rows = append(rows, row)
	}
	return rows
}

func (r *Runner) output(ctx context.Context, f Figure) output {
	argv := f.Command(r.Quick)
	for i := range argv {
		argv[i] = os.ExpandEnv(argv[i])
	}
	switch f.Kind {
	case Self:
		argv[0] = r.Self
	case Script:
		argv[0] = filepath.Join(r.Root, argv[0])
	}
	key := strings.Join(argv, "\x00")
	if o, ok := r.outputs[key]; ok {
		return o
	}
	if r.Log != nil {
		fmt.Fprintf(r.Log, "running %s\n", ShellQuote(f.Command(r.Quick)))
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = 20 * time.Minute
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	run := r.Exec
	if run == nil {
		run = execCommand
	}
	t0 := time.Now()
	out, err := run(cctx, r.Root, argv)
	if err != nil && cctx.Err() != nil && ctx.Err() == nil {
		err = fmt.Errorf("perf: %s: gave up after %s: %w", ShellQuote(f.Command(r.Quick)), timeout, err)
	} else if err != nil {
		err = fmt.Errorf("perf: %s: %w", ShellQuote(f.Command(r.Quick)), err)
	}
	o := output{out: out, err: err, seconds: time.Since(t0).Seconds()}
	r.outputs[key] = o
	return o
}

func execCommand(ctx context.Context, dir string, argv []string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.WaitDelay = 10 * time.Second
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	return buf.Bytes(), err
}

// read extracts the figure from its command's output.
func (f Figure) read(out []byte) (float64, error) {
	var v float64
	switch f.Kind {
	case GoBench:
		res, err := ParseOutput(bytes.NewReader(out))
		if err != nil {
			return 0, err
		}
		var ok bool
		if v, ok = Metric(res, f.Line, f.Metric); !ok {
			return 0, fmt.Errorf("perf: %s: no %s in a %s line of the output\n%s", f.Name, f.Metric, f.Line, tail(out, 15))
		}
		if f.RefLine != "" {
			ref, ok := Metric(res, f.RefLine, f.Metric)
			if !ok || ref == 0 {
				return 0, fmt.Errorf("perf: %s: no %s in a %s line of the output\n%s", f.Name, f.Metric, f.RefLine, tail(out, 15))
			}
			v /= ref
		}
	case Self:
		var err error
		if v, err = jsonField(out, f.Field); err != nil {
			return 0, fmt.Errorf("perf: %s: %w\n%s", f.Name, err, tail(out, 15))
		}
	case Script:
		m := f.Pattern.FindSubmatch(out)
		if m == nil {
			return 0, fmt.Errorf("perf: %s: no line matching %q in the output\n%s", f.Name, f.Pattern, tail(out, 15))
		}
		var err error
		if v, err = strconv.ParseFloat(string(m[1]), 64); err != nil {
			return 0, fmt.Errorf("perf: %s: %w", f.Name, err)
		}
	}
	if f.Scale != 0 {
		v *= f.Scale
	}
	if f.Reference != 0 {
		v /= f.Reference
	}
	return v, nil
}

// jsonField reads a number field of the last line of out that is a JSON object.
func jsonField(out []byte, field string) (float64, error) {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		var obj map[string]any
		if json.Unmarshal([]byte(lines[i]), &obj) != nil {
			continue
		}
		x, ok := obj[field].(float64)
		if !ok {
			return 0, fmt.Errorf("no number %q in %s", field, lines[i])
		}
		return x, nil
	}
	return 0, errors.New("no JSON object in the output")
}

func tail(out []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// WriteTable prints rows as one Markdown table.
func WriteTable(w io.Writer, rows []Row) error {
	var b strings.Builder
	b.WriteString("| figure | measured | unit | goal | ratio to goal | met | command |\n|---|---:|---|---|---:|---|---|\n")
	for _, r := range rows {
		measured, ratio, met := "–", "–", "–"
		switch r.Status {
		case "ok":
			measured = FormatValue(*r.Measured)
		case "not run":
			measured = "not run: " + r.Detail
		default:
			measured = "failed (see above)"
		}
		if r.RatioToGoal != nil {
			ratio = strconv.FormatFloat(*r.RatioToGoal, 'f', 2, 64)
			met = "no"
			if *r.Met {
				met = "yes"
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | `%s` |\n", r.Name, cell(measured), cell(r.Unit), r.Goal, ratio, met, cell(r.Command))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteList prints the registry without running it.
func WriteList(w io.Writer, figs []Figure, quick bool) error {
	var b strings.Builder
	b.WriteString("| figure | section | unit | goal | reference | needs | command |\n|---|---|---|---|---|---|---|\n")
	for _, f := range figs {
		var needs []string
		for _, n := range f.Needs {
			needs = append(needs, n.What)
		}
		ref := f.RefNote
		if ref == "" {
			ref = "–"
		}
		need := strings.Join(needs, "; ")
		if need == "" {
			need = "–"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | `%s` |\n", f.Name, cell(f.Section), cell(f.Unit), f.Goal, cell(ref), cell(need), cell(ShellQuote(f.Command(quick))))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// FindRoot returns the root of the benchline source checkout dir is in, from
// `go env GOMOD`, or an error saying the command must run inside one.
func FindRoot(ctx context.Context, dir string) (string, error) {
	if _, err := exec.LookPath("go"); err != nil {
		return "", fmt.Errorf("perf: benchline bench runs go test and needs the go command: %w", err)
	}
	cmd := exec.CommandContext(ctx, "go", "env", "GOMOD")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("perf: go env GOMOD in %s: %w", dir, err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("perf: %s is not inside a benchline source checkout (go env GOMOD is %q); benchline bench runs go test there: cd into the repository and run it again", dir, gomod)
	}
	data, err := os.ReadFile(gomod)
	if err != nil {
		return "", fmt.Errorf("perf: %w", err)
	}
	if !modulePath.Match(data) {
		return "", fmt.Errorf("perf: %s is not benchline's go.mod (module github.com/benchline/benchline); run benchline bench inside a benchline checkout", gomod)
	}
	return filepath.Dir(gomod), nil
}

var modulePath = regexp.MustCompile(`(?m)^module\s+github\.com/benchline/benchline\s*$`)
