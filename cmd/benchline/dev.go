package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchline/benchline/internal/devstack"
	"github.com/benchline/benchline/internal/metrics"
)

func newDevCmd(g *globals) *cobra.Command {
	var o devstack.StackOptions
	var s3, envFile, metricsAddr string
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run the embedded stack on loopback (Temporal dev server, S3 server, baseline models, worker) until Ctrl-C",
		Long: `dev starts, on 127.0.0.1, a Temporal dev server with a SQLite file, an S3-protocol server
(MinIO by default) with a bucket, the baseline model server and a benchline worker; it waits until each answers,
prints their addresses and the S3 credentials it set up, and stops them all cleanly on Ctrl-C. State is kept
in --dir, so datasets and runs survive a restart. Other benchline commands reach it with no configuration
(the default addresses are the dev stack's), or, with other ports, through --env-file:

  benchline dev --s3-port 0 --env-file /tmp/bl.env     # 0: any free port
  set -a; . /tmp/bl.env; set +a                         # in another shell
  benchline dataset build bfcl

The in-process worker uses the same configuration as your commands: --config or BENCHLINE_CONFIG and the
environment, the providers file included (its task queue and namespace too). A server that dies is restarted
(at most --restarts times in 10 minutes); past that, dev says which one died and why, and exits with an error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := errors.Join(checkFlags(cmd,
				port("temporal-port", o.TemporalPort), port("ui-port", o.UIPort),
				port("s3-port", o.S3Port), port("baseline-port", o.BaselinePort),
				atLeast("restarts", o.Restarts, 0),
			), oneOf("s3", []string{s3}, string(devstack.MinIO), string(devstack.Moto)),
				distinctPorts(map[string]int{"temporal-port": o.TemporalPort, "ui-port": o.UIPort, "s3-port": o.S3Port, "baseline-port": o.BaselinePort}),
			); err != nil {
				return fmt.Errorf("dev: %w", err)
			}
			cfg, err := g.load()
			if err != nil {
				return err
			}
			if f := cfg.Models.ProvidersFile; f != "" {
				// Absolute, so that the env file works from any directory.
				if cfg.Models.ProvidersFile, err = filepath.Abs(f); err != nil {
					return fmt.Errorf("dev: %w", err)
				}
			}
			o.Base = &cfg
			o.S3 = devstack.S3Server(s3)
			errw := cmd.ErrOrStderr()
			o.Notify = func(msg string) { fmt.Fprintln(errw, "benchline dev:", msg) }
			ctx := cmd.Context()
			var ln net.Listener
			if metricsAddr != "" {
				if ln, err = net.Listen("tcp", metricsAddr); err != nil {
					return fmt.Errorf("dev: --metrics-addr %s: %w", metricsAddr, err)
				}
				defer ln.Close()
				o.Metrics = metrics.New()
			}
			r, err := devstack.StartStack(ctx, o, g.logger())
			if err != nil {
				return err
			}
			defer r.Stop()
			if ln != nil {
				srv := &http.Server{Handler: o.Metrics.Handler(), ReadHeaderTimeout: 10 * time.Second}
				go func() { _ = srv.Serve(ln) }()
				defer srv.Close()
				o.Metrics.SetReady(len(r.Workers) > 0)
				fmt.Fprintf(errw, "benchline dev: worker metrics on http://%s/metrics\n", ln.Addr())
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "benchline dev stack is up (state in %s):\n", o.Dir)
			r.PrintAddresses(out)
			if envFile != "" {
				if err := r.WriteEnvFile(envFile); err != nil {
					return fmt.Errorf("dev: %w", err)
				}
				fmt.Fprintf(out, "Wrote %s: run 'set -a; . %s; set +a' to point another shell's benchline commands here.\n", envFile, envFile)
			}
			fmt.Fprintln(out, "Press Ctrl-C to stop.")
			select {
			case <-ctx.Done():
				fmt.Fprintln(out, "stopping...")
				return nil
			case err := <-r.Stack.Died():
				return fmt.Errorf("dev: the stack is incomplete, stopping it: %w", err)
			}
		},
	}
	cmd.Flags().StringVar(&o.Dir, "dir", filepath.Join(devstack.CacheDir(), "dev"), "state directory (Temporal SQLite file, S3 data)")
	cmd.Flags().IntVar(&o.TemporalPort, "temporal-port", 7233, "Temporal gRPC port (0: any free port)")
	cmd.Flags().IntVar(&o.UIPort, "ui-port", 8233, "Temporal Web UI port (0: any free port)")
	cmd.Flags().IntVar(&o.S3Port, "s3-port", 9000, "S3 server port (0: any free port)")
	cmd.Flags().StringVar(&s3, "s3", string(devstack.MinIO), "S3 server: minio (file-backed) or moto (in memory)")
	cmd.Flags().IntVar(&o.BaselinePort, "baseline-port", 8400, "baseline model server port (0: any free port)")
	cmd.Flags().StringVar(&metricsAddr, "metrics-addr", "", "serve the in-process worker's Prometheus /metrics and /healthz on HOST:PORT")
	cmd.Flags().BoolVar(&o.NoWorker, "no-worker", false, "start no in-process worker (run 'benchline worker' separately)")
	cmd.Flags().StringVar(&envFile, "env-file", "", "once every part answers, write KEY=value lines here that point other shells' benchline commands at this stack")
	cmd.Flags().IntVar(&o.Restarts, "restarts", 3, "restart a server that dies at most this many times in 10 minutes (0: never)")
	return cmd
}
