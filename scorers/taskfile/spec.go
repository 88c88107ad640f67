// Package taskfile is the benchmark a user writes as a file instead of Go:
// a YAML task file names its data, the prompt as chat-message templates
// over a row's columns, the generation settings and the scorers, from a
// library of built-in ones with parameters (docs/tasks.md). Parse reads
// and checks a task file (every error names the file, its line and the
// key); Compile turns it into a Task that renders prompts and scores
// replies. The data a task file names is read by datasets/taskfile.
package taskfile

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// MaxFileBytes bounds a task file: it is configuration, a few KiB.
const MaxFileBytes = 1 << 20

// Spec is a task file as written.
type Spec struct {
	// Name is the dataset's name (and the benchmark's): lower-case letters,
	// digits and dashes, not a built-in benchmark's.
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description" json:"description"`
	License     string `yaml:"license" json:"license,omitempty"`
	// Metric is the headline metric, a scorer's name; the first scorer's
	// when empty.
	Metric string `yaml:"metric" json:"metric,omitempty"`
	// Data names the splits' sources: "test" is evaluated; others (a
	// few-shot split) are read for the prompt only.
	Data map[string]Sources `yaml:"data" json:"data"`
	// Columns says which column is what.
	Columns Columns `yaml:"columns" json:"columns"`
	// Prompt is what the model under test is sent.
	Prompt Prompt `yaml:"prompt" json:"prompt"`
	// Generation are the generation settings.
	Generation Generation `yaml:"generation" json:"generation,omitzero"`
	// Scorers score each reply; every one is a metric.
	Scorers []Scorer `yaml:"scorers" json:"scorers"`
}

// Sources are one split's files: one source, or a list of them.
type Sources []Source

// UnmarshalYAML takes one source or a list.
func (s *Sources) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.SequenceNode {
		var list []Source
		if err := n.Decode(&list); err != nil {
			return err
		}
		*s = list
		return nil
	}
	var one Source
	if err := n.Decode(&one); err != nil {
		return err
	}
	*s = Sources{one}
	return nil
}

// Source is one file or folder of a split.
type Source struct {
	// Path is a local path (relative to the task file), an http(s):// or
	// an s3:// URL.
	Path string `yaml:"path" json:"path"`
	// Format is jsonl, json (an array of objects), csv, parquet or hf (a
	// Hugging Face-layout folder: data/**/*.parquet); from the path's
	// extension when empty (a folder is hf).
	Format string `yaml:"format" json:"format,omitempty"`
	// Config and Split select the files of an hf folder: a config's
	// folder (data/config=NAME/ or data/NAME/) and the files named for a
	// split (SPLIT-*.parquet or SPLIT.parquet). Split defaults to the
	// split's own name.
	Config string `yaml:"config" json:"config,omitempty"`
	Split  string `yaml:"split" json:"split,omitempty"`
}

// Columns name the columns with a role.
type Columns struct {
	// ID is the sample id's column; when empty, an "id" column if there is
	// one, else the row's number in its split (row-1, row-2, ...).
	ID string `yaml:"id" json:"id,omitempty"`
	// Category groups samples in the summary (per-category metrics).
	Category string `yaml:"category" json:"category,omitempty"`
	// Target is the reference answer, for the scorers that compare with
	// one and for baseline/reference.
	Target string `yaml:"target" json:"target,omitempty"`
	// Cluster, when set, makes samples that share it one cluster for
	// standard errors and resampling (docs/statistics.md).
	Cluster string `yaml:"cluster" json:"cluster,omitempty"`
}

// Prompt is the chat sent for a row.
type Prompt struct {
	// Messages are templates over the row's columns (role system, user or
	// assistant); the last is the user's, or an assistant's after the
	// user's last one: the start of the reply, sent as the last message
	// (left out for a row where it renders empty).
	Messages []Message `yaml:"messages" json:"messages"`
	// Fewshot, when set, puts examples before the user's last message.
	Fewshot *Fewshot `yaml:"fewshot" json:"fewshot,omitempty"`
	// Tools is a column holding the function definitions offered (a JSON
	// array of OpenAI tools or of bare function definitions).
	Tools string `yaml:"tools" json:"tools,omitempty"`
}

// Question is the index of the user's last message, the one the model
// answers: the last message, or the one before it when the last is an
// assistant's, the start of the reply (a prefill: lm-evaluation-harness's
// gen_prefix as its chat API models send it). Messages is not empty.
func (p Prompt) Question() int {
	n := len(p.Messages)
	if n >= 2 && p.Messages[n-1].Role == "assistant" && p.Messages[n-2].Role == "user" {
		return n - 2
	}
	return n - 1
}

