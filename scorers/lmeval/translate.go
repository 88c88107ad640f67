package lmeval

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/benchline/benchline/scorers/taskfile"
)

// ScorerType is the task-file scorer type of one lm-eval metric on one
// filter pipeline; its parameters are lm-eval's own keys (doc_to_target,
// doc_to_choice, filter: the pipeline's filters, metric: the metric_list
// entry).
const ScorerType = "lmeval"

func init() { taskfile.RegisterScorer(ScorerType, newScorer) }

// DataError is a dataset_path with no --data mapping: it says the flag to
// add.
type DataError struct {
	File, DatasetPath string
}

func (e *DataError) Error() string {
	return fmt.Sprintf("%s: dataset_path: %s is a Hugging Face Hub dataset, which benchline does not download: give its files with --data %s=DIR (a Hugging Face-layout folder: data/**/*.parquet), or --data %s=FILE (.parquet or .jsonl of the %s split)", e.File, e.DatasetPath, e.DatasetPath, e.DatasetPath, "test")
}

// Unwrap makes a *DataError a taskfile.ErrInvalid.
func (e *DataError) Unwrap() error { return taskfile.ErrInvalid }

var nameBad = regexp.MustCompile(`[^a-z0-9-]+`)

// TaskName is the benchline name of an lm-eval task: lower case, every
// run of other characters ('_', '.') a dash.
func TaskName(task string) string {
	n := strings.Trim(nameBad.ReplaceAllString(strings.ToLower(task), "-"), "-")
	if n == "" || n[0] < 'a' || n[0] > 'z' {
		n = "lm-" + n
	}
	if len(n) > 64 {
		n = strings.TrimRight(n[:64], "-")
	}
	return n
}

