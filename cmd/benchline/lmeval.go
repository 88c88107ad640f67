package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/benchline/benchline/internal/limits"
	"github.com/benchline/benchline/scorers/lmeval"
	"github.com/benchline/benchline/scorers/taskfile"
)

// parseData reads --data DATASET_PATH=DIR|FILE flags.
func parseData(flags []string) (map[string]string, error) {
	out := map[string]string{}
	for _, f := range flags {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("--data %q: want DATASET_PATH=DIR (e.g. openai/gsm8k=./gsm8k/)", f)
		}
		out[k] = v
	}
	return out, nil
}

// readLocal reads a local file of at most a task file's size.
func readLocal(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return limits.ReadFile(f, file, taskfile.MaxFileBytes)
}

// loadTaskFile compiles a local task file; an lm-evaluation-harness task
// YAML (detected by its keys) is translated first, its dataset_path read
// from data.
func loadTaskFile(file string, data map[string]string) (*taskfile.Compiled, error) {
	raw, err := readLocal(file)
	if err != nil {
		return nil, err
	}
	if lmeval.Detect(raw) {
		if raw, err = lmeval.Translate(file, readLocal, data, ""); err != nil {
			return nil, err
		}
	} else if len(data) > 0 {
		return nil, fmt.Errorf("%s: --data is for lm-evaluation-harness task YAMLs (dataset_path); a task file names its data in its data key", file)
	}
	return taskfile.Load(file, raw)
}

// newTaskCompatCmd is `benchline task compat DIR`: which of a folder's
// lm-evaluation-harness generate_until task files load, and why each
// other does not.
func newTaskCompatCmd() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "compat DIR",
		Short: "Try every lm-evaluation-harness generate_until task YAML under DIR and print which load",
		Long: `compat reads every task YAML under DIR (for instance lm-evaluation-harness's lm_eval/tasks/)
whose own keys say output_type: generate_until (with --all, also those that inherit it through
include:), loads it as benchline would (includes merged, keys checked, templates compiled; no
data is read) and prints a Markdown table: each file, its task and "loads" or the reason it does
not, then the count. Exit status 0 whatever the verdicts.`,
		Args:         cobra.ExactArgs(1),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			rows, err := lmeval.Compat(args[0], all, readLocal)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintln(w, "| file | task | verdict |")
			fmt.Fprintln(w, "| --- | --- | --- |")
			ok := 0
			for _, r := range rows {
				v := "loads"
				if r.Err != nil {
					v = strings.ReplaceAll(strings.ReplaceAll(r.Err.Error(), "|", `\|`), "\n", " ")
				} else {
					ok++
				}
				fmt.Fprintf(w, "| %s | %s | %s |\n", r.File, r.Task, v)
			}
			fmt.Fprintf(w, "\n%d of %d generate_until task files load.\n", ok, len(rows))
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "also the task files that inherit output_type: generate_until through include:")
	return cmd
}

// newTaskConvertCmd is `benchline task convert FILE --data P=DIR -o OUT`:
// an lm-evaluation-harness task YAML written as the task file benchline
// builds, its data named relative to OUT's folder.
func newTaskConvertCmd() *cobra.Command {
	var data []string
	var out string
	cmd := &cobra.Command{
		Use:   "convert FILE --data DATASET_PATH=DIR -o OUT.yaml",
		Short: "Write an lm-evaluation-harness task YAML as a task file, to build with dataset build --task",
		Long: `convert reads an lm-evaluation-harness task YAML (its include: files merged), checks it as
task check does and writes the task file it is to OUT: the prompt, the generation settings and
one lmeval scorer per metric and filter pipeline ("exact_match,strict-match"), its data the
folder or file --data gives for its dataset_path, named relative to OUT's folder (which must
hold it). Build it with: benchline dataset build --task OUT.yaml`,
		Args:         cobra.ExactArgs(1),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("-o OUT.yaml is required: the task file to write, in a folder that holds the data")
			}
			dm, err := parseData(data)
			if err != nil {
				return err
			}
			raw, err := readLocal(args[0])
			if err != nil {
				return err
			}
			if !lmeval.Detect(raw) {
				return fmt.Errorf("%s: not an lm-evaluation-harness task (no task: with dataset_path: or include:)", args[0])
			}
			conv, err := lmeval.Translate(args[0], readLocal, dm, filepath.Dir(out))
			if err != nil {
				return err
			}
			if _, err := taskfile.Load(out, conv); err != nil {
				return fmt.Errorf("the converted task file does not load (a bug: please report it): %w", err)
			}
			if err := os.WriteFile(out, conv, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s; build it with: benchline dataset build --task %s\n", out, out)
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&data, "data", nil, "the task's data: DATASET_PATH=DIR|FILE (a Hugging Face-layout folder, .parquet or .jsonl; repeatable)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "the task file to write")
	return cmd
}

// convertBeside writes the lm-evaluation-harness task file as a task file
// in the folder that holds its data (lmeval.WriteBeside) and returns its
// path.
func convertBeside(file string, flags []string) (string, error) {
	dm, err := parseData(flags)
	if err != nil {
		return "", err
	}
	return lmeval.WriteBeside(file, readLocal, dm)
}
