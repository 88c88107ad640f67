// Command promptfoo-suite prints the prompts a benchline run of a dataset
// version sends and their reference answers, one JSON object a line in the
// form of scorers.Reference ({"messages": [...], "content": "..."}), for
// deploy/dev/promptfoo-ratio.sh, which turns them into a promptfoo suite.
// (The engine's references file holds only the prompts' keys.) It reads
// the version through its manifest, with the configuration and the
// BENCHLINE_* environment `benchline` uses.
//
//	go run ./deploy/dev/promptfoo-suite synthetic@VERSION >refs.jsonl
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/benchline/benchline/internal/app"
	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/config"
	"github.com/benchline/benchline/internal/registry"
	"github.com/benchline/benchline/scorers"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: promptfoo-suite DATASET@VERSION")
		os.Exit(2)
	}
	if err := run(context.Background(), os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "promptfoo-suite:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, ref string) error {
	cfg, err := config.Load(os.Getenv("BENCHLINE_CONFIG"), os.LookupEnv)
	if err != nil {
		return err
	}
	store, err := app.OpenStore(ctx, cfg)
	if err != nil {
		return err
	}
	m, err := catalog.Resolve(ctx, store, ref)
	if err != nil {
		return err
	}
	name, _, _ := strings.Cut(ref, "@")
	task, err := registry.Default().WithDeps(benchmark.Deps{Store: store}).Task(name)
	if err != nil {
		return err
	}
	refs, ok := task.(scorers.ReferenceProvider)
	if !ok {
		return fmt.Errorf("%s has no reference answers", name)
	}
	w := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(w)
	checked := catalog.Checked(store, m)
	for _, f := range m.Files {
		key := catalog.Dir(m.Name, m.Version) + f.Path
		err := task.ReadSamples(ctx, checked, key, 0, f.Rows, func(s scorers.Sample) error {
			for _, r := range scorers.ReferencesOf(refs, s) {
				if err := enc.Encode(r); err != nil {
					return fmt.Errorf("sample %s: %w", s.ID, err)
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
	}
	return w.Flush()
}
