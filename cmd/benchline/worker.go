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
			cfg, err := g.load()
			if err != nil {
				return err
			}
			c, err := app.Dial(cfg, g.logger())
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
			w := app.NewWorker(c, cfg, store, gw, o)
			fmt.Fprintf(cmd.ErrOrStderr(), "benchline worker on %s, task queue %s\n", cfg.Temporal.Address, cfg.Temporal.TaskQueue)
			stop := make(chan interface{})
			go func() { <-cmd.Context().Done(); close(stop) }()
			return w.Run(stop)
		},
	}
	cmd.Flags().IntVar(&o.MaxConcurrentActivities, "max-activities", 8, "activities run at once by this worker")
	return cmd
}