// Message is one chat message's template.
type Message struct {
	Role    string `yaml:"role" json:"role"`
	Content string `yaml:"content" json:"content"`
	// Optional says a message that renders empty for a row is left out of
	// its chat (a translated promptfoo config whose prompts differ in
	// their roles: each row fills the messages of its own prompt). The
	// user's last message cannot be optional.
	Optional bool `yaml:"optional,omitempty" json:"optional,omitempty"`
}

// Fewshot draws examples from a split.
type Fewshot struct {
	// From is the split the examples come from (not test).
	From string `yaml:"from" json:"from"`
	N    int    `yaml:"n" json:"n"`
	// Seed draws the examples: the same seed, the same examples for every
	// row.
	Seed int64 `yaml:"seed" json:"seed"`
	// Sampler is how the examples are drawn: shuffle (the default: one
	// draw by the seed, the same examples for every row), python
	// (lm-evaluation-harness's default sampler: one Python
	// random.Random(seed) over the test rows in order, each row's examples
	// random.sample(pool, n), so rows get different examples) or first (the
	// split's first n rows, lm-eval's first_n).
	Sampler string `yaml:"sampler" json:"sampler,omitempty"`
	// User and Assistant render one example's turns; by default the last
	// message's template and the target column.
	User      string `yaml:"user" json:"user,omitempty"`
	Assistant string `yaml:"assistant" json:"assistant,omitempty"`
	// DropSame leaves out of a row's examples every row of the split whose
	// columns all equal the row's (lm-eval's rm_eval_doc, for examples
	// drawn from the evaluated split itself): sampler python draws n+1 and
	// keeps the first n others, first the first n others.
	DropSame bool `yaml:"drop_same" json:"drop_same,omitempty"`
}

// Generation are the settings sent with every request.
type Generation struct {
	Temperature *float64 `yaml:"temperature" json:"temperature,omitempty"`
	MaxTokens   int      `yaml:"max_tokens" json:"max_tokens,omitempty"`
	// TopP is nucleus sampling's top_p (0 < top_p <= 1), sent as given.
	TopP *float64 `yaml:"top_p" json:"top_p,omitempty"`
	Stop []string `yaml:"stop" json:"stop,omitempty"`
	// Repeats asks the model this many times per row (1 to MaxRepeats;
	// 1 when 0): every scorer scores each reply and a sample's metric is
	// the mean over its replies (lm-evaluation-harness's repeats).
	Repeats int `yaml:"repeats" json:"repeats,omitempty"`
}

// MaxRepeats bounds generation.repeats: a row's replies are held, and
// scored, together.
const MaxRepeats = 64

// N is how many times a row is asked: Repeats, or 1.
func (g Generation) N() int { return max(g.Repeats, 1) }

// Scorer is one scorer: its type from the library and its parameters.
type Scorer struct {
	// Type is the library's name for it (exact_match, includes, regex,
	// numeric, choice, json, tool_calls, rubric, scale, qa_grade).
	Type string `yaml:"type" json:"type"`
	// Name is the metric's name; the type's when empty.
	Name string `yaml:"name" json:"name,omitempty"`
	// Params are the type's parameters, checked by the type.
	Params yaml.Node `yaml:"-" json:"-"`

	line int // where the scorer starts, for errors
}

// UnmarshalYAML takes type and name and keeps the rest as the params.
func (s *Scorer) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: a scorer is a mapping (type: ..., name: ..., parameters)", n.Line)}}
	}
	s.line = n.Line
	params := yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: n.Line, Column: n.Column}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "type":
			if err := v.Decode(&s.Type); err != nil {
				return err
			}
		case "name":
			if err := v.Decode(&s.Name); err != nil {
				return err
			}
		default:
			params.Content = append(params.Content, k, v)
		}
	}
	s.Params = params
	return nil
}

// Metric is the scorer's metric name.
func (s Scorer) Metric() string {
	if s.Name != "" {
		return s.Name
	}
	return s.Type
}

// Error is a task file that breaks a rule: it names the file, the line
// (0 when unknown) and the key.
type Error struct {
	File string
	Line int
	Key  string
	Msg  string
}

func (e *Error) Error() string {
	where := e.File
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Key != "" {
		return fmt.Sprintf("%s: %s: %s", where, e.Key, e.Msg)
	}
	return fmt.Sprintf("%s: %s", where, e.Msg)
}

// ErrInvalid is wrapped by every *Error (errors.Is).
var ErrInvalid = errors.New("taskfile: invalid task file")

func (e *Error) Unwrap() error { return ErrInvalid }

