package taskfile

import (
	"fmt"
	"strings"
	"time"

	"github.com/dlclark/regexp2"
	"github.com/nikolalohinski/gonja/v2/builtins"
	"github.com/nikolalohinski/gonja/v2/exec"
)

// gonja's string methods as Python has them: gonja's replace requires a
// count, and its split, rsplit, strip, lstrip and rstrip with no argument
// fail (a default of the wrong type); here they take Python's defaults
// (all occurrences; runs of whitespace; whitespace). Every other method is
// gonja's.
var strMethodNames = []string{"capitalize", "casefold", "center", "count", "endswith", "expandtabs", "find",
	"format", "index", "isalnum", "isalpha", "isascii", "isdecimal", "isdigit", "isidentifier", "islower",
	"isnumeric", "isprintable", "isspace", "istitle", "isupper", "join", "ljust", "lower", "partition",
	"removeprefix", "removesuffix", "rfind", "rindex", "rjust", "rpartition", "splitlines", "startswith",
	"swapcase", "title", "translate", "upper", "zfill"}

func pyMethods() exec.Methods {
	m := map[string]exec.Method[string]{}
	for _, name := range strMethodNames {
		if f, ok := builtins.Methods.Str.Get(name); ok {
			m[name] = f
		}
	}
	m["replace"] = strReplace
	m["split"] = func(s string, _ *exec.Value, a *exec.VarArgs) (any, error) { return strSplit(s, a, false) }
	m["rsplit"] = func(s string, _ *exec.Value, a *exec.VarArgs) (any, error) { return strSplit(s, a, true) }
	m["strip"] = func(s string, _ *exec.Value, a *exec.VarArgs) (any, error) { return strStrip(s, a, true, true) }
	m["lstrip"] = func(s string, _ *exec.Value, a *exec.VarArgs) (any, error) { return strStrip(s, a, true, false) }
	m["rstrip"] = func(s string, _ *exec.Value, a *exec.VarArgs) (any, error) { return strStrip(s, a, false, true) }
	out := builtins.Methods
	out.Str = exec.NewMethodSet(m)
	return out
}

// args are a call's arguments by position or name, nil when not given.
func args(a *exec.VarArgs, method string, names ...string) ([]*exec.Value, error) {
	if len(a.Args) > len(names) {
		return nil, fmt.Errorf("%s takes at most %d arguments", method, len(names))
	}
	out := make([]*exec.Value, len(names))
	copy(out, a.Args)
	for k, v := range a.KwArgs {
		i := -1
		for j, n := range names {
			if n == k {
				i = j
			}
		}
		if i < 0 || out[i] != nil {
			return nil, fmt.Errorf("%s: unexpected argument %s", method, k)
		}
		out[i] = v
	}
	return out, nil
}

func strReplace(s string, _ *exec.Value, a *exec.VarArgs) (any, error) {
	v, err := args(a, "replace", "old", "new", "count")
	if err != nil {
		return nil, err
	}
	if v[0] == nil || v[1] == nil || !v[0].IsString() || !v[1].IsString() {
		return nil, fmt.Errorf("replace takes two strings, old and new")
	}
	n := -1
	if v[2] != nil {
		if !v[2].IsInteger() {
			return nil, fmt.Errorf("replace: count is not an integer")
		}
		n = v[2].Integer()
	}
	if n < 0 {
		n = -1
	}
	return strings.Replace(s, v[0].String(), v[1].String(), n), nil
}

func isPySpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0x1c, 0x1d, 0x1e, 0x1f, 0x85, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

func strStrip(s string, a *exec.VarArgs, left, right bool) (any, error) {
	v, err := args(a, "strip", "chars")
	if err != nil {
		return nil, err
	}
	cut := isPySpace
	if v[0] != nil && !v[0].IsNil() {
		if !v[0].IsString() {
			return nil, fmt.Errorf("strip: chars is not a string")
		}
		chars := v[0].String()
		cut = func(r rune) bool { return strings.ContainsRune(chars, r) }
	}
	if left {
		s = strings.TrimLeftFunc(s, cut)
	}
	if right {
		s = strings.TrimRightFunc(s, cut)
	}
	return s, nil
}

