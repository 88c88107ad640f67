package main

import (
	"github.com/spf13/cobra"

	"github.com/benchline/benchline/internal/app"
	"github.com/benchline/benchline/internal/devstack"
)

func newDemoCmd(g *globals) *cobra.Command {
	var o app.DemoOptions
	var s3 string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Start the embedded stack, build every benchmark dataset from bundled fixtures, and print the results",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.S3 = devstack.S3Server(s3)
			return app.RunDemo(cmd.Context(), cmd.OutOrStdout(), o, g.logger())
		},
	}
	cmd.Flags().StringVar(&o.Dir, "dir", "", "state directory (default: a temporary one, removed at the end)")
	cmd.Flags().BoolVar(&o.KeepDir, "keep", false, "keep the temporary state directory")
	cmd.Flags().StringVar(&s3, "s3", string(devstack.MinIO), "S3 server: minio or moto")
	cmd.Flags().BoolVar(&o.Headless, "headless", true, "do not start the Temporal Web UI")
	return cmd
}
