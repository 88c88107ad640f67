package lmeval

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/benchline/benchline/scorers/taskfile"
)

// MaxCompatFiles bounds the task files Compat reads under one folder.
const MaxCompatFiles = 100_000

// CompatRow is one generate_until task file's verdict.
type CompatRow struct {
	File string // relative to the folder
	Task string
	// Err is why it does not load; nil when it does.
	Err error
}

// Check loads, checks and compiles an lm-eval task file (no data is read):
// nil when benchline can run it given its data.
func Check(file string, read func(string) ([]byte, error)) (*Task, error) {
	c, err := Load(file, read)
	if err != nil {
		return nil, err
	}
	t, err := Parse(c)
	if err != nil {
		return nil, err
	}
	for key, src := range map[string]string{"doc_to_text": t.DocToText, "doc_to_target": t.DocToTarget.Template, "description": t.Description, "gen_prefix": t.GenPrefix} {
		if src == "" {
			continue
		}
		if _, err := taskfile.CompileTemplate(src); err != nil {
			return nil, c.fail(key, "the template does not compile: "+err.Error())
		}
	}
	return t, nil
}

// Compat tries every task YAML under root whose own keys declare
// output_type: generate_until (files that only inherit it through
// include: are counted with all), in order of path.
func Compat(root string, all bool, read func(string) ([]byte, error)) ([]CompatRow, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			if len(files) == MaxCompatFiles {
				return fmt.Errorf("lmeval: %s has more than %d YAML files, the limit", root, MaxCompatFiles)
			}
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []CompatRow
	for _, f := range files {
		raw, err := read(f)
		if err != nil {
			return nil, err
		}
		var own map[string]yaml.Node
		if yaml.Unmarshal(raw, &own) != nil {
			continue
		}
		task, ok := own["task"]
		if !ok || task.Kind != yaml.ScalarNode {
			continue // a group, a template or not a task
		}
		ot := own["output_type"]
		if ot.Value != "generate_until" {
			if !all {
				continue
			}
			c, err := Load(f, read)
			if err != nil {
				continue
			}
			var v string
			if _, err := c.decode("output_type", &v); err != nil || v != "generate_until" {
				continue
			}
		}
		rel, _ := filepath.Rel(root, f)
		_, err = Check(f, read)
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				if r, rerr := filepath.Rel(root, e.File); rerr == nil {
					e.File = r
				}
			}
		}
		out = append(out, CompatRow{File: rel, Task: task.Value, Err: err})
	}
	return out, nil
}
