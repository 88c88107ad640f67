package taskfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

// The scorer library: each type takes its parameters from the task file
// (checked when the task is compiled: an unknown parameter, a regex RE2
// cannot compile, a bad value fails naming the key) and scores a reply
// against a row, 0 to 1.

// A scorer scores one reply.
type scorer interface {
	score(reply Reply, r Row) (float64, string)
}

// A rowChecker is a scorer that reads columns of its own (tool_calls'
// expected calls): the build checks every row with it, so a bad value fails
// the build naming the row instead of scoring 0 in a run.
type rowChecker interface {
	checkRow(r Row) error
}

// Row is one sample as the scorers and templates see it.
type Row struct {
	ID       string
	Category string
	Target   string
	Cluster  string
	// Fields are the row's columns, as templates see them.
	Fields map[string]any
}

// Types are the scorer types, for docs/tasks.md and errors.
var Types = []string{"exact_match", "includes", "regex", "numeric", "choice", "json", "tool_calls", "code", "rubric", "scale", "qa_grade"}

// paramError is a scorer parameter that breaks a rule; Compile adds the
// file and the scorer's index.
type paramError struct {
	key  string
	line int
	msg  string
}

func (e *paramError) Error() string { return e.key + ": " + e.msg }

// params decodes a scorer's parameters into v, refusing unknown keys.
func params(n yaml.Node, v any) error {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(&n); err != nil {
		return err
	}
	dec := yaml.NewDecoder(&buf)
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil && err.Error() != "EOF" {
		msg := err.Error()
		if m := regexp.MustCompile(`field (\S+) not found in type \S+`).FindStringSubmatch(msg); m != nil {
			return &paramError{key: m[1], line: paramLine(n, m[1]), msg: "is not a parameter of this scorer"}
		}
		return &paramError{msg: strings.TrimPrefix(strings.TrimPrefix(msg, "yaml: unmarshal errors:\n  "), "yaml: ")}
	}
	return nil
}

func paramLine(n yaml.Node, key string) int {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i].Line
		}
	}
	return n.Line
}