var (
	nameRE   = regexp.MustCompile(`^[a-z][a-z0-9-]{0,63}$`)
	splitRE  = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$`)
	formats  = []string{"jsonl", "json", "csv", "parquet", "hf"}
	roles    = []string{"system", "user", "assistant"}
	lineInYA = regexp.MustCompile(`^yaml: (?:unmarshal errors:\n\s*)?line (\d+): (.*)$`)
)

// Parse reads a task file's bytes (file names it in errors) and checks
// its shape: known keys only, the required ones present, names, formats
// and roles valid. Parameters of scorers and templates are checked by
// Compile.
func Parse(file string, data []byte) (*Spec, *yaml.Node, error) {
	if len(data) > MaxFileBytes {
		return nil, nil, &Error{File: file, Msg: fmt.Sprintf("is larger than %d bytes, the limit for a task file", MaxFileBytes)}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, nil, yamlError(file, err)
	}
	if len(root.Content) == 0 {
		return nil, nil, &Error{File: file, Msg: "is empty"}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s Spec
	if err := dec.Decode(&s); err != nil {
		return nil, nil, yamlError(file, err)
	}
	doc := root.Content[0]
	at := func(path ...any) int { return lineOf(doc, path...) }
	bad := func(msg string, path ...any) error {
		return &Error{File: file, Line: at(path...), Key: keyName(path...), Msg: msg}
	}
	switch {
	case s.Name == "":
		return nil, nil, &Error{File: file, Key: "name", Msg: "is required (the dataset's name)"}
	case !nameRE.MatchString(s.Name):
		return nil, nil, bad(fmt.Sprintf("%q: want lower-case letters, digits and dashes, starting with a letter (at most 64)", s.Name), "name")
	case strings.TrimSpace(s.Description) == "":
		return nil, nil, &Error{File: file, Line: at(), Key: "description", Msg: "is required (one line for the leaderboard)"}
	case len(s.Data) == 0:
		return nil, nil, &Error{File: file, Key: "data", Msg: "is required: at least the test split's source (data: {test: {path: FILE}})"}
	}
	if _, ok := s.Data["test"]; !ok {
		return nil, nil, bad("has no test split (the split that is evaluated)", "data")
	}
	for _, split := range sortedKeys(s.Data) {
		if !splitRE.MatchString(split) {
			return nil, nil, bad(fmt.Sprintf("split name %q: want letters, digits, '_', '.' and '-'", split), "data", split)
		}
		if len(s.Data[split]) == 0 {
			return nil, nil, bad("names no source", "data", split)
		}
		for i, src := range s.Data[split] {
			if strings.TrimSpace(src.Path) == "" {
				return nil, nil, bad("is required", "data", split, i, "path")
			}
			if src.Format != "" && !slices.Contains(formats, src.Format) {
				return nil, nil, bad(fmt.Sprintf("%q: want one of %s", src.Format, strings.Join(formats, ", ")), "data", split, i, "format")
			}
		}
	}
	if len(s.Prompt.Messages) == 0 {
		return nil, nil, &Error{File: file, Line: at("prompt"), Key: "prompt.messages", Msg: "is required: at least the user message's template"}
	}
	for i, m := range s.Prompt.Messages {
		if !slices.Contains(roles, m.Role) {
			return nil, nil, bad(fmt.Sprintf("%q: want system, user or assistant", m.Role), "prompt", "messages", i, "role")
		}
		if strings.TrimSpace(m.Content) == "" {
			return nil, nil, bad("is empty", "prompt", "messages", i, "content")
		}
	}
	if q := s.Prompt.Question(); s.Prompt.Messages[q].Role != "user" {
		return nil, nil, bad(fmt.Sprintf("the last message is %s's: the model answers the user's last message (an assistant message after it is the start of the reply)", s.Prompt.Messages[q].Role), "prompt", "messages", q, "role")
	} else if s.Prompt.Messages[q].Optional {
		return nil, nil, bad("is the user's last message, which every chat has: it cannot be optional", "prompt", "messages", q, "optional")
	}
	if f := s.Prompt.Fewshot; f != nil {
		switch {
		case f.From == "" || f.From == "test":
			return nil, nil, bad("names the split the examples come from, not test", "prompt", "fewshot", "from")
		case f.N < 1 || f.N > 64:
			return nil, nil, bad(fmt.Sprintf("%d: want 1 to 64 examples", f.N), "prompt", "fewshot", "n")
		case f.Sampler != "" && f.Sampler != SamplerShuffle && f.Sampler != SamplerPython && f.Sampler != SamplerFirst:
			return nil, nil, bad(fmt.Sprintf("%q: want shuffle, python or first", f.Sampler), "prompt", "fewshot", "sampler")
		case f.DropSame && f.Sampler != SamplerPython && f.Sampler != SamplerFirst:
			return nil, nil, bad("is for sampler python or first (shuffle never gives a row itself)", "prompt", "fewshot", "drop_same")
		}
		if _, ok := s.Data[f.From]; !ok {
			return nil, nil, bad(fmt.Sprintf("%q is not a split under data", f.From), "prompt", "fewshot", "from")
		}
		if f.Assistant == "" && s.Columns.Target == "" {
			return nil, nil, bad("needs an assistant template, or columns.target for the examples' answers", "prompt", "fewshot")
		}
	}
	if g := s.Generation; g.MaxTokens < 0 || len(g.Stop) > 4 || (g.Temperature != nil && (*g.Temperature < 0 || *g.Temperature > 2)) {
		return nil, nil, bad("max_tokens must be 0 or more, stop at most 4 sequences (the OpenAI API's limit), temperature in [0, 2]", "generation")
	}
	if p := s.Generation.TopP; p != nil && (*p <= 0 || *p > 1) {
		return nil, nil, bad(fmt.Sprintf("%g: want more than 0, at most 1", *p), "generation", "top_p")
	}
	if r := s.Generation.Repeats; r < 0 || r > MaxRepeats {
		return nil, nil, bad(fmt.Sprintf("%d: want 1 to %d", r, MaxRepeats), "generation", "repeats")
	}
	if len(s.Scorers) == 0 {
		return nil, nil, &Error{File: file, Key: "scorers", Msg: "is required: at least one scorer (docs/tasks.md lists them)"}
	}
	seen := map[string]bool{}
	for i, sc := range s.Scorers {
		if sc.Type == "" {
			return nil, nil, &Error{File: file, Line: sc.line, Key: fmt.Sprintf("scorers[%d].type", i), Msg: "is required"}
		}
		m := sc.Metric()
		// ',' joins an lm-eval metric and its filter pipeline
		// (exact_match,strict-match, as lm-eval names it); '@' is in
		// lm-eval's vote pipelines (exact_match,maj@64).
		if !nameRE.MatchString(strings.NewReplacer("_", "-", ",", "-", "@", "-").Replace(m)) {
			return nil, nil, &Error{File: file, Line: sc.line, Key: fmt.Sprintf("scorers[%d].name", i), Msg: fmt.Sprintf("%q: want lower-case letters, digits, '_', ',', '@' and '-'", m)}
		}
		if seen[m] {
			return nil, nil, &Error{File: file, Line: sc.line, Key: fmt.Sprintf("scorers[%d].name", i), Msg: fmt.Sprintf("metric %q is named twice (give one a name:)", m)}
		}
		seen[m] = true
	}
	if s.Metric != "" && !seen[s.Metric] {
		return nil, nil, bad(fmt.Sprintf("%q is no scorer's metric", s.Metric), "metric")
	}
	return &s, doc, nil
}

// Headline is the headline metric.
func (s *Spec) Headline() string {
	if s.Metric != "" {
		return s.Metric
	}
	return s.Scorers[0].Metric()
}

// Metrics are the metric names, the headline first.
func (s *Spec) Metrics() []string {
	out := []string{s.Headline()}
	for _, sc := range s.Scorers {
		if m := sc.Metric(); m != out[0] {
			out = append(out, m)
		}
	}
	return out
}

// yamlError turns a YAML error into an *Error with its line.
func yamlError(file string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg := te.Errors[0]
		line := 0
		if m := regexp.MustCompile(`^line (\d+): (.*)$`).FindStringSubmatch(msg); m != nil {
			fmt.Sscanf(m[1], "%d", &line)
			msg = m[2]
		}
		return &Error{File: file, Line: line, Msg: msg}
	}
	if m := lineInYA.FindStringSubmatch(err.Error()); m != nil {
		var line int
		fmt.Sscanf(m[1], "%d", &line)
		return &Error{File: file, Line: line, Msg: m[2]}
	}
	return &Error{File: file, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
}

// lineOf is the line of the node at path (mapping keys and sequence
// indexes) under doc, or of the deepest node found on the way.
func lineOf(doc *yaml.Node, path ...any) int {
	n := doc
	line := 0
	if n != nil {
		line = n.Line
	}
	for _, p := range path {
		if n == nil {
			break
		}
		var next *yaml.Node
		switch k := p.(type) {
		case string:
			if n.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(n.Content); i += 2 {
					if n.Content[i].Value == k {
						line = n.Content[i].Line
						next = n.Content[i+1]
						break
					}
				}
			}
		case int:
			if n.Kind == yaml.SequenceNode && k < len(n.Content) {
				next = n.Content[k]
				line = next.Line
			} else if n.Kind == yaml.MappingNode && k == 0 {
				next = n // one source written without a list
			}
		}
		n = next
	}
	return line
}

// keyName writes a path as a key: data.test[0].path.
func keyName(path ...any) string {
	var b strings.Builder
	for _, p := range path {
		switch k := p.(type) {
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(k)
		case int:
			fmt.Fprintf(&b, "[%d]", k)
		}
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