// ToYAML translates c (a checked task) into a task file, the data of its
// dataset_path taken from data (dataset_path to a local folder or file,
// as given to --data; relative paths are against the working directory).
// With base empty the task file names its data by absolute paths (for
// task check); else by paths relative to base, the folder the task file
// is written to, which must hold the data (a built task file's data is
// beside it).
func ToYAML(t *Task, c *Config, data map[string]string, base string) ([]byte, error) {
	dir, ok := data[t.DatasetPath]
	if !ok {
		return nil, &DataError{File: t.File, DatasetPath: t.DatasetPath}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("lmeval: --data %s=%s: %w", t.DatasetPath, dir, err)
	}
	splitSources := func(split string) ([]map[string]any, error) {
		var sources []map[string]any
		if files := t.DataFiles[split]; len(files) > 0 {
			for _, f := range files {
				p := f
				if !filepath.IsAbs(p) {
					p = filepath.Join(abs, f)
				}
				sources = append(sources, map[string]any{"path": p})
			}
		} else if st, err := os.Stat(abs); err == nil && !st.IsDir() {
			if split != t.EvalSplit {
				return nil, fmt.Errorf("%s: --data %s=%s is one file, the evaluated split: the few-shot split %q needs dataset_kwargs.data_files or a folder holding the splits", t.File, t.DatasetPath, dir, split)
			}
			sources = append(sources, map[string]any{"path": abs})
		} else {
			src := map[string]any{"path": abs, "format": "hf", "split": split}
			if t.DatasetName != "" {
				src["config"] = t.DatasetName
			}
			sources = append(sources, src)
		}
		if base != "" {
			b, err := filepath.Abs(base)
			if err != nil {
				return nil, fmt.Errorf("lmeval: %w", err)
			}
			for _, src := range sources {
				rel, err := filepath.Rel(b, src["path"].(string))
				if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
					return nil, fmt.Errorf("%s: --data %s=%s: the data is not inside %s, the folder the task file is written to: write it beside the data", t.File, t.DatasetPath, dir, base)
				}
				src["path"] = filepath.ToSlash(rel)
			}
		}
		return sources, nil
	}
	sources, err := splitSources(t.EvalSplit)
	if err != nil {
		return nil, err
	}
	splits := map[string]any{"test": sources}
	prompt := map[string]any{}
	if ss := t.SplitShots; ss != nil {
		shotSources, err := splitSources(ss.Split)
		if err != nil {
			return nil, err
		}
		from := ss.Split
		if from == "test" {
			from = "fewshot" // the task file's test is the evaluated split
		}
		splits[from] = shotSources
		// lm-eval's evaluator seeds the sampler with --fewshot_random_seed
		// (1234 by default).
		fs := map[string]any{"from": from, "n": ss.N, "seed": 1234, "sampler": ss.Sampler, "user": ss.User, "assistant": ss.Assistant}
		if ss.DropSame {
			fs["drop_same"] = true
		}
		prompt["fewshot"] = fs
	}
	var msgs []map[string]string
	if t.Description != "" {
		// lm-eval's system prompt under --apply_chat_template.
		msgs = append(msgs, map[string]string{"role": "system", "content": t.Description})
	}
	for _, sh := range t.Shots {
		// lm-eval's few-shot examples as a multi-turn chat (with
		// --apply_chat_template, fewshot_as_multiturn is on), written as
		// literal text.
		for _, m := range []struct{ role, text string }{{"user", sh.User}, {"assistant", sh.Assistant}} {
			if strings.Contains(m.text, "endraw") {
				return nil, fmt.Errorf("%s: fewshot_config.samples: an example holds \"endraw\", which a task file's template cannot quote", t.File)
			}
			msgs = append(msgs, map[string]string{"role": m.role, "content": "{% raw %}" + m.text + "{% endraw %}"})
		}
	}
	user := t.DocToText
	if identifier(user) {
		user = "{{ __row__['" + user + "'] }}" // lm-eval reads a column by its name
	}
	msgs = append(msgs, map[string]string{"role": "user", "content": user})
	if p := t.GenPrefix; p != "" {
		// lm-eval's chat API models send gen_prefix as the chat's last
		// message, the assistant's (add_generation_prompt off), and score
		// the reply as it comes, without the prefix. A column of that
		// name is read; else it is a template.
		msgs = append(msgs, map[string]string{"role": "assistant", "content": prefixTemplate(p)})
	}
	prompt["messages"] = msgs
	gen := map[string]any{"temperature": t.Temperature, "max_tokens": t.MaxGenToks}
	if t.TopP != nil {
		gen["top_p"] = *t.TopP // lm-eval's chat API models send it as given
	}
	if len(t.Until) > 0 {
		gen["stop"] = t.Until
	}
	if t.Repeats > 1 {
		gen["repeats"] = t.Repeats
	}
	var scorers []yaml.Node
	var list []*yaml.Node
	if e, ok := c.keys["filter_list"]; ok {
		list = e.node.Content
	}
	for i, p := range t.Pipelines {
		for j, m := range t.Metrics {
			params := map[string]any{"type": ScorerType, "name": m.Name + "," + p.Name, "pipeline": p.Name}
			np, err := toNode(params)
			if err != nil {
				return nil, err
			}
			n := *np
			add := func(k string, v *yaml.Node) {
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, v)
			}
			add("doc_to_target", c.keys["doc_to_target"].node)
			if e, ok := c.keys["doc_to_choice"]; ok {
				add("doc_to_choice", e.node)
			}
			if list != nil {
				var pl struct {
					Filter yaml.Node `yaml:"filter"`
				}
				if err := list[i].Decode(&pl); err != nil {
					return nil, err
				}
				add("filter", &pl.Filter)
			}
			if e, ok := c.keys["metric_list"]; ok {
				add("metric", e.node.Content[j])
			}
			scorers = append(scorers, n)
		}
	}
	spec := map[string]any{
		"name":        TaskName(t.Name),
		"description": fmt.Sprintf("lm-evaluation-harness task %s (%s)", t.Name, filepath.Base(t.File)),
		"data":        splits,
		"prompt":      prompt,
		"generation":  gen,
		"scorers":     scorers,
	}
	if t.DocToTarget.Column != "" && t.Choices == nil && t.ChoiceColumn == "" {
		spec["columns"] = map[string]any{"target": t.DocToTarget.Column}
	}
	n, err := toNode(spec)
	if err != nil {
		return nil, err
	}
	quoteNewlines(n) // the nodes copied from the task as written too
	return yaml.Marshal(n)
}

func quoteNewlines(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" && strings.ContainsAny(n.Value, "\n\r") {
		n.Style = yaml.DoubleQuotedStyle
	}
	for _, c := range n.Content {
		quoteNewlines(c)
	}
}

// toNode builds the YAML node of v by hand: yaml.v3's own encoder writes
// "\n" as a block scalar that reads back as "" (and lm-eval's until: ["\n"]
// is everywhere), so strings with a newline are written double-quoted.
func toNode(v any) (*yaml.Node, error) {
	str := func(s string) *yaml.Node {
		n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
		if strings.ContainsAny(s, "\n\r\t") || s == "" {
			n.Style = yaml.DoubleQuotedStyle
		}
		return n
	}
	switch x := v.(type) {
	case *yaml.Node:
		return x, nil
	case yaml.Node:
		return &x, nil
	case string:
		return str(x), nil
	case int, float64, bool:
		var n yaml.Node
		err := n.Encode(x)
		return &n, err
	case []string:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, s := range x {
			n.Content = append(n.Content, str(s))
		}
		return n, nil
	case []map[string]string:
		return seqNode(x)
	case []map[string]any:
		return seqNode(x)
	case []yaml.Node:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for i := range x {
			n.Content = append(n.Content, &x[i])
		}
		return n, nil
	case map[string]string:
		m := make(map[string]any, len(x))
		for k, s := range x {
			m[k] = s
		}
		return toNode(m)
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			c, err := toNode(x[k])
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, str(k), c)
		}
		return n, nil
	}
	return nil, fmt.Errorf("lmeval: cannot write %T", v)
}