// newScorer compiles one scorer of the task file.
func newScorer(s Scorer, spec *Spec) (scorer, error) {
	needTarget := func() error {
		if spec.Columns.Target == "" {
			return &paramError{key: "type", line: s.line, msg: s.Type + " compares with the target: set columns.target"}
		}
		return nil
	}
	switch s.Type {
	case "exact_match":
		var p struct {
			normalize `yaml:",inline"`
			Extract   *extractParams `yaml:"extract"`
		}
		if err := params(s.Params, &p); err != nil {
			return nil, err
		}
		if err := needTarget(); err != nil {
			return nil, err
		}
		n, err := p.normalize.compile(s.Params)
		if err != nil {
			return nil, err
		}
		x, err := p.Extract.compile(s.Params)
		if err != nil {
			return nil, err
		}
		return exactMatch{norm: n, extract: x}, nil
	case "includes":
		var p struct {
			Values     []string `yaml:"values"`
			Mode       string   `yaml:"mode"`
			IgnoreCase bool     `yaml:"ignore_case"`
		}
		if err := params(s.Params, &p); err != nil {
			return nil, err
		}
		if p.Mode == "" {
			p.Mode = "any"
		}
		if p.Mode != "any" && p.Mode != "all" {
			return nil, &paramError{key: "mode", line: paramLine(s.Params, "mode"), msg: fmt.Sprintf("%q: want any or all", p.Mode)}
		}
		inc := includes{all: p.Mode == "all", fold: p.IgnoreCase}
		if len(p.Values) == 0 {
			if err := needTarget(); err != nil {
				return nil, &paramError{key: "values", line: s.line, msg: "is empty and columns.target is not set: give the values, or the target column"}
			}
		}
		for _, v := range p.Values {
			t, err := compileTemplate(v)
			if err != nil {
				return nil, &paramError{key: "values", line: paramLine(s.Params, "values"), msg: err.Error()}
			}
			inc.values = append(inc.values, t)
		}
		return inc, nil
	case "regex":
		var p struct {
			Pattern string `yaml:"pattern"`
			Not     bool   `yaml:"not"`
		}
		if err := params(s.Params, &p); err != nil {
			return nil, err
		}
		if p.Pattern == "" {
			return nil, &paramError{key: "pattern", line: s.line, msg: "is required"}
		}
		re, err := regexp.Compile(p.Pattern)
		if err != nil {
			return nil, &paramError{key: "pattern", line: paramLine(s.Params, "pattern"), msg: fmt.Sprintf("%q does not compile (Go's RE2 syntax): %v", p.Pattern, err)}
		}
		return regexScorer{re: re, not: p.Not}, nil
	case "numeric":
		var p struct {
			Tolerance float64        `yaml:"tolerance"`
			Relative  bool           `yaml:"relative"`
			Select    string         `yaml:"select"`
			Extract   *extractParams `yaml:"extract"`
		}
		if err := params(s.Params, &p); err != nil {
			return nil, err
		}
		if err := needTarget(); err != nil {
			return nil, err
		}
		if p.Tolerance < 0 || math.IsNaN(p.Tolerance) {
			return nil, &paramError{key: "tolerance", line: paramLine(s.Params, "tolerance"), msg: "must be 0 or more"}
		}
		if p.Select == "" {
			p.Select = "last"
		}
		if p.Select != "first" && p.Select != "last" {
			return nil, &paramError{key: "select", line: paramLine(s.Params, "select"), msg: fmt.Sprintf("%q: want first or last", p.Select)}
		}
		x, err := p.Extract.compile(s.Params)
		if err != nil {
			return nil, err
		}
		return numeric{tol: p.Tolerance, relative: p.Relative, last: p.Select == "last", extract: x}, nil
	case "choice":
		var p struct {
			Labels  string `yaml:"labels"`
			Choices string `yaml:"choices"`
		}
		if err := params(s.Params, &p); err != nil {
			return nil, err
		}
		if err := needTarget(); err != nil {
			return nil, err
		}
		if p.Labels == "" {
			p.Labels = "ABCDEFGHIJ"
		}
		for _, r := range p.Labels {
			if !unicode.IsUpper(r) || r > unicode.MaxASCII || strings.Count(p.Labels, string(r)) > 1 {
				return nil, &paramError{key: "labels", line: paramLine(s.Params, "labels"), msg: fmt.Sprintf("%q: want distinct capital letters A-Z", p.Labels)}
			}
		}
		return newChoice(p.Labels, p.Choices), nil
	case "json":
		var p struct {
			Schema  map[string]any `yaml:"schema"`
			Fields  []string       `yaml:"fields"`
			Extract bool           `yaml:"extract"`
		}
		if err := params(s.Params, &p); err != nil {
			return nil, err
		}
		js := jsonScorer{fields: p.Fields, extract: p.Extract}
		if len(p.Fields) > 0 {
			if err := needTarget(); err != nil {
				return nil, &paramError{key: "fields", line: paramLine(s.Params, "fields"), msg: "compares with the target object: set columns.target"}
			}
		}
		if p.Schema != nil {
			line := paramLine(s.Params, "schema")
			raw, err := json.Marshal(normalizeYAML(p.Schema))
			if err != nil {
				return nil, &paramError{key: "schema", line: line, msg: err.Error()}
			}
			sch, err := compileSchema(raw)
			if err != nil {
				return nil, &paramError{key: "schema", line: line, msg: "is not a JSON Schema: " + strings.ReplaceAll(err.Error(), "\n", " ")}
			}
			js.schema = sch
		}
		return js, nil
	case "tool_calls":
		return newToolCalls(s, spec)
	case "code":
		return newCode(s, spec)
	case "rubric":
		return newRubric(s, spec)
	case "scale":
		return newScale(s)
	case "qa_grade":
		return newQAGrade(s, spec)
	}
	if f, ok := externJudgedScorer(s.Type); ok {
		fn, err := f(s.Params, spec)
		if err != nil {
			return nil, &paramError{key: "type", line: s.line, msg: err.Error()}
		}
		return funcJudged(fn), nil
	}
	if f, ok := externScorer(s.Type); ok {
		fn, err := f(s.Params, spec)
		if err != nil {
			return nil, &paramError{key: "type", line: s.line, msg: err.Error()}
		}
		return funcScorer(fn), nil
	}
	return nil, &paramError{key: "type", line: s.line, msg: fmt.Sprintf("%q is not a scorer: want one of %s", s.Type, strings.Join(Types, ", "))}
}

