package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/app"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/runs"
)

func newRunsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "runs", Short: "List, show, cancel and publish evaluation runs"}
	cmd.AddCommand(&cobra.Command{
		Use:   "ls",
		Short: "List evaluation runs in the object store",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, store, err := g.store(cmd.Context())
			if err != nil {
				return err
			}
			infos, err := store.List(cmd.Context(), "runs/")
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "RUN\tDATASET\tMODEL\tSAMPLES\tSTATUS\tHEADLINE\tCREATED")
			for _, info := range infos {
				if !strings.HasSuffix(info.Key, "/plan.json") {
					continue
				}
				var p runs.Plan
				if err := blob.GetJSON(cmd.Context(), store, info.Key, &p); err != nil {
					return err
				}
				status, headline := "running or stopped", ""
				var s aggregate.Summary
				if err := blob.GetJSON(cmd.Context(), store, runs.SummaryKey(p.RunID), &s); err == nil {
					status = "done"
					if len(s.Metrics) > 0 {
						headline = s.Metrics[0].Name + " " + s.Metrics[0].MeanText()
					}
				}
				fmt.Fprintf(tw, "%s\t%s@%s\t%s\t%d\t%s\t%s\t%s\n", p.RunID, p.Dataset, p.DatasetVersion, p.Model, p.Samples, status, headline, p.CreatedAt.Format(time.DateTime))
			}
			return tw.Flush()
		},
	})
	var asJSON bool
	show := &cobra.Command{
		Use:   "show RUN-ID",
		Short: "Show a run's summary, or its progress while it runs",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, store, err := g.store(cmd.Context())
			if err != nil {
				return err
			}
			var s aggregate.Summary
			err = blob.GetJSON(cmd.Context(), store, runs.SummaryKey(args[0]), &s)
			if err == nil {
				if asJSON {
					return json.NewEncoder(cmd.OutOrStdout()).Encode(s)
				}
				app.PrintSummary(cmd.OutOrStdout(), s)
				return nil
			}
			if !errors.Is(err, blob.ErrNotFound) {
				return err
			}
			c, err := app.Dial(cfg, g.logger())
			if err != nil {
				return err
			}
			defer c.Close()
			p, err := app.QueryProgress(cmd.Context(), c, args[0])
			if err != nil {
				return fmt.Errorf("run %s has no summary and its workflow did not answer: %w", args[0], err)
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(p)
			}
			fmt.Fprintln(cmd.OutOrStdout(), app.ProgressLine(p, time.Now()))
			return nil
		},
	}
	show.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	cmd.AddCommand(show, &cobra.Command{
		Use:   "cancel RUN-ID",
		Short: "Cancel a running evaluation (finished shards are kept; start it again to resume)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, c, err := g.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			if err := c.CancelWorkflow(cmd.Context(), app.EvalWorkflowID(args[0]), ""); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "cancel requested for %s\n", args[0])
			return nil
		},
	}, newRunsPublishCmd(g))
	return cmd
}
