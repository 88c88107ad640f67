package lmeval

import (
	"fmt"
	"github.com/benchline/benchline/scorers/taskfile"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// refused are the keys lm-eval knows that benchline cannot follow, with
// the reason (every other unknown key is refused as unknown).
var refused = map[string]string{
	"process_docs":         "is Python code run over the dataset; benchline runs no Python",
	"process_results":      "is Python code that scores replies; benchline runs no Python: use filter_list and metric_list",
	"custom_dataset":       "is Python code that makes the dataset",
	"class":                "names a Python task class",
	"unsafe_code":          "marks a task that runs model-written code, which benchline does not run",
	"use_prompt":           "names a promptsource prompt, which needs Python",
	"multiple_target":      "is not supported: one target per row",
	"doc_to_image":         "(images) is not supported",
	"doc_to_audio":         "(audio) is not supported",
	"group":                "declares a group of tasks: load each task's own file",
	"task_list":            "declares a list of tasks: load each task's own file",
	"fewshot_split_kwargs": "is not supported",
}

// known are the keys benchline follows (or, for metadata, task_alias,
// should_decontaminate, doc_to_decontamination_query and validation_split
// beside test_split, reads and does not need).
var known = []string{"task", "task_alias", "tag", "dataset_path", "dataset_name", "dataset_kwargs",
	"test_split", "validation_split", "fewshot_split", "training_split", "doc_to_text", "doc_to_target",
	"doc_to_choice", "description", "target_delimiter", "fewshot_delimiter", "num_fewshot", "generation_kwargs",
	"filter_list", "metric_list", "output_type", "fewshot_config", "repeats", "metadata", "should_decontaminate", "doc_to_decontamination_query", "gen_prefix"}

// Task is an lm-eval generate_until task, checked.
type Task struct {
	File        string
	Name        string
	Tags        []string
	DatasetPath string
	DatasetName string
	// DataFiles are dataset_kwargs.data_files by split (a string or a list
	// given as a list).
	DataFiles map[string][]string
	// EvalSplit is test_split, else validation_split; TestSplit is
	// test_split as given.
	EvalSplit, TestSplit string
	// TrainSplit and ValSplit are training_split and validation_split.
	TrainSplit, ValSplit string
	DocToText            string
	DocToTarget          target
	// Choices are doc_to_choice: a list, or a column (ChoiceColumn).
	Choices      []string
	ChoiceColumn string
	Description  string
	// GenPrefix is gen_prefix: the start of the reply, a column or a
	// template, sent as a last assistant message.
	GenPrefix   string
	Until       []string
	Temperature float64
	// TopP is generation_kwargs.top_p, nil when not given.
	TopP       *float64
	MaxGenToks int
	// Repeats is repeats: how many replies a row gets (generation.repeats).
	Repeats   int
	Pipelines []Pipeline
	Metrics   []Metric
	// Shots are the few-shot examples, rendered: fewshot_config's inline
	// samples, the first num_fewshot (lm-eval's first_n sampler).
	Shots []Shot
	// SplitShots, when set, are num_fewshot examples drawn from a split.
	SplitShots *SplitShots
}

// SplitShots are few-shot examples drawn from a split of the data, as the
// task file's prompt.fewshot draws them.
type SplitShots struct {
	// Split is fewshot_split, else training_split, else validation_split.
	Split string
	N     int
	// Sampler is the task file's: python (lm-eval's default sampler,
	// random.Random(1234)) or first (first_n).
	Sampler string
	// User and Assistant are the examples' turns as task-file templates.
	User, Assistant string
	// DropSame leaves out the examples equal to the evaluated document
	// (lm-eval's rm_eval_doc, when fewshot_split is test_split).
	DropSame bool
}

// Shot is one few-shot example as lm-eval's chat prompt has it: the
// user's turn and the assistant's.
type Shot struct{ User, Assistant string }

// target is doc_to_target: a column, a template, or a number.
type target struct {
	Column   string
	Template string
	Int      *int
}

// Parse checks c as a generate_until task; every refusal names the key.
func Parse(c *Config) (*Task, error) {
	for _, k := range c.order {
		if why, ok := refused[k]; ok {
			return nil, c.fail(k, why)
		}
		if !slices.Contains(known, k) {
			return nil, c.fail(k, "is not a key benchline reads from an lm-eval task (docs/tasks.md lists them)")
		}
	}
	t := &Task{File: c.File, MaxGenToks: 256}
	var outType string
	if _, err := c.decode("output_type", &outType); err != nil {
		return nil, err
	}
	if outType == "" {
		outType = "generate_until"
	}
	if outType != "generate_until" {
		return nil, fmt.Errorf("%w", &wrapped{c.fail("output_type", fmt.Sprintf("%s: needs the model's log-probabilities of given text, which a chat API does not give; only generate_until runs on an API model", outType)), ErrNotGenerate})
	}
	str := func(key string, dst *string) error { _, err := c.decode(key, dst); return err }
	for key, dst := range map[string]*string{"task": &t.Name, "dataset_path": &t.DatasetPath, "dataset_name": &t.DatasetName, "doc_to_text": &t.DocToText, "description": &t.Description, "gen_prefix": &t.GenPrefix} {
		if err := str(key, dst); err != nil {
			return nil, err
		}
	}
	if t.Name == "" {
		return nil, c.fail("task", "is required (the task's name)")
	}
	if t.DatasetPath == "" {
		return nil, c.fail("dataset_path", "is required")
	}
	if t.DocToText == "" {
		return nil, c.fail("doc_to_text", "is required")
	}
	if c.has("tag") {
		var one string
		if err := c.keys["tag"].node.Decode(&one); err != nil || c.keys["tag"].node.Kind == yaml.SequenceNode {
			if _, err := c.decode("tag", &t.Tags); err != nil {
				return nil, err
			}
		} else {
			t.Tags = []string{one}
		}
	}
	var test, val string
	if err := str("test_split", &test); err != nil {
		return nil, err
	}
	if err := str("validation_split", &val); err != nil {
		return nil, err
	}
	t.ValSplit = val
	if err := str("training_split", &t.TrainSplit); err != nil {
		return nil, err
	}
	t.EvalSplit, t.TestSplit = test, test
	if t.EvalSplit == "" {
		t.EvalSplit = val
	}
	if t.EvalSplit == "" {
		return nil, c.fail("test_split", "is required (or validation_split): the split that is evaluated")
	}
	if c.has("dataset_kwargs") {
		var kw map[string]yaml.Node
		if _, err := c.decode("dataset_kwargs", &kw); err != nil {
			return nil, err
		}
		for k, v := range kw {
			if k == "trust_remote_code" {
				continue // lets the Hub's loading script run; benchline reads the data's files
			}
			if k != "data_files" {
				return nil, c.fail("dataset_kwargs."+k, "is not supported: only data_files (and trust_remote_code, which does nothing here)")
			}
			t.DataFiles = map[string][]string{}
			var m map[string]yaml.Node
			if err := v.Decode(&m); err != nil {
				return nil, c.fail("dataset_kwargs.data_files", "want a mapping of split to file(s)")
			}
			for split, f := range m {
				var one string
				if f.Kind == yaml.ScalarNode && f.Decode(&one) == nil {
					t.DataFiles[split] = []string{one}
				} else if err := f.Decode(&[]string{}); err == nil {
					var list []string
					_ = f.Decode(&list)
					t.DataFiles[split] = list
				} else {
					return nil, c.fail("dataset_kwargs.data_files."+split, "want a file or a list of files")
				}
			}
		}
	}
	var n int
	if _, err := c.decode("num_fewshot", &n); err != nil {
		return nil, err
	}
	for _, k := range []string{"target_delimiter", "fewshot_delimiter"} {
		var s string
		if err := str(k, &s); err != nil {
			return nil, err
		}
	}
	var rep int
	if _, err := c.decode("repeats", &rep); err != nil {
		return nil, err
	}
	if rep < 0 || rep > taskfile.MaxRepeats {
		return nil, c.fail("repeats", fmt.Sprintf("%d: want 1 to %d (the task file's generation.repeats)", rep, taskfile.MaxRepeats))
	}
	t.Repeats = max(rep, 1)
	if err := t.parseTarget(c); err != nil {
		return nil, err
	}
	if err := t.parseGeneration(c); err != nil {
		return nil, err
	}
	if err := t.parseFilters(c); err != nil {
		return nil, err
	}
	for i, p := range t.Pipelines {
		for j, f := range p.Filters {
			if f.Function == "take_first_k" && f.k > t.Repeats {
				return nil, c.fail(fmt.Sprintf("filter_list[%d].filter[%d]", i, j), fmt.Sprintf("take_first_k k: %d is more than repeats (%d): lm-eval asserts there are k replies", f.k, t.Repeats))
			}
		}
	}
	if err := t.parseShots(c, n); err != nil {
		return nil, err
	}
	if err := t.parseMetrics(c); err != nil {
		return nil, err
	}
	return t, nil
}

type wrapped struct {
	err  error
	kind error
}

func (w *wrapped) Error() string   { return w.err.Error() }
func (w *wrapped) Unwrap() []error { return []error{w.err, w.kind} }

func (t *Task) parseTarget(c *Config) error {
	e, ok := c.keys["doc_to_target"]
	if !ok {
		return c.fail("doc_to_target", "is required (the reference answer)")
	}
	if err := noFunction(e, "doc_to_target"); err != nil {
		return err
	}
	var i int
	if e.node.Tag == "!!int" && e.node.Decode(&i) == nil {
		t.DocToTarget.Int = &i
	} else {
		var s string
		if err := e.node.Decode(&s); err != nil {
			return c.fail("doc_to_target", "want a column, a template or a number")
		}
		if identifier(s) {
			t.DocToTarget.Column = s
		} else {
			t.DocToTarget.Template = s
		}
	}
	if ce, ok := c.keys["doc_to_choice"]; ok {
		if err := noFunction(ce, "doc_to_choice"); err != nil {
			return err
		}
		switch ce.node.Kind {
		case yaml.SequenceNode:
			if err := ce.node.Decode(&t.Choices); err != nil {
				return c.fail("doc_to_choice", "want a list of strings")
			}
		case yaml.MappingNode:
			return c.fail("doc_to_choice", "a mapping is not supported: give a list")
		default:
			var s string
			_ = ce.node.Decode(&s)
			if !identifier(s) {
				return c.fail("doc_to_choice", "a template is not supported: give a list or a column")
			}
			t.ChoiceColumn = s
		}
	}
	return nil
}

func identifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func (t *Task) parseGeneration(c *Config) error {
	var g map[string]yaml.Node
	if _, err := c.decode("generation_kwargs", &g); err != nil {
		return err
	}
	var fewDelim = "\n\n"
	if c.has("fewshot_delimiter") {
		_, _ = c.decode("fewshot_delimiter", &fewDelim)
	}
	t.Until = []string{fewDelim} // lm-eval's default when until is not given
	doSample := false
	keys := make([]string, 0, len(g))
	for k := range g {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := g[k]
		key := "generation_kwargs." + k
		var err error
		switch k {
		case "until":
			var one string
			if v.Kind == yaml.ScalarNode {
				err = v.Decode(&one)
				t.Until = []string{one}
			} else {
				err = v.Decode(&t.Until)
			}
		case "temperature":
			err = v.Decode(&t.Temperature)
		case "max_gen_toks":
			if _, ok := g["max_tokens"]; !ok { // lm-eval: max_tokens wins
				err = v.Decode(&t.MaxGenToks)
			}
		case "max_tokens":
			err = v.Decode(&t.MaxGenToks)
		case "max_new_tokens":
			// lm-eval's chat API models do not read it for max_tokens
			// (max_tokens, else max_gen_toks, else 256): they put it in
			// the request's body as it is, an extra key that
			// OpenAI-compatible servers such as vLLM ignore.
			var n int
			err = v.Decode(&n)
		case "top_p":
			var p float64
			if err = v.Decode(&p); err == nil {
				if p <= 0 || p > 1 {
					return c.fail(key, fmt.Sprintf("%g: want more than 0, at most 1", p))
				}
				t.TopP = &p
			}
		case "do_sample":
			err = v.Decode(&doSample)
		default:
			return c.fail(key, "is not supported: until, temperature, top_p, max_gen_toks (or max_tokens, or max_new_tokens, which lm-eval's API models do not read) and do_sample are")
		}
		if err != nil {
			return c.fail(key, "has the wrong type")
		}
	}
	// lm-eval's local-chat-completions drops do_sample and sends the
	// temperature as given (0 when not given).
	_ = doSample
	if t.Temperature < 0 || t.Temperature > 2 {
		return c.fail("generation_kwargs.temperature", fmt.Sprintf("%g: want 0 to 2", t.Temperature))
	}
	if len(t.Until) > 4 {
		t.Until = t.Until[:4] // lm-eval's OpenAI chat model sends the first 4 (the API's limit)
	}
	var kept []string
	for _, u := range t.Until {
		if u != "" {
			kept = append(kept, u)
		}
	}
	t.Until = kept
	return nil
}

// MetricNames are the task's metrics as lm-eval names them: each metric
// of metric_list for each filter pipeline, "metric,pipeline".
func (t *Task) MetricNames() []string {
	var out []string
	for _, p := range t.Pipelines {
		for _, m := range t.Metrics {
			out = append(out, m.Name+","+p.Name)
		}
	}
	return out
}

// dotted is a template that only prints a column or an attribute of one
// ({{answer.aliases}}): its value is taken as it is, so that a list is
// several targets, as lm-eval's literal_eval of the rendered list makes it.
var dotted = regexp.MustCompile(`^\{\{\s*([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\s*\}\}$`)

// Targets are the row's reference answers as lm-eval's process_results
// computes them for a generate_until task (doc_to_target, then indexed
// into doc_to_choice when that is set, then as a string); several when
// doc_to_target gives a list (lm-eval's multiple targets: any match).
func (t *Task) Targets(fields map[string]any, render func(string, map[string]any) (string, error)) ([]string, error) {
	var gold any
	switch d := t.DocToTarget; {
	case d.Int != nil:
		gold = int64(*d.Int)
	case d.Column != "":
		v, ok := fields[d.Column]
		if !ok {
			return nil, fmt.Errorf("doc_to_target: the row has no column %q", d.Column)
		}
		gold = v
	default:
		if m := dotted.FindStringSubmatch(d.Template); m != nil {
			if v, ok := lookup(fields, strings.Split(m[1], ".")); ok {
				if list, ok := v.([]any); ok {
					out := make([]string, len(list))
					for i, x := range list {
						out[i] = pyStr(x)
					}
					return out, nil
				}
			}
		}
		s, err := render(d.Template, fields)
		if err != nil {
			return nil, err
		}
		if (t.Choices != nil || t.ChoiceColumn != "") && isDigits(s) {
			var n int64
			fmt.Sscan(s, &n)
			gold = n
		} else if len(s) >= 2 && s[0] == '[' && s[len(s)-1] == ']' {
			return nil, fmt.Errorf("doc_to_target renders a list (%s): give the list column as {{column}} for several targets", clip(s))
		} else {
			gold = s
		}
	}
	if list, ok := gold.([]any); ok && t.Choices == nil && t.ChoiceColumn == "" {
		out := make([]string, len(list))
		for i, x := range list {
			out[i] = pyStr(x)
		}
		return out, nil
	}
	if t.Choices != nil || t.ChoiceColumn != "" {
		choices := t.Choices
		if t.ChoiceColumn != "" {
			list, ok := fields[t.ChoiceColumn].([]any)
			if !ok {
				return nil, fmt.Errorf("doc_to_choice: column %q is not a list", t.ChoiceColumn)
			}
			choices = nil
			for _, x := range list {
				choices = append(choices, pyStr(x))
			}
		}
		i, ok := toInt(gold)
		if !ok {
			return nil, fmt.Errorf("doc_to_choice is set, so doc_to_target must give a number, not %s", clip(pyStr(gold)))
		}
		if i < 0 {
			i += int64(len(choices))
		}
		if i < 0 || i >= int64(len(choices)) {
			return nil, fmt.Errorf("doc_to_target %d is out of doc_to_choice's %d choices", i, len(choices))
		}
		return []string{choices[i]}, nil
	}
	return []string{pyStr(gold)}, nil
}

func lookup(fields map[string]any, path []string) (any, bool) {
	var v any = fields
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[p]; !ok {
			return nil, false
		}
	}
	return v, true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func toInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case float64:
		if x == float64(int64(x)) {
			return int64(x), true
		}
	}
	return 0, false
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