func compileSchema(raw []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	// No $ref leaves the task file: a schema's references are its own.
	c.UseLoader(noLoader{})
	if err := c.AddResource("task.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("task.json")
}

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("a task file's schema refers only to itself, not to %s", url)
}

// normalizeYAML makes YAML's decoded maps JSON's.
func normalizeYAML(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = normalizeYAML(x)
		}
		return t
	case map[any]any:
		m := map[string]any{}
		for k, x := range t {
			m[fmt.Sprint(k)] = normalizeYAML(x)
		}
		return m
	case []any:
		for i, x := range t {
			t[i] = normalizeYAML(x)
		}
	}
	return v
}

// normalize are the text normalisers of exact_match (lm-evaluation-
// harness's exact_match parameters).
type normalize struct {
	IgnoreCase        bool     `yaml:"ignore_case"`
	IgnorePunctuation bool     `yaml:"ignore_punctuation"`
	IgnoreNumbers     bool     `yaml:"ignore_numbers"`
	IgnoreWhitespace  bool     `yaml:"ignore_whitespace"`
	RegexesToIgnore   []string `yaml:"regexes_to_ignore"`
}

type normalizer struct {
	normalize
	ignore []*regexp.Regexp
}

func (n normalize) compile(node yaml.Node) (normalizer, error) {
	out := normalizer{normalize: n}
	for _, p := range n.RegexesToIgnore {
		re, err := regexp.Compile(p)
		if err != nil {
			return out, &paramError{key: "regexes_to_ignore", line: paramLine(node, "regexes_to_ignore"), msg: fmt.Sprintf("%q does not compile (Go's RE2 syntax): %v", p, err)}
		}
		out.ignore = append(out.ignore, re)
	}
	return out, nil
}

// apply normalises s: regexes removed first, then case, punctuation,
// digits, white space; surrounding white space always.
func (n normalizer) apply(s string) string {
	for _, re := range n.ignore {
		s = re.ReplaceAllString(s, "")
	}
	if n.IgnoreCase {
		s = strings.ToLower(s)
	}
	if n.IgnorePunctuation || n.IgnoreNumbers || n.IgnoreWhitespace {
		s = strings.Map(func(r rune) rune {
			switch {
			case n.IgnorePunctuation && unicode.IsPunct(r):
				return -1
			case n.IgnoreNumbers && unicode.IsDigit(r):
				return -1
			case n.IgnoreWhitespace && unicode.IsSpace(r):
				return -1
			}
			return r
		}, s)
	}
	return strings.TrimSpace(s)
}

// extractParams take part of the reply by a regex before comparing.
type extractParams struct {
	Regex    string  `yaml:"regex"`
	Group    *int    `yaml:"group"`
	Select   string  `yaml:"select"`
	Fallback *string `yaml:"fallback"`
}

type extractor struct {
	re       *regexp.Regexp
	group    int
	last     bool
	fallback string
}

func (p *extractParams) compile(node yaml.Node) (*extractor, error) {
	if p == nil {
		return nil, nil
	}
	line := paramLine(node, "extract")
	re, err := regexp.Compile(p.Regex)
	if err != nil || p.Regex == "" {
		return nil, &paramError{key: "extract.regex", line: line, msg: fmt.Sprintf("%q does not compile (Go's RE2 syntax): %v", p.Regex, err)}
	}
	x := &extractor{re: re, fallback: "[invalid]"}
	if re.NumSubexp() > 0 {
		x.group = 1
	}
	if p.Group != nil {
		if *p.Group < 0 || *p.Group > re.NumSubexp() {
			return nil, &paramError{key: "extract.group", line: line, msg: fmt.Sprintf("%d: the regex has %d groups", *p.Group, re.NumSubexp())}
		}
		x.group = *p.Group
	}
	switch p.Select {
	case "", "first":
	case "last":
		x.last = true
	default:
		return nil, &paramError{key: "extract.select", line: line, msg: fmt.Sprintf("%q: want first or last", p.Select)}
	}
	if p.Fallback != nil {
		x.fallback = *p.Fallback
	}
	return x, nil
}