// Translate loads the lm-eval task file (with its includes), checks it and
// translates it into a task file's YAML.
// base is as for ToYAML.
func Translate(file string, read func(string) ([]byte, error), data map[string]string, base string) ([]byte, error) {
	c, err := Load(file, read)
	if err != nil {
		return nil, err
	}
	t, err := Parse(c)
	if err != nil {
		return nil, err
	}
	return ToYAML(t, c, data, base)
}

// newScorer compiles an lmeval scorer's parameters (lm-eval's own keys).
func newScorer(params yaml.Node, _ *taskfile.Spec) (taskfile.ScoreFunc, error) {
	c := &Config{File: "scorer", keys: map[string]entry{}}
	var pipeline string
	var filter, metric *yaml.Node
	for i := 0; i+1 < len(params.Content); i += 2 {
		k, v := params.Content[i].Value, params.Content[i+1]
		switch k {
		case "pipeline":
			pipeline = v.Value
		case "doc_to_target", "doc_to_choice":
			c.keys[k] = entry{node: v, file: "scorer"}
		case "filter":
			filter = v
		case "metric":
			metric = v
		default:
			return nil, fmt.Errorf("%s is not a parameter of an lmeval scorer", k)
		}
	}
	if filter != nil {
		seq := &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Value: "name"}, {Kind: yaml.ScalarNode, Value: pipeline},
			{Kind: yaml.ScalarNode, Value: "filter"}, filter}}}}
		c.keys["filter_list"] = entry{node: seq, file: "scorer"}
	}
	if metric != nil {
		c.keys["metric_list"] = entry{node: &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{metric}}, file: "scorer"}
	}
	t := &Task{}
	for _, f := range []func(*Config) error{t.parseTarget, t.parseFilters, t.parseMetrics} {
		if err := f(c); err != nil {
			return nil, err
		}
	}
	// Replies are scored at once by several workers' goroutines: the
	// compiled templates are shared under a lock.
	var mu sync.Mutex
	tmpls := map[string]*taskfile.Template{}
	render := func(src string, fields map[string]any) (string, error) {
		mu.Lock()
		tm, ok := tmpls[src]
		if !ok {
			var err error
			if tm, err = taskfile.CompileTemplate(src); err != nil {
				mu.Unlock()
				return "", err
			}
			tmpls[src] = tm
		}
		mu.Unlock()
		return tm.Render(fields)
	}
	if t.DocToTarget.Template != "" {
		if _, err := taskfile.CompileTemplate(t.DocToTarget.Template); err != nil {
			return nil, fmt.Errorf("doc_to_target: %v", err)
		}
	}
	p, m := t.Pipelines[0], t.Metrics[0]
	// The pipeline runs over all of a sample's replies (one per repeat), as
	// lm-eval's filters do: majority_vote votes over them.
	return func(replies []taskfile.Reply, r taskfile.Row) (float64, string) {
		texts := make([]string, len(replies))
		for i, reply := range replies {
			texts[i] = reply.Text
		}
		s, pred, gold, err := t.ScoreOne(p, m, texts, r.Fields, render)
		if err != nil {
			return 0, err.Error()
		}
		return s, fmt.Sprintf("%q vs %q", clip(pred), clip(strings.Join(gold, " | ")))
	}, nil
}

// ScoreOne scores one row's replies (one per repeat) with pipeline p and
// metric m, as lm-eval's process_results does: the filtered answer against
// the targets, 1 when any target matches.
func (t *Task) ScoreOne(p Pipeline, m Metric, replies []string, fields map[string]any, render func(string, map[string]any) (string, error)) (score float64, pred string, gold []string, err error) {
	if gold, err = t.Targets(fields, render); err != nil {
		return 0, "", nil, fmt.Errorf("doc_to_target: %w", err)
	}
	if pred, err = p.Apply(replies, fields); err != nil {
		return 0, "", gold, err
	}
	for _, g := range gold {
		s, err := m.Score(pred, g)
		if err != nil {
			return 0, pred, gold, err
		}
		if s > 0 {
			return 1, pred, gold, nil
		}
	}
	return 0, pred, gold, nil
}

// renderWith renders a template over a row once (compiled each time).
func renderWith(src string, fields map[string]any) (string, error) {
	tm, err := taskfile.CompileTemplate(src)
	if err != nil {
		return "", err
	}
	return tm.Render(fields)
}

// seqNode is a YAML sequence of xs, each converted by toNode.
func seqNode[T any](xs []T) (*yaml.Node, error) {
	n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, x := range xs {
		c, err := toNode(x)
		if err != nil {
			return nil, err
		}
		n.Content = append(n.Content, c)
	}
	return n, nil
}