// pyStr is Python's str() of a value read from a row.
func pyStr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case string:
		return x
	case bool:
		if x {
			return "True"
		}
		return "False"
	case int64, int:
		return fmt.Sprint(x)
	case float64:
		s := fmt.Sprintf("%v", x)
		if !strings.ContainsAny(s, ".eEn") {
			s += ".0"
		}
		return s
	}
	return fmt.Sprint(v)
}

// parseShots reads fewshot_config: lm-eval's first_n sampler over inline
// samples (the first num_fewshot of them, in order), each rendered with
// doc_to_text and doc_to_target (fewshot_config's own when it has them).
func (t *Task) parseShots(c *Config, n int) error {
	var fc map[string]yaml.Node
	if c.has("fewshot_config") {
		if _, err := c.decode("fewshot_config", &fc); err != nil {
			return err
		}
	}
	sampler := "default"
	for _, k := range sortedKeys(fc) {
		v := fc[k]
		switch k {
		case "sampler":
			if v.Decode(&sampler) != nil {
				return c.fail("fewshot_config.sampler", "want a sampler's name")
			}
		case "samples", "doc_to_text", "doc_to_target", "fewshot_delimiter", "target_delimiter":
		default:
			return c.fail("fewshot_config."+k, "is not supported: sampler (default or first_n), samples, doc_to_text and doc_to_target are")
		}
	}
	if sampler != "first_n" && sampler != "default" {
		return c.fail("fewshot_config.sampler", fmt.Sprintf("%q: only default (lm-eval's random.Random(1234) draws, reproduced) and first_n are supported", sampler))
	}
	split := ""
	if _, err := c.decode("fewshot_split", &split); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	if _, inline := fc["samples"]; split != "" || !inline {
		return t.parseSplitShots(c, fc, n, sampler, split)
	}
	if sampler != "first_n" {
		return c.fail("fewshot_config.sampler", fmt.Sprintf("%q with samples: only first_n (in order) is supported for inline samples", sampler))
	}
	raw, ok := fc["samples"]
	var samples []map[string]any
	if !ok || raw.Tag == "!function" || raw.Decode(&samples) != nil {
		return c.fail("fewshot_config.samples", "want a list of examples (mappings of column to value)")
	}
	if n > len(samples) {
		return c.fail("num_fewshot", fmt.Sprintf("%d: fewshot_config has %d samples", n, len(samples)))
	}
	text, tgt := t.DocToText, t.DocToTarget
	if v, ok := fc["doc_to_text"]; ok {
		if v.Decode(&text) != nil || v.Tag == "!function" {
			return c.fail("fewshot_config.doc_to_text", "want a template or a column")
		}
	}
	if v, ok := fc["doc_to_target"]; ok {
		var s string
		if v.Decode(&s) != nil || v.Tag == "!function" {
			return c.fail("fewshot_config.doc_to_target", "want a template or a column")
		}
		tgt = target{}
		if identifier(s) {
			tgt.Column = s
		} else {
			tgt.Template = s
		}
	}
	shotTask := *t
	shotTask.DocToTarget = tgt
	for i, sm := range samples[:n] {
		sm = plain(sm).(map[string]any)
		var q string
		if identifier(text) {
			if v, ok := sm[text]; ok {
				q = pyStr(v)
			}
		} else {
			var err error
			if q, err = renderWith(text, sm); err != nil {
				return c.fail(fmt.Sprintf("fewshot_config.samples[%d]", i), "doc_to_text: "+err.Error())
			}
		}
		a, err := shotTask.Targets(sm, renderWith)
		if err != nil {
			return c.fail(fmt.Sprintf("fewshot_config.samples[%d]", i), err.Error())
		}
		if t.GenPrefix != "" {
			// lm-eval's build_qa_turn: maybe_delimit(gen_prefix, answer)
			// with the prefix resolved over the example.
			p, err := resolveField(t.GenPrefix, sm)
			if err != nil {
				return c.fail(fmt.Sprintf("fewshot_config.samples[%d]", i), "gen_prefix: "+err.Error())
			}
			a[0] = maybeDelimit(p, a[0])
		}
		t.Shots = append(t.Shots, Shot{User: q, Assistant: a[0]})
	}
	return nil
}

