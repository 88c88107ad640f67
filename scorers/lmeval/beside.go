package lmeval

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/benchline/benchline/scorers/taskfile"
)

// WriteBeside writes the lm-evaluation-harness task file (read with read,
// its includes too) as a task file in the folder that holds its data (the
// parent of the folder or file data gives for its dataset_path), named
// after the task (TASK.task.yaml, its data named relative to that folder),
// and returns its path. It is what `benchline dataset build --task FILE
// --data DATASET_PATH=DIR` builds.
func WriteBeside(file string, read func(string) ([]byte, error), data map[string]string) (string, error) {
	raw, err := read(file)
	if err != nil {
		return "", err
	}
	if !Detect(raw) {
		return "", fmt.Errorf("%s: --data is for lm-evaluation-harness task YAMLs (dataset_path); a task file names its data in its data key", file)
	}
	c, err := Load(file, read)
	if err != nil {
		return "", err
	}
	t, err := Parse(c)
	if err != nil {
		return "", err
	}
	dir, ok := data[t.DatasetPath]
	if !ok {
		return "", &DataError{File: file, DatasetPath: t.DatasetPath}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	base := filepath.Dir(strings.TrimSuffix(abs, string(filepath.Separator)))
	conv, err := ToYAML(t, c, data, base)
	if err != nil {
		return "", err
	}
	out := filepath.Join(base, TaskName(t.Name)+".task.yaml")
	if _, err := taskfile.Load(out, conv); err != nil {
		return "", fmt.Errorf("the converted task file does not load (a bug: please report it): %w", err)
	}
	if err := os.WriteFile(out, conv, 0o644); err != nil {
		return "", err
	}
	return out, nil
}
