package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/benchline/benchline/internal/wfclient"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/benchline/benchline/internal/app"
	"github.com/benchline/benchline/internal/config"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/registry"
	"github.com/benchline/benchline/workflows"
)

func newLeaderboardCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "leaderboard",
		Short: "Refresh, schedule and serve leaderboards described by board files",
		Long: `A board file (YAML) names a leaderboard's benchmarks, models, judges and generation
settings; see README.md ("Leaderboards"). 'refresh' evaluates what is missing and writes a
new stamp under leaderboards/<board>/<stamp>/ (scores.json, scores.parquet, the site), then
moves leaderboards/<board>/latest to it. 'schedule' runs refreshes from a Temporal Schedule.`,
	}
	cmd.AddCommand(newLeaderboardRefreshCmd(g), newLeaderboardScheduleCmd(g), newLeaderboardServeCmd(g), newLeaderboardTokenCmd(), newLeaderboardPresignCmd(g))
	return cmd
}

// loadBoard reads a board file and checks its models against the
// configured providers.
func loadBoard(cfg config.Config, path string) (leaderboard.Board, error) {
	b, err := leaderboard.ReadBoard(path, registry.Default())
	if err != nil {
		return b, err
	}
	return b, wfclient.CheckBoard(cfg, b)
}

func newLeaderboardRefreshCmd(g *globals) *cobra.Command {
	var asJSON bool
	var parallel int
	cmd := &cobra.Command{
		Use:   "refresh BOARD.yaml [--json]",
		Short: "Refresh a board: reuse finished runs, evaluate the rest, write a new stamp and move latest",
		Long: `refresh resolves every (benchmark, model) cell of the board to its run (the run id
encodes the dataset version, model, judges, scorer version and settings, as for
'benchline eval'). Finished runs are reused: no model call, no new run. The others are
evaluated as EvaluateModel child workflows. The stamp (scores.json, scores.parquet, the
site) is written, then the board's latest pointer. A cell whose run fails is listed in
the stamp; if every cell fails, latest stays where it was and the command fails.
With --json it prints {"board", "stamp", "runs_started", "runs_reused", "model_calls",
"site", "changes", "changes_summary", "webhook"}: "changes" is what changed since the
previous stamp, a list ([] when nothing did) of objects {"kind", "dataset", "model", ...}
with kind new_model, dropped_model, significant_change, failed_cell or new_version (the
stamp's changes.json "changes"); "changes_summary" says it in one line; "webhook" whether
the board's webhook took them (absent when none was due). model_calls counts the calls
this refresh paid for (cache hits and reused runs count 0).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFlags(cmd, atLeast("parallel", parallel, 1)); err != nil {
				return err
			}
			cfg, err := g.load()
			if err != nil {
				return err
			}
			b, err := loadBoard(cfg, args[0])
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			c, err := app.Dial(cfg, g.logger())
			if err != nil {
				return err
			}
			defer c.Close()
			errw := cmd.ErrOrStderr()
			fmt.Fprintf(errw, "refreshing board %s: %d benchmarks x %d models\n", b.Name, len(b.Benchmarks), len(b.Models))
			run, err := wfclient.StartRefresh(ctx, c, cfg, workflows.RefreshLeaderboardInput{Board: b, MaxConcurrentRuns: parallel})
			if err != nil {
				return err
			}
			every := 5 * time.Second
			if isTerminal(os.Stderr) {
				every = time.Second
			}
			last := ""
			res, err := wfclient.WatchRefresh(ctx, c, run, every, func(p workflows.RefreshProgress) {
				if line := wfclient.RefreshProgressLine(p); line != last {
					fmt.Fprintln(errw, line)
					last = line
				}
			})
			if err != nil {
				return err
			}
			rep := wfclient.Report(cfg, res)
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(rep)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "board %s, stamp %s: %d runs started, %d reused, %d model calls paid\n", rep.Board, rep.Stamp, rep.RunsStarted, rep.RunsReused, rep.ModelCalls)
			fmt.Fprintf(out, "changes: %s\n", rep.ChangesSummary)
			if rep.Webhook != "" {
				fmt.Fprintf(out, "webhook: %s\n", rep.Webhook)
			}
			for _, f := range res.Failed {
				fmt.Fprintf(out, "failed: %s on %s (run %s): %s\n", wfclient.ModelLabel(f.Model), f.Dataset, f.RunID, f.Error)
			}
			fmt.Fprintf(out, "site: %s\n", rep.Site)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"board", "stamp", "runs_started", "runs_reused", "model_calls", "site", "changes", "changes_summary", "webhook"}`)
	cmd.Flags().IntVar(&parallel, "parallel", 4, "runs evaluated at once")
	return cmd
}