// apply returns the selected match's group, or the fallback.
func (x *extractor) apply(s string) string {
	if x == nil {
		return s
	}
	ms := x.re.FindAllStringSubmatch(s, -1)
	if len(ms) == 0 {
		return x.fallback
	}
	m := ms[0]
	if x.last {
		m = ms[len(ms)-1]
	}
	return m[x.group]
}

type exactMatch struct {
	norm    normalizer
	extract *extractor
}

func (e exactMatch) score(reply Reply, r Row) (float64, string) {
	got := e.norm.apply(e.extract.apply(reply.Text))
	if got == e.norm.apply(r.Target) {
		return 1, ""
	}
	return 0, fmt.Sprintf("got %q, want %q", clip(got), clip(e.norm.apply(r.Target)))
}

type includes struct {
	values []*Template
	all    bool
	fold   bool
}

func (in includes) score(rep Reply, r Row) (float64, string) {
	reply := rep.Text
	vals := []string{r.Target}
	if len(in.values) > 0 {
		vals = vals[:0]
		for _, t := range in.values {
			v, err := t.render(r.Fields)
			if err != nil {
				return 0, "values: " + err.Error()
			}
			vals = append(vals, v)
		}
	}
	if in.fold {
		reply = strings.ToLower(reply)
	}
	var missing []string
	found := 0
	for _, v := range vals {
		w := v
		if in.fold {
			w = strings.ToLower(v)
		}
		if strings.Contains(reply, w) {
			found++
		} else {
			missing = append(missing, v)
		}
	}
	if (in.all && len(missing) == 0) || (!in.all && found > 0) {
		return 1, ""
	}
	return 0, fmt.Sprintf("missing %q", missing)
}

type regexScorer struct {
	re  *regexp.Regexp
	not bool
}

func (s regexScorer) score(reply Reply, _ Row) (float64, string) {
	if s.re.MatchString(reply.Text) != s.not {
		return 1, ""
	}
	if s.not {
		return 0, "matches " + s.re.String()
	}
	return 0, "does not match " + s.re.String()
}

// numberRE finds numbers as people write them: signs, thousands commas,
// decimals, exponents.
var numberRE = regexp.MustCompile(`[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+]?\.\d+`)

type numeric struct {
	tol      float64
	relative bool
	last     bool
	extract  *extractor
}

func parseNumber(s string) (float64, bool) {
	ms := numberRE.FindAllString(s, -1)
	if len(ms) != 1 {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(ms[0], ",", ""), 64)
	return f, err == nil
}

func (n numeric) score(reply Reply, r Row) (float64, string) {
	want, ok := parseNumber(r.Target)
	if !ok {
		return 0, fmt.Sprintf("the target %q is not one number", clip(r.Target))
	}
	text := n.extract.apply(reply.Text)
	ms := numberRE.FindAllString(text, -1)
	if len(ms) == 0 {
		return 0, "no number in the reply"
	}
	m := ms[0]
	if n.last {
		m = ms[len(ms)-1]
	}
	got, err := strconv.ParseFloat(strings.ReplaceAll(m, ",", ""), 64)
	if err != nil {
		return 0, "no number in the reply"
	}
	tol := n.tol
	if n.relative {
		tol *= math.Abs(want)
	}
	if math.Abs(got-want) <= tol {
		return 1, ""
	}
	return 0, fmt.Sprintf("got %v, want %v", got, want)
}

// choice scores a multiple-choice letter: the target is a label (B), a
// choice's index (1, from 0) or, with a choices column, a choice's text.
type choice struct {
	labels  string
	choices string
	leading *regexp.Regexp
	stated  *regexp.Regexp
	alone   *regexp.Regexp
}

