package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/benchline/benchline/internal/app"
	"github.com/benchline/benchline/internal/buildinfo"
	"github.com/benchline/benchline/internal/metrics"
)

func newWorkerCmd(g *globals) *cobra.Command {
	var o app.WorkerOptions
	var pprofAddr, metricsAddr string
	var memLimitMB, gcPercent int
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run a benchline worker: every workflow and activity, on the configured task queue",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := errors.Join(oneOf("queues", o.Queues, "main", app.QueueSandbox), checkFlags(cmd,
				atLeast("max-activities", o.MaxConcurrentActivities, 1),
				atLeast("sample-concurrency", o.SampleConcurrency, 1),
				atLeast("sandbox-activities", o.SandboxConcurrency, 1),
				flagRule{"checkpoint-interval", o.CheckpointInterval >= 0, "want a duration of 0 or more"},
				flagRule{"memory-limit-mb", memLimitMB >= 0, "want 0 (none) or more"},
				atLeast("gc-percent", gcPercent, 1),
			)); err != nil {
				return fmt.Errorf("worker: %w", err)
			}
			logger := g.logger()
			madvFree(logger) // returns only when it does not exec
			// The first log line says which build runs (also the benchline_build_info gauge).
			logger.Info("benchline worker starting", buildinfo.Get().LogAttrs()...)
			var m *metrics.Metrics
			var ln net.Listener
			var mh client.MetricsHandler
			if metricsAddr != "" {
				var err error
				// Listen first: a taken port fails the worker at once.
				if ln, err = net.Listen("tcp", metricsAddr); err != nil {
					return fmt.Errorf("worker: --metrics-addr %s: %w", metricsAddr, err)
				}
				defer ln.Close()
				m = metrics.New()
				var closer io.Closer
				mh, closer = m.SDKHandler(logger)
				defer closer.Close()
			}
			cfg, c, store, gw, err := g.observedServices(cmd.Context(), m, mh)
			if err != nil {
				return err
			}
			defer c.Close()
			if m != nil {
				srv := &http.Server{Handler: m.Handler(), ReadHeaderTimeout: 10 * time.Second}
				go func() { _ = srv.Serve(ln) }()
				defer srv.Close()
			}
			limit, percent := gcSettings(memLimitMB, gcPercent, os.Getenv)
			if limit > 0 {
				debug.SetMemoryLimit(limit)
			}
			if percent > 0 {
				debug.SetGCPercent(percent)
			}
			if pprofAddr != "" {
				go func() {
					// net/http/pprof registers on the default mux.
					srv := &http.Server{Addr: pprofAddr, ReadHeaderTimeout: 10 * time.Second}
					_ = srv.ListenAndServe()
				}()
			}
			o.Metrics, o.Logger = m, logger
			ws, err := app.NewWorkers(c, cfg, store, gw, o)
			if err != nil {
				return err
			}
			for _, w := range ws {
				if err := w.Start(); err != nil {
					return err
				}
				defer w.Stop()
			}
			if m != nil {
				m.SetReady(true) // every worker polls its queue: /healthz says 200
				fmt.Fprintf(cmd.ErrOrStderr(), "benchline worker metrics on http://%s/metrics, health on /healthz\n", ln.Addr())
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "benchline worker on %s, queues %v (main = %s)\n", cfg.Temporal.Address, o.Queues, cfg.Temporal.TaskQueue)
			<-cmd.Context().Done()
			return nil
		},
	}
	cmd.Flags().IntVar(&memLimitMB, "memory-limit-mb", 512, "soft memory limit for the Go runtime (GOMEMLIMIT overrides; 0: none)")
	cmd.Flags().IntVar(&gcPercent, "gc-percent", 200, "the Go GC's target heap growth (GOGC) while a soft memory limit is set (GOGC overrides; without a limit, Go's default of 100)")
	cmd.Flags().StringVar(&metricsAddr, "metrics-addr", "", "serve Prometheus /metrics and /healthz (200 once polling) on HOST:PORT, e.g. 0.0.0.0:9090")
	cmd.Flags().StringVar(&pprofAddr, "pprof", "", "serve Go profiles (net/http/pprof) on this loopback address, e.g. 127.0.0.1:6060")
	cmd.Flags().IntVar(&o.MaxConcurrentActivities, "max-activities", 8, "activities run at once on the main queue")
	cmd.Flags().StringSliceVar(&o.Queues, "queues", []string{"main", app.QueueSandbox}, "queues to serve: main (workflows, builds, generation) and sandbox (code execution)")
	cmd.Flags().IntVar(&o.SampleConcurrency, "sample-concurrency", 16, "samples in flight per shard (the gateway's per-provider limits still apply)")
	cmd.Flags().DurationVar(&o.CheckpointInterval, "checkpoint-interval", 5*time.Second, "least time between checkpoints of a shard's results (model answers are saved within about 1s regardless)")
	cmd.Flags().IntVar(&o.SandboxConcurrency, "sandbox-activities", 1, "sandbox scoring activities at once (each runs up to one program per CPU)")
	return cmd
}

// gcSettings returns the soft memory limit (bytes) and the GC percent the
// worker sets, 0 for each it leaves as the environment has it. The limit
// (--memory-limit-mb, unless GOMEMLIMIT is set): the GC works harder near
// it instead of letting garbage from shard files double the heap. The
// percent (--gc-percent, unless GOGC is set), only under a limit: the
// heap may grow by that much of the live heap before a collection, less
// CPU on the GC for memory that the limit bounds (docs/PERFORMANCE.md,
// batch mode round 5). Without a limit, Go's default (100).
func gcSettings(memLimitMB, gcPercent int, getenv func(string) string) (limit int64, percent int) {
	limited := getenv("GOMEMLIMIT") != ""
	if memLimitMB > 0 && !limited {
		limit, limited = int64(memLimitMB)<<20, true
	}
	if limited && getenv("GOGC") == "" {
		percent = gcPercent
	}
	return limit, percent
}
