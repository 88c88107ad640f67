// Package lmeval reads an lm-evaluation-harness task YAML as a task file:
// Load merges its include: files as lm-eval merges them and refuses, naming
// the key and the reason, what an API model cannot answer or what needs
// Python; ToSpec translates it into a task file (scorers/taskfile) whose
// scorers are lm-eval's filter pipelines and metric (filters.go), named as
// lm-eval names them ("exact_match,strict-match"). docs/tasks.md's
// "lm-evaluation-harness tasks" section says what maps to what.
package lmeval

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/benchline/benchline/scorers/taskfile"
)

// MaxIncludeDepth bounds include: chains (lm-eval's deepest is 3).
const MaxIncludeDepth = 8

// Error is a task YAML that cannot run here: it names the file, the key
// and the reason.
type Error struct {
	File string
	Key  string
	Msg  string
}

func (e *Error) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", e.File, e.Key, e.Msg)
}

// Unwrap makes an *Error a taskfile.ErrInvalid.
func (e *Error) Unwrap() error { return taskfile.ErrInvalid }

// Detect says whether a YAML document is an lm-eval task: a mapping with
// task: and dataset_path: (or an include: that may give them), and no
// task-file name:.
func Detect(data []byte) bool {
	var m map[string]yaml.Node
	if err := yaml.Unmarshal(data, &m); err != nil {
		return false
	}
	_, task := m["task"]
	_, path := m["dataset_path"]
	_, inc := m["include"]
	_, name := m["name"]
	return task && (path || inc) && !name
}

// entry is one top-level key: its value and the file it came from.
type entry struct {
	node *yaml.Node
	file string
}

// Config is a task YAML with its includes merged.
type Config struct {
	File string
	keys map[string]entry
	// order are the keys in the order first seen, for stable errors.
	order []string
}

// Load reads file (through read, which is handed paths joined to the
// including file's folder) and merges its include: files: each included
// file's keys, then the file's own, which win (lm-eval's rule).
func Load(file string, read func(string) ([]byte, error)) (*Config, error) {
	c := &Config{File: file, keys: map[string]entry{}}
	if err := c.load(file, read, 0, map[string]bool{}); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Config) load(file string, read func(string) ([]byte, error), depth int, seen map[string]bool) error {
	if depth > MaxIncludeDepth {
		return &Error{File: file, Key: "include", Msg: fmt.Sprintf("includes nest deeper than %d files", MaxIncludeDepth)}
	}
	if seen[file] {
		return &Error{File: file, Key: "include", Msg: "includes itself (a cycle)"}
	}
	seen[file] = true
	defer delete(seen, file)
	data, err := read(file)
	if err != nil {
		return fmt.Errorf("lmeval: %w", err)
	}
	if len(data) > taskfile.MaxFileBytes {
		return &Error{File: file, Msg: fmt.Sprintf("is larger than %d bytes, the limit for a task file", taskfile.MaxFileBytes)}
	}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		return &Error{File: file, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return &Error{File: file, Msg: "is not a YAML mapping"}
	}
	m := doc.Content[0]
	lastWins(m)
	own := map[string]entry{}
	var ownOrder []string
	var includes []string
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i].Value, m.Content[i+1]
		if k == "include" {
			switch v.Kind {
			case yaml.ScalarNode:
				includes = append(includes, v.Value)
			case yaml.SequenceNode:
				for _, x := range v.Content {
					includes = append(includes, x.Value)
				}
			}
			continue
		}
		own[k] = entry{node: v, file: file}
		ownOrder = append(ownOrder, k)
	}
	for _, inc := range includes {
		p := inc
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(file), inc)
		}
		if err := c.load(p, read, depth+1, seen); err != nil {
			return err
		}
		if _, ok := c.keys["task_list"]; ok { // an included file's task_list is its own
			delete(c.keys, "task_list")
			c.order = slices.DeleteFunc(c.order, func(k string) bool { return k == "task_list" })
		}
	}
	for _, k := range ownOrder {
		if _, ok := c.keys[k]; !ok {
			c.order = append(c.order, k)
		}
		c.keys[k] = own[k]
	}
	return nil
}

// has says whether key is set.
func (c *Config) has(key string) bool { _, ok := c.keys[key]; return ok }

// decode decodes key into v; false when it is not set. A !function value
// is refused: it names Python code.
func (c *Config) decode(key string, v any) (bool, error) {
	e, ok := c.keys[key]
	if !ok {
		return false, nil
	}
	if err := noFunction(e, key); err != nil {
		return true, err
	}
	if err := e.node.Decode(v); err != nil {
		return true, &Error{File: e.file, Key: key, Msg: strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:\n  ")}
	}
	return true, nil
}

func noFunction(e entry, key string) error {
	var walk func(n *yaml.Node) error
	walk = func(n *yaml.Node) error {
		if n.Tag == "!function" {
			return &Error{File: e.file, Key: key, Msg: fmt.Sprintf("!function %s is Python code (lm-eval imports it); benchline runs no Python: write it as a Jinja template", n.Value)}
		}
		for _, x := range n.Content {
			if err := walk(x); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(e.node)
}

// fail is an *Error for key, naming the file it came from.
func (c *Config) fail(key, msg string) error {
	file := c.File
	if e, ok := c.keys[key]; ok {
		file = e.file
	}
	return &Error{File: file, Key: key, Msg: msg}
}

// ErrNotGenerate is wrapped by the error for a task whose output_type an
// API model cannot answer.
var ErrNotGenerate = errors.New("lmeval: not a generate_until task")

// lastWins drops, in every mapping under n, each key but its last
// occurrence, whose value is kept at the first one's place: PyYAML's
// safe_load, which lm-eval reads task files with, keeps the last value of
// a repeated key (kmmlu's filters repeat regex_pattern), where yaml.v3
// refuses the mapping.
func lastWins(n *yaml.Node) {
	if n.Kind == yaml.MappingNode {
		at := map[string]int{}
		var out []*yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind == yaml.ScalarNode {
				if j, ok := at[k.Value]; ok {
					out[j+1] = n.Content[i+1]
					continue
				}
				at[k.Value] = len(out)
			}
			out = append(out, k, n.Content[i+1])
		}
		n.Content = out
	}
	for _, c := range n.Content {
		lastWins(c)
	}
}
