package taskfile

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/nikolalohinski/gonja/v2"
	"github.com/nikolalohinski/gonja/v2/builtins"
	controls "github.com/nikolalohinski/gonja/v2/builtins/control_structures"
	"github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/loaders"
	"github.com/nikolalohinski/gonja/v2/parser"
)

// Templates are Jinja, rendered by gonja (github.com/nikolalohinski/gonja/v2),
// a pure-Go engine that aims at the Python implementation's behaviour,
// Python string methods included (docs/tasks.md says why and what it
// lacks). They are bounded: a template's size, the rendered text's, the
// items range() makes; they reach no file or network (no include, import,
// extends or from) and cannot recurse (no macro or call).
const (
	// MaxTemplateBytes bounds one template.
	MaxTemplateBytes = 64 << 10
	// MaxRenderBytes bounds what one template renders for one row.
	MaxRenderBytes = 1 << 20
	// MaxRange bounds the items range() makes.
	MaxRange = 10_000
)

// allowed are the control structures a task file's template may use.
var allowed = []string{"if", "for", "set", "with", "raw", "filter", "break", "continue", "autoescape", "do"}

var environment = func() *exec.Environment {
	cs := map[string]parser.ControlStructureParser{}
	for _, name := range allowed {
		if p, ok := controls.All.Get(name); ok {
			cs[name] = p
		}
	}
	globals := exec.EmptyContext().Update(builtins.GlobalFunctions).Update(builtins.GlobalVariables)
	globals.Set("range", boundedRange)
	for _, name := range []string{"lipsum", "cycler", "joiner", "_", "gettext", "ngettext"} {
		globals.Set(name, nil)
	}
	filters := exec.NewFilterSet(map[string]exec.FilterFunction{}).Update(builtins.Filters)
	if err := filters.Register("regex_replace", regexReplace); err != nil {
		panic(err)
	}
	return &exec.Environment{
		Context:           globals,
		Filters:           filters,
		Tests:             builtins.Tests,
		ControlStructures: exec.NewControlStructureSet(cs),
		Methods:           pyMethods(),
	}
}()

func init() { gonja.SetLoggerOutput(io.Discard) }

// boundedRange is Jinja's range(), as a list of at most MaxRange items.
func boundedRange(_ *exec.Evaluator, params *exec.VarArgs) ([]int, error) {
	start, stop, step := 0, 0, 1
	ints := true
	for _, a := range params.Args {
		ints = ints && a.IsInteger()
	}
	switch n := len(params.Args); {
	case ints && n == 1:
		stop = params.Args[0].Integer()
	case ints && n == 2:
		start, stop = params.Args[0].Integer(), params.Args[1].Integer()
	case ints && n == 3:
		start, stop, step = params.Args[0].Integer(), params.Args[1].Integer(), params.Args[2].Integer()
	default:
		return nil, errors.New("range takes [start, ]stop[, step], all integers")
	}
	if step == 0 {
		return nil, errors.New("range: step is 0")
	}
	var out []int
	for i := start; (step > 0 && i < stop) || (step < 0 && i > stop); i += step {
		if len(out) == MaxRange {
			return nil, fmt.Errorf("range makes more than %d items, the limit", MaxRange)
		}
		out = append(out, i)
	}
	return out, nil
}

// Template is one compiled template.
type Template struct {
	src string
	t   *exec.Template
}

var cfg = func() *config.Config {
	c := config.New()
	c.StrictUndefined = true     // a missing column is an error, never ""
	c.KeepTrailingNewline = true // the text as written
	return c
}()

// compileTemplate compiles src; the error says what is wrong (its caller
// names the file, line and key).
func compileTemplate(src string) (*Template, error) {
	if len(src) > MaxTemplateBytes {
		return nil, fmt.Errorf("the template has %d bytes, more than %d, the limit", len(src), MaxTemplateBytes)
	}
	loader, err := loaders.NewMemoryLoader(map[string]string{"/t": src})
	if err != nil {
		return nil, err
	}
	t, err := exec.NewTemplate("/t", cfg, loader, environment)
	if err != nil {
		return nil, errors.New(cleanError(err))
	}
	return &Template{src: src, t: t}, nil
}

// render renders t over vars, at most MaxRenderBytes.
func (t *Template) render(vars map[string]any) (out string, err error) {
	defer func() {
		if r := recover(); r != nil { // the engine on input it did not expect
			err = fmt.Errorf("the template engine failed: %v", r)
		}
	}()
	w := &boundedWriter{max: MaxRenderBytes}
	if err := t.t.Execute(w, exec.NewContext(vars)); err != nil {
		if w.over {
			return "", fmt.Errorf("renders more than %d bytes, the limit", MaxRenderBytes)
		}
		return "", errors.New(cleanError(err))
	}
	return w.b.String(), nil
}

type boundedWriter struct {
	b    strings.Builder
	max  int
	over bool
}

func (w *boundedWriter) Write(p []byte) (int, error) {
	if w.b.Len()+len(p) > w.max {
		w.over = true
		return 0, errors.New("render limit")
	}
	return w.b.Write(p)
}

// cleanError shortens gonja's messages: the innermost reason, with the
// template's line where gonja gives it.
func cleanError(err error) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "unable to execute template: ")
	if i := strings.Index(msg, "failed to parse template '"); i >= 0 {
		if j := strings.LastIndex(msg, "': "); j > i {
			msg = msg[j+3:]
		}
	}
	msg = strings.ReplaceAll(msg, "Unable to render expression", "expression")
	msg = strings.ReplaceAll(msg, "Unable to evaluate name", "undefined name")
	return msg
}

// RenderString compiles src and renders it over vars with the task files'
// bounded engine (for configs of other tools read as task files: promptfoo's
// Nunjucks templates).
func RenderString(src string, vars map[string]any) (string, error) {
	t, err := compileTemplate(src)
	if err != nil {
		return "", err
	}
	return t.render(vars)
}