func newLeaderboardScheduleCmd(g *globals) *cobra.Command {
	var cron, file string
	cmd := &cobra.Command{
		Use:   "schedule BOARD --cron EXPR --file BOARD.yaml",
		Short: "Create or update a board's Temporal Schedule (also: pause, unpause, trigger, delete, list)",
		Long: fmt.Sprintf(`schedule creates the Temporal Schedule %s of a board, or updates it in place
when it exists (same command, same result: it is idempotent). The board file is read,
checked, and carried in the schedule's workflow input: to change the board, run schedule
again with the edited file. Refreshes run at scheduled priority (behind on-demand runs).
A refresh due while the previous one still runs is skipped (overlap policy skip). After
downtime, scheduled times missed by less than %v are caught up, older ones dropped; with
overlap skip, several missed times start at most one refresh.`, wfclient.ScheduleID("BOARD"), wfclient.ScheduleCatchupWindow),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cron == "" || file == "" {
				return fmt.Errorf("schedule %s: want --cron EXPR and --file BOARD.yaml", args[0])
			}
			cfg, err := g.load()
			if err != nil {
				return err
			}
			b, err := loadBoard(cfg, file)
			if err != nil {
				return err
			}
			if b.Name != args[0] {
				return fmt.Errorf("schedule %s: %s names board %q", args[0], file, b.Name)
			}
			c, err := app.Dial(cfg, g.logger())
			if err != nil {
				return err
			}
			defer c.Close()
			created, err := wfclient.UpsertSchedule(cmd.Context(), c, cfg, b, cron)
			if err != nil {
				return err
			}
			verb := "updated"
			if created {
				verb = "created"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s schedule %s: board %s at %q (overlap: skip; catch-up window %v)\n", verb, wfclient.ScheduleID(b.Name), b.Name, cron, wfclient.ScheduleCatchupWindow)
			return nil
		},
	}
	cmd.Flags().StringVar(&cron, "cron", "", `cron expression (UTC), e.g. "0 3 * * *"`)
	cmd.Flags().StringVar(&file, "file", "", "board file")
	cmd.AddCommand(
		scheduleOp(g, "pause", "Pause a board's schedule", func(cmd *cobra.Command, h client.ScheduleHandle) error {
			return h.Pause(cmd.Context(), client.SchedulePauseOptions{Note: "paused by benchline leaderboard schedule pause"})
		}),
		scheduleOp(g, "unpause", "Unpause a board's schedule", func(cmd *cobra.Command, h client.ScheduleHandle) error {
			return h.Unpause(cmd.Context(), client.ScheduleUnpauseOptions{Note: "unpaused by benchline leaderboard schedule unpause"})
		}),
		scheduleOp(g, "trigger", "Start a refresh of a board's schedule now (skipped if one is running)", func(cmd *cobra.Command, h client.ScheduleHandle) error {
			return h.Trigger(cmd.Context(), client.ScheduleTriggerOptions{})
		}),
		scheduleOp(g, "delete", "Delete a board's schedule (its stamps stay)", func(cmd *cobra.Command, h client.ScheduleHandle) error {
			return h.Delete(cmd.Context())
		}),
		newScheduleListCmd(g),
	)
	return cmd
}

func scheduleOp(g *globals, name, short string, do func(*cobra.Command, client.ScheduleHandle) error) *cobra.Command {
	return &cobra.Command{
		Use:   name + " BOARD",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, c, err := g.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			h, _, err := wfclient.ScheduleHandle(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			if err := do(cmd, h); err != nil {
				return fmt.Errorf("schedule %s: %s: %w", h.GetID(), name, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "schedule %s: %s done\n", h.GetID(), name)
			return nil
		},
	}
}

func newScheduleListCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the boards' schedules",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, c, err := g.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			list, err := wfclient.ListSchedules(cmd.Context(), c)
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(list)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "BOARD\tSCHEDULE\tWHEN\tPAUSED\tNEXT")
			for _, s := range list {
				next := "-"
				if s.Next != nil {
					next = s.Next.UTC().Format(time.RFC3339)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%s\n", s.Board, s.ID, strings.Join(s.Cron, "; "), s.Paused, next)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the list as JSON")
	return cmd
}
