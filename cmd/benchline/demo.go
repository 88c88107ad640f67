package main

import (
	"github.com/spf13/cobra"

	"github.com/benchline/benchline/internal/devstack"
)

func newDemoCmd(g *globals) *cobra.Command {
	var o devstack.DemoOptions
	var s3 string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Start the embedded stack, build every benchmark from bundled fixtures, evaluate the baselines and refresh a demo board",
		Long: `demo starts the embedded stack on a kept state directory, builds every benchmark's dataset
from the fixtures bundled in the binary, evaluates the baseline models (deterministic, not
LLMs) on each (the first benchmark's first model also in batch mode, eval --batch, with both
runs' costs side by side), writes a board file for them (DIR/demo-board.yaml), refreshes that board
twice (the second refresh starts no run and pays no model call), copies the board's site
to DIR/site/demo/ and prints how to serve it. A second demo on the same directory reuses
every dataset version, run and cached answer, so it is fast; --fresh starts over.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.S3 = devstack.S3Server(s3)
			return devstack.RunDemo(cmd.Context(), cmd.OutOrStdout(), o, g.logger())
		},
	}
	cmd.Flags().StringVar(&o.Dir, "dir", devstack.DefaultDemoDir(), "state directory, kept between demos (Temporal SQLite file, S3 data, the board file and site)")
	cmd.Flags().BoolVar(&o.Fresh, "fresh", false, "delete the state directory first")
	cmd.Flags().StringVar(&s3, "s3", string(devstack.MinIO), "S3 server: minio or moto")
	cmd.Flags().BoolVar(&o.Headless, "headless", true, "do not start the Temporal Web UI")
	return cmd
}