func strSplit(s string, a *exec.VarArgs, fromRight bool) (any, error) {
	v, err := args(a, "split", "sep", "maxsplit")
	if err != nil {
		return nil, err
	}
	max := -1
	if v[1] != nil {
		if !v[1].IsInteger() {
			return nil, fmt.Errorf("split: maxsplit is not an integer")
		}
		max = v[1].Integer()
	}
	if v[0] == nil || v[0].IsNil() {
		fields := strings.FieldsFunc(s, isPySpace)
		if max < 0 || len(fields) <= max+1 {
			return fields, nil
		}
		// Python keeps the rest of the string, from the first field not split off.
		if fromRight {
			rest := strings.TrimRightFunc(s, isPySpace)
			out := make([]string, 0, max+1)
			for range max {
				i := strings.LastIndexFunc(rest, isPySpace)
				out = append([]string{rest[i+1:]}, out...)
				rest = strings.TrimRightFunc(rest[:i+1], isPySpace)
			}
			return append([]string{rest}, out...), nil
		}
		rest := strings.TrimLeftFunc(s, isPySpace)
		out := make([]string, 0, max+1)
		for range max {
			i := strings.IndexFunc(rest, isPySpace)
			out = append(out, rest[:i])
			rest = strings.TrimLeftFunc(rest[i:], isPySpace)
		}
		return append(out, rest), nil
	}
	if !v[0].IsString() || v[0].String() == "" {
		return nil, fmt.Errorf("split: sep is not a non-empty string")
	}
	sep := v[0].String()
	if max < 0 {
		return strings.Split(s, sep), nil
	}
	if !fromRight {
		return strings.SplitN(s, sep, max+1), nil
	}
	var out []string
	for range max {
		i := strings.LastIndex(s, sep)
		if i < 0 {
			break
		}
		out = append([]string{s[i+len(sep):]}, out...)
		s = s[:i]
	}
	return append([]string{s}, out...), nil
}

// regexReplace is lm-eval's regex_replace filter, Python's re.sub(pattern,
// repl, s, count): the pattern in Python's syntax (regexp2), \1 and
// \g<name> in repl.
func regexReplace(_ *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
	v, err := args(params, "regex_replace", "pattern", "repl", "count")
	if err != nil {
		return exec.AsValue(err)
	}
	if v[0] == nil || v[1] == nil || !v[0].IsString() || !v[1].IsString() {
		return exec.AsValue(fmt.Errorf("regex_replace takes a pattern and a replacement"))
	}
	count := -1
	if v[2] != nil && v[2].IsInteger() && v[2].Integer() > 0 {
		count = v[2].Integer()
	}
	re, err := regexp2.Compile(v[0].String(), regexp2.None)
	if err != nil {
		return exec.AsValue(fmt.Errorf("regex_replace: %w", err))
	}
	re.MatchTimeout = time.Second
	var out string
	err = MatchWithin(re.MatchTimeout, func() (err error) { out, err = re.Replace(in.String(), pyRepl(v[1].String()), -1, count); return err })
	if err != nil {
		return exec.AsValue(fmt.Errorf("regex_replace: %w", err))
	}
	return exec.AsValue(out)
}

// pyRepl writes a Python replacement as .NET's: \1 and \g<1> as ${1},
// \g<name> as ${name}, $ as $$, \n \t \\ as themselves.
func pyRepl(r string) string {
	var b strings.Builder
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case c == '$':
			b.WriteString("$$")
		case c == '\\' && i+1 < len(r):
			d := r[i+1]
			switch {
			case d >= '0' && d <= '9':
				j := i + 1
				for j < len(r) && j < i+3 && r[j] >= '0' && r[j] <= '9' {
					j++
				}
				b.WriteString("${" + r[i+1:j] + "}")
				i = j - 1
			case d == 'g' && i+2 < len(r) && r[i+2] == '<':
				if k := strings.IndexByte(r[i+3:], '>'); k >= 0 {
					b.WriteString("${" + r[i+3:i+3+k] + "}")
					i += 3 + k
				} else {
					b.WriteByte(c)
				}
			case d == 'n':
				b.WriteByte('\n')
				i++
			case d == 't':
				b.WriteByte('\t')
				i++
			case d == '\\':
				b.WriteByte('\\')
				i++
			default:
				b.WriteByte(c)
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