// plain turns YAML's ints into int64, as the data reader gives a row's.
func plain(v any) any {
	switch x := v.(type) {
	case int:
		return int64(x)
	case map[string]any:
		for k, e := range x {
			x[k] = plain(e)
		}
	case []any:
		for i, e := range x {
			x[i] = plain(e)
		}
	}
	return v
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// parseSplitShots reads num_fewshot examples drawn from a split as lm-eval
// draws them: fewshot_split, else training_split, else validation_split
// (its fewshot_docs), the default sampler's random.Random(1234) or
// first_n.
func (t *Task) parseSplitShots(c *Config, fc map[string]yaml.Node, n int, sampler, split string) error {
	// lm-eval's fewshot_docs: fewshot_split, else training_split, else
	// validation_split, else test_split; its sampler is handed the
	// document to leave out when fewshot_split equals test_split (None
	// equal to None: neither set), whichever split the examples come from.
	dropSame := split == t.TestSplit
	switch {
	case split != "":
	case t.TrainSplit != "":
		split = t.TrainSplit
	case t.ValSplit != "":
		split = t.ValSplit
	default:
		split = t.TestSplit
	}
	if c.has("doc_to_choice") {
		return c.fail("num_fewshot", "examples drawn from a split with doc_to_choice are not supported")
	}
	if t.DocToTarget.Int != nil {
		return c.fail("doc_to_target", "an int with examples drawn from a split is not supported")
	}
	asTemplate := func(s string) string {
		if identifier(s) {
			return "{{ __row__['" + s + "'] }}"
		}
		return s
	}
	ss := &SplitShots{Split: split, N: n, Sampler: taskfile.SamplerPython, User: asTemplate(t.DocToText), DropSame: dropSame}
	if sampler == "first_n" {
		ss.Sampler = taskfile.SamplerFirst
	}
	if t.DocToTarget.Column != "" {
		ss.Assistant = asTemplate(t.DocToTarget.Column)
	} else {
		ss.Assistant = t.DocToTarget.Template
	}
	for _, k := range []string{"doc_to_text", "doc_to_target"} {
		if v, ok := fc[k]; ok {
			var s string
			if v.Decode(&s) != nil || v.Tag == "!function" {
				return c.fail("fewshot_config."+k, "want a template or a column")
			}
			if k == "doc_to_text" {
				ss.User = asTemplate(s)
			} else {
				ss.Assistant = asTemplate(s)
			}
		}
	}
	if t.GenPrefix != "" {
		// lm-eval's build_qa_turn: each example's answer after the prefix
		// resolved over the example, joined by maybe_delimit.
		ss.Assistant = "{% set lmeval_prefix %}" + prefixTemplate(t.GenPrefix) + "{% endset %}{% set lmeval_answer %}" + ss.Assistant +
			"{% endset %}{{ lmeval_prefix }}{% if lmeval_prefix and lmeval_answer and lmeval_prefix[-1:] not in '" + pyWhitespace +
			"' and lmeval_answer[:1] not in '" + pyWhitespace + "' %} {% endif %}{{ lmeval_answer }}"
	}
	// With fewshot_split and samples both, lm-eval takes the split.
	t.SplitShots = ss
	return nil
}

// resolveField is lm-eval's resolve_field for a string: a column's value
// when the row has a column of that name, else the template rendered.
func resolveField(src string, row map[string]any) (string, error) {
	if v, ok := row[src]; ok {
		return pyStr(v), nil
	}
	return renderWith(src, row)
}

// maybeDelimit is lm-eval's maybe_delimit: prefix and suffix joined by a
// space unless either is empty or has whitespace where they meet.
func maybeDelimit(prefix, suffix string) string {
	switch {
	case prefix == "":
		return suffix
	case suffix == "":
		return prefix
	}
	last, _ := utf8.DecodeLastRuneInString(prefix)
	first, _ := utf8.DecodeRuneInString(suffix)
	if pyIsSpace(last) || pyIsSpace(first) {
		return prefix + suffix
	}
	return prefix + " " + suffix
}

// pyWhitespace are the characters Python's str.isspace says are white
// space, as a Jinja string literal's escapes.
const pyWhitespace = `\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000`

// prefixTemplate is gen_prefix as a task-file template: lm-eval's
// resolve_field reads a column of that name when the row has one, else
// renders it as a template.
func prefixTemplate(p string) string {
	if !identifier(p) {
		return p
	}
	return "{% if '" + p + "' in __row__ %}{{ __row__['" + p + "'] }}{% else %}" + p + "{% endif %}"
}

// pyIsSpace is Python's str.isspace for one character: Go's white space
// and the separators U+001C to U+001F.
func pyIsSpace(r rune) bool { return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f }
