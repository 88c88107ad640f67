package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/benchline/benchline/internal/gateway"

	"github.com/benchline/benchline/scorers/promptfoo"
	"github.com/benchline/benchline/scorers/taskfile"
)

// promptfooBeside writes the promptfoo config file (read as raw) as a task
// file beside it, NAME.task.yaml, and its samples as NAME.rows.jsonl (the
// rendered chats, so the file:// prompts and tests are in the built
// version), and returns the task file's path.
func promptfooBeside(file string, raw []byte) (string, error) {
	dir := filepath.Dir(file)
	cfg, err := promptfoo.Parse(file, raw, promptfoo.DirReader(dir))
	if err != nil {
		return "", err
	}
	name := promptfoo.TaskName(file)
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

// promptfooModels names the benchline model of each of the config's
// providers: openai:chat:MODEL with config.apiBaseUrl is MODEL at the
// providers file's provider whose base_url equals the apiBaseUrl (a
// trailing slash aside). A provider no entry serves is returned in
// missing, said as what to add.
func promptfooModels(cfg *promptfoo.Config, g *gateway.Config) (models, missing []string) {
	norm := func(u string) string { return strings.TrimRight(u, "/") }
	names := make([]string, 0, len(g.Providers))
	for n := range g.Providers {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, p := range cfg.Providers {
		found := ""
		for _, n := range names {
			if p.BaseURL != "" && norm(g.Providers[n].BaseURL) == norm(p.BaseURL) {
				found = n
				break
			}
		}
		if found == "" {
			missing = append(missing, fmt.Sprintf("providers[%d] (%s): no provider in the providers file has base_url %s; add one to evaluate it", i, p.ID, p.BaseURL))
			continue
		}
		models = append(models, found+"/"+p.Model)
	}
	return models, missing
}
