//go:build bench

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/app"
	"github.com/benchline/benchline/internal/perf"
)

func init() { toolCommands = append(toolCommands, newBenchCmd) }

func newBenchCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure every figure docs/PERFORMANCE.md quotes and print them in one table with their goals",
		Long:  benchAllLong,
		Args:  cobra.NoArgs,
	}
	addBenchAll(cmd)
	all := &cobra.Command{Use: "all", Short: "The same as bench with no subcommand", Long: benchAllLong, Args: cobra.NoArgs}
	addBenchAll(all)
	cmd.AddCommand(all)
	var src string
	var params []string
	var parallel int
	build := &cobra.Command{
		Use:   "build NAME",
		Short: "Plan and write a dataset in-process against the configured S3 and report rows/s, MB/s and peak memory",
		Long: `build runs the dataset builder's own code (the code the BuildDataset activities run) in
this process, writing Parquet to the configured S3 under bench/, and prints one JSON object:
rows, bytes, seconds, rows_per_sec, mb_per_sec, peak_rss_mb (VmHWM) and heap_peak_mb.
Example: benchline bench build synthetic --param rows=1000000`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, store, err := g.store(cmd.Context())
			if err != nil {
				return err
			}
			req, err := requestFromFlags(args[0], src, params)
			if err != nil {
				return err
			}
			res, err := perf.BenchBuild(cmd.Context(), store, datasets.Env{Store: store, OpenS3: app.S3Opener(cfg)}, args[0], req, parallel)
			if err != nil {
				return err
			}
			return json.NewEncoder(cmd.OutOrStdout()).Encode(res)
		},
	}
	build.Flags().StringVar(&src, "source", "", "sources (default embedded://NAME)")
	build.Flags().StringArrayVar(&params, "param", nil, "builder parameter key=value (repeatable)")
	build.Flags().IntVar(&parallel, "parallel", 1, "parts written at once")
	var rows int64
	var shards, seed int
	evalCmd := &cobra.Command{
		Use:   "eval",
		Short: "Time a full evaluation run against a bare gateway loop making the same calls (same machine, same run)",
		Long: `eval builds a synthetic dataset of --rows rows, times a full evaluation of
baseline/reference on it through the configured Temporal and workers (workflow, gateway,
scoring, Parquet, S3), then times a gateway-only loop over the same prompts
(baseline/reference, no cache, --parallel×16 concurrent calls; three passes, the median
counts), and prints both rates and their ratio.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, c, store, gw, err := g.services(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			res, err := perf.BenchEval(cmd.Context(), c, cfg, store, gw, rows, shards, seed)
			if err != nil {
				return err
			}
			return json.NewEncoder(cmd.OutOrStdout()).Encode(res)
		},
	}
	evalCmd.Flags().Int64Var(&rows, "rows", 10000, "samples")
	evalCmd.Flags().IntVar(&shards, "parallel", 8, "shards at once (the engine's default)")
	evalCmd.Flags().IntVar(&seed, "seed", 99, "seed of the synthetic dataset (a new seed builds a new version)")
	var tfRows int64
	var tfShards, tfSeed, tfRounds int
	tfCmd := &cobra.Command{
		Use:   "taskfile",
		Short: "Time an exact-match task file's evaluation against the compiled synthetic benchmark's (same endpoint, engine, concurrency)",
		Long: `taskfile writes an exact-match task file of --rows generated rows, builds it
and a synthetic dataset of as many rows through the configured Temporal and
workers, then in each of --rounds rounds evaluates baseline/reference on the
synthetic dataset and then on the task file (no cache, the same --parallel
shards, the same baseline endpoint), and prints each round's rates, their
ratios (task file ÷ synthetic) and the median ratio.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, c, store, _, err := g.services(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			res, err := perf.BenchTaskFile(cmd.Context(), c, cfg, store, tfRows, tfShards, tfSeed, tfRounds)
			if err != nil {
				return err
			}
			return json.NewEncoder(cmd.OutOrStdout()).Encode(res)
		},
	}
	tfCmd.Flags().Int64Var(&tfRows, "rows", 100000, "samples in each dataset")
	tfCmd.Flags().IntVar(&tfShards, "parallel", 8, "shards at once (the engine's default)")
	tfCmd.Flags().IntVar(&tfSeed, "seed", 98, "seed of both datasets (a new seed builds new versions)")
	tfCmd.Flags().IntVar(&tfRounds, "rounds", 3, "rounds of one synthetic and one task-file run; the median ratio counts")
	cmd.AddCommand(build, evalCmd, tfCmd)
	return cmd
}

const benchAllLong = `With no subcommand (or "all"), bench runs the registry of figures that
docs/PERFORMANCE.md quotes: go test benchmarks from the source checkout (the
module root found with go env GOMOD from the working directory), bench
subcommands of this executable and scripts under deploy/dev. It reads each
figure from its command's output and prints one table: figure, measured, unit,
goal, ratio to goal (above 1 is better than the goal), met, and the command
that reproduces it. Figures whose needs are missing (the dev stack, the
sandbox, a BFCL checkout in $BENCHLINE_BFCL_CHECKOUT) are listed as
"not run: needs X", unless --only selected them. Each command is bounded to
20 minutes; bench exits 1 when a figure failed, after printing the table.
Example: benchline bench --quick --only 'bfcl|gateway'`

func addBenchAll(cmd *cobra.Command) {
	var only string
	var list, asJSON, quick bool
	cmd.Flags().StringVar(&only, "only", "", "run only the figures whose name matches this regular expression (and run them even if their needs look missing)")
	cmd.Flags().BoolVar(&list, "list", false, "print the registry without running it")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the rows as a JSON array (snake_case keys)")
	cmd.Flags().BoolVar(&quick, "quick", false, "shorter benchtimes and smaller runs (a few minutes in all)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		var re *regexp.Regexp
		if only != "" {
			var err error
			if re, err = regexp.Compile(only); err != nil {
				return fmt.Errorf("bench: --only %q: %w", only, err)
			}
		}
		figs := perf.Select(perf.Figures, re)
		if len(figs) == 0 {
			return fmt.Errorf("bench: --only %q matches no figure (benchline bench --list names them)", only)
		}
		out := cmd.OutOrStdout()
		if list {
			return perf.WriteList(out, figs, quick)
		}
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		root, err := perf.FindRoot(cmd.Context(), wd)
		if err != nil {
			return err
		}
		self, err := os.Executable()
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		r := &perf.Runner{Root: root, Self: self, Quick: quick, Log: cmd.ErrOrStderr()}
		rows := r.Run(cmd.Context(), figs, re != nil)
		var failed []string
		for _, row := range rows {
			if row.Status == "failed" {
				failed = append(failed, row.Name)
				fmt.Fprintf(cmd.ErrOrStderr(), "%s failed: %s\n", row.Name, row.Detail)
			}
		}
		if asJSON {
			enc := json.NewEncoder(out)
			enc.SetIndent("", "  ")
			err = enc.Encode(rows)
		} else {
			err = perf.WriteTable(out, rows)
		}
		if err != nil {
			return err
		}
		if len(failed) > 0 {
			return fmt.Errorf("bench: %d figure(s) failed: %s", len(failed), strings.Join(failed, ", "))
		}
		return nil
	}
}
