package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/benchline/benchline/internal/app"
	"github.com/benchline/benchline/internal/devstack"
)

func newDevCmd(g *globals) *cobra.Command {
	var o app.StackOptions
	var s3 string
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run the embedded stack on loopback (Temporal dev server, S3 server, baseline models, worker) until Ctrl-C",
		Long: `dev starts, on 127.0.0.1, a Temporal dev server with a SQLite file, an S3-protocol server
(MinIO by default) with a bucket, the baseline model server and a benchline worker; it waits until each answers,
prints their addresses and stops them all cleanly on Ctrl-C. State is kept in --dir, so
datasets and runs survive a restart. Other benchline commands reach it with no
configuration (the default addresses are the dev stack's).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := errors.Join(checkFlags(cmd,
				port("temporal-port", o.TemporalPort), port("ui-port", o.UIPort),
				port("s3-port", o.S3Port), port("baseline-port", o.BaselinePort),
			), oneOf("s3", []string{s3}, string(devstack.MinIO), string(devstack.Moto)),
				distinctPorts(map[string]int{"temporal-port": o.TemporalPort, "ui-port": o.UIPort, "s3-port": o.S3Port, "baseline-port": o.BaselinePort}),
			); err != nil {
				return fmt.Errorf("dev: %w", err)
			}
			o.S3 = devstack.S3Server(s3)
			ctx := cmd.Context()
			r, err := app.StartStack(ctx, o, g.logger())
			if err != nil {
				return err
			}
			defer r.Stop()
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "benchline dev stack is up (state in %s):\n", o.Dir)
			r.PrintAddresses(out)
			fmt.Fprintln(out, "Press Ctrl-C to stop.")
			<-ctx.Done()
			fmt.Fprintln(out, "stopping...")
			return nil
		},
	}
	cmd.Flags().StringVar(&o.Dir, "dir", filepath.Join(devstack.CacheDir(), "dev"), "state directory (Temporal SQLite file, S3 data)")
	cmd.Flags().IntVar(&o.TemporalPort, "temporal-port", 7233, "Temporal gRPC port")
	cmd.Flags().IntVar(&o.UIPort, "ui-port", 8233, "Temporal Web UI port")
	cmd.Flags().IntVar(&o.S3Port, "s3-port", 9000, "S3 server port")
	cmd.Flags().StringVar(&s3, "s3", string(devstack.MinIO), "S3 server: minio (file-backed) or moto (in memory)")
	cmd.Flags().IntVar(&o.BaselinePort, "baseline-port", 8400, "baseline model server port")
	cmd.Flags().BoolVar(&o.NoWorker, "no-worker", false, "start no in-process worker (run 'benchline worker' separately)")
	return cmd
}
