package promptfoo

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/benchline/benchline/scorers/taskfile"
)

// WriteBeside writes the promptfoo config file (read as raw) as a task
// file beside it, NAME.task.yaml, and its samples as NAME.rows.jsonl (the
// rendered chats, so the file:// prompts and tests are in the built
// version), and returns the task file's path. It is what `benchline
// dataset build --task promptfooconfig.yaml` builds.
func WriteBeside(file string, raw []byte) (string, error) {
	dir := filepath.Dir(file)
	cfg, err := Parse(file, raw, DirReader(dir))
	if err != nil {
		return "", err
	}
	name := TaskName(file)
	rows := name + ".rows.jsonl"
	tr, err := cfg.Translate(rows)
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, name+".task.yaml")
	if _, err := taskfile.Load(out, tr.TaskFile); err != nil {
		return "", fmt.Errorf("the translated promptfoo config does not load (a bug: please report it): %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, rows), tr.Rows, 0o644); err != nil {
		return "", fmt.Errorf("promptfoo: %w", err)
	}
	if err := os.WriteFile(out, tr.TaskFile, 0o644); err != nil {
		return "", fmt.Errorf("promptfoo: %w", err)
	}
	return out, nil
}
