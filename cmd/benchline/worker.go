package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/benchline/benchline/internal/app"
)

func newWorkerCmd(g *globals) *cobra.Command {
	var o app.WorkerOptions
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run a benchline worker: every workflow and activity, on the configured task queue",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, c, err := g.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			store, err := app.OpenStore(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			gw, err := app.OpenGateway(cfg, "", g.logger())
			if err != nil {
				return err
			}
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
			fmt.Fprintf(cmd.ErrOrStderr(), "benchline worker on %s, queues %v (main = %s)\n", cfg.Temporal.Address, o.Queues, cfg.Temporal.TaskQueue)
			<-cmd.Context().Done()
			return nil
		},
	}
	cmd.Flags().IntVar(&o.MaxConcurrentActivities, "max-activities", 8, "activities run at once on the main queue")
	cmd.Flags().StringSliceVar(&o.Queues, "queues", []string{"main", app.QueueSandbox}, "queues to serve: main (workflows, builds, generation) and sandbox (code execution)")
	cmd.Flags().IntVar(&o.SampleConcurrency, "sample-concurrency", 16, "samples in flight per shard (the gateway's per-provider limits still apply)")
	cmd.Flags().IntVar(&o.SandboxConcurrency, "sandbox-activities", 1, "sandbox scoring activities at once (each runs up to one program per CPU)")
	return cmd
}