func newChoice(labels, choices string) choice {
	set := "[" + labels + "]"
	return choice{labels: labels, choices: choices,
		leading: regexp.MustCompile(`^\s*(?:\((` + set + `)\)|(` + set + `)(?:[.:)]|\s*$))`),
		stated:  regexp.MustCompile(`(?i:answer)(?:\s+is)?\s*[:：]?\s*\(?(` + set + `)\)?\b`),
		alone:   regexp.MustCompile(`\b(` + set + `)\b`),
	}
}

// letter is the label a reply gives: a leading label ("B." "(B)"), else
// one stated as the answer ("the answer is B"), else the last label that
// stands alone.
func (c choice) letter(reply string) string {
	if m := c.leading.FindStringSubmatch(reply); m != nil {
		return m[1] + m[2]
	}
	if ms := c.stated.FindAllStringSubmatch(reply, -1); len(ms) > 0 {
		return ms[len(ms)-1][1]
	}
	if ms := c.alone.FindAllStringSubmatch(reply, -1); len(ms) > 0 {
		return ms[len(ms)-1][1]
	}
	return ""
}

// want is the target's label.
func (c choice) want(r Row) (string, error) {
	t := strings.TrimSpace(r.Target)
	if len(t) == 1 && strings.Contains(c.labels, t) {
		return t, nil
	}
	if i, err := strconv.Atoi(t); err == nil && i >= 0 && i < len(c.labels) {
		return c.labels[i : i+1], nil
	}
	if c.choices != "" {
		if list, ok := r.Fields[c.choices].([]any); ok {
			for i, x := range list {
				if fmt.Sprint(x) == t && i < len(c.labels) {
					return c.labels[i : i+1], nil
				}
			}
		}
	}
	return "", fmt.Errorf("the target %q is no label of %s, index or choice", clip(t), c.labels)
}

func (c choice) score(reply Reply, r Row) (float64, string) {
	want, err := c.want(r)
	if err != nil {
		return 0, err.Error()
	}
	got := c.letter(reply.Text)
	if got == want {
		return 1, ""
	}
	if got == "" {
		return 0, "no choice label in the reply"
	}
	return 0, fmt.Sprintf("chose %s, want %s", got, want)
}

type jsonScorer struct {
	schema  *jsonschema.Schema
	fields  []string
	extract bool
}

var fenceRE = regexp.MustCompile("(?s)```(?:json)?\\s*\n(.*?)```")

// jsonOf is the reply's JSON value: the reply, or with extract the first
// fenced block, else the text from the first { or [ to the last } or ].
func (j jsonScorer) jsonOf(reply string) (any, error) {
	text := strings.TrimSpace(reply)
	if j.extract {
		if m := fenceRE.FindStringSubmatch(text); m != nil {
			text = m[1]
		} else if i := strings.IndexAny(text, "{["); i >= 0 {
			if k := strings.LastIndexAny(text, "}]"); k > i {
				text = text[i : k+1]
			}
		}
	}
	return jsonschema.UnmarshalJSON(strings.NewReader(text))
}

func (j jsonScorer) score(reply Reply, r Row) (float64, string) {
	v, err := j.jsonOf(reply.Text)
	if err != nil {
		return 0, "not JSON: " + clip(err.Error())
	}
	if j.schema != nil {
		if err := j.schema.Validate(v); err != nil {
			return 0, "schema: " + clip(strings.ReplaceAll(err.Error(), "\n", " "))
		}
	}
	if len(j.fields) == 0 {
		return 1, ""
	}
	want, err := jsonschema.UnmarshalJSON(strings.NewReader(r.Target))
	if err != nil {
		return 0, "the target is not JSON: " + clip(err.Error())
	}
	got, _ := v.(map[string]any)
	wm, _ := want.(map[string]any)
	var wrong []string
	for _, f := range j.fields {
		if got == nil || wm == nil || !sameJSON(got[f], wm[f]) {
			wrong = append(wrong, f)
		}
	}
	if len(wrong) == 0 {
		return 1, ""
	}
	slices.Sort(wrong)
	return 0, fmt.Sprintf("fields differ: %s", strings.Join(wrong, ", "))
}

func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}
