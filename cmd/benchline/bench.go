package main

import (
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/app"
)

func newBenchCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "bench", Short: "Measure benchline's pipelines on the configured stack (figures for docs/PERFORMANCE.md)"}
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
			res, err := app.BenchBuild(cmd.Context(), store, datasets.Env{Store: store, OpenS3: app.S3Opener(cfg)}, args[0], req, parallel)
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
			res, err := app.BenchEval(cmd.Context(), c, cfg, store, gw, rows, shards, seed)
			if err != nil {
				return err
			}
			return json.NewEncoder(cmd.OutOrStdout()).Encode(res)
		},
	}
	evalCmd.Flags().Int64Var(&rows, "rows", 10000, "samples")
	evalCmd.Flags().IntVar(&shards, "parallel", 8, "shards at once (the engine's default)")
	evalCmd.Flags().IntVar(&seed, "seed", 99, "seed of the synthetic dataset (a new seed builds a new version)")
	cmd.AddCommand(build, evalCmd)
	return cmd
}
