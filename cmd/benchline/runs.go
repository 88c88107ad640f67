package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/benchline/benchline/internal/wfclient"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/benchline/benchline/activities"
	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/names"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/workflows"
)

// Exit codes of `runs ls` and `runs show` (and of every command: 1 is a
// command that could not do its work).
const (
	exitRunFailed    = 2 // failed, terminated or timed out
	exitRunCancelled = 3
	exitRunUnknown   = 4 // Temporal no longer has the workflow, and no summary
)

const runsExitHelp = `
Exit status: 0 when the run is running or completed (for ls: every run listed is),
1 when the command itself failed (no such run, Temporal or S3 unreachable), 2 when the
run failed, was terminated or timed out (ls: any run listed), 3 when it was cancelled
(ls: any, and none failed), 4 (show only) when Temporal no longer knows the run's workflow
and it has no summary.`

// runListing is one line of `runs ls` (and an element of its --json).
type runListing struct {
	RunID          string    `json:"run_id"`
	Dataset        string    `json:"dataset"`
	DatasetVersion string    `json:"dataset_version"`
	Model          string    `json:"model"`
	Samples        int64     `json:"samples"`
	State          string    `json:"state"`
	Reason         string    `json:"reason,omitempty"`
	SamplesDone    int64     `json:"samples_done"`
	Headline       string    `json:"headline,omitempty"`
	CreatedAt      time.Time `json:"created_at"`
}

// runReport is what `runs show --json` prints: the run's state, its
// progress while it runs and its summary once completed.
type runReport struct {
	RunID       string             `json:"run_id"`
	State       string             `json:"state"`
	Reason      string             `json:"reason,omitempty"`
	Checkpoints int                `json:"checkpoints"`
	Progress    *progressReport    `json:"progress,omitempty"`
	Summary     *aggregate.Summary `json:"summary,omitempty"`
	// Batches reports a batch run's batches and why requests failed in
	// them.
	Batches *activities.BatchReport `json:"batches,omitempty"`
}

// progressReport is workflows.Progress with the keys the files use.
type progressReport struct {
	RunID         string    `json:"run_id"`
	Dataset       string    `json:"dataset"`
	Model         string    `json:"model"`
	Samples       int64     `json:"samples"`
	SamplesDone   int64     `json:"samples_done"`
	Shards        int       `json:"shards"`
	ShardsDone    int       `json:"shards_done"`
	ShardsRunning int       `json:"shards_running"`
	ModelFailed   int64     `json:"model_failed"`
	InfraFailed   int64     `json:"infra_failed"`
	CostUSD       float64   `json:"cost_usd"`
	StartedAt     time.Time `json:"started_at"`
}

func newProgressReport(p workflows.Progress) *progressReport {
	return &progressReport{RunID: p.RunID, Dataset: p.Dataset, Model: p.Model, Samples: p.Samples, SamplesDone: p.SamplesDone,
		Shards: p.Shards, ShardsDone: p.ShardsDone, ShardsRunning: p.ShardsRunning, ModelFailed: p.ModelFailed,
		InfraFailed: p.InfraFailed, CostUSD: p.CostUSD, StartedAt: p.StartedAt}
}

// stateExit returns the exit error of a run that ended in st, or nil.
func stateExit(runID string, st wfclient.RunStatus) error {
	msg := fmt.Sprintf("run %s %s", runID, st.State)
	if st.Reason != "" {
		msg += ": " + st.Reason
	}
	switch {
	case st.State == wfclient.StateCancelled:
		return &exitError{code: exitRunCancelled, err: errors.New(msg)}
	case st.State.Ended():
		return &exitError{code: exitRunFailed, err: errors.New(msg)}
	case st.State == wfclient.StateUnknown:
		return &exitError{code: exitRunUnknown, err: errors.New(msg + ": Temporal has no workflow " + wfclient.EvalWorkflowID(runID) + " and there is no summary")}
	}
	return nil
}

func newRunsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "runs", Short: "List, show, cancel and publish evaluation runs"}
	var lsJSON bool
	ls := &cobra.Command{
		Use:   "ls",
		Short: "List evaluation runs (those with a plan in the object store) and their states",
		Long: `ls lists every run with a plan in the object store, with its state from its Temporal
workflow (running, completed, failed, cancelled, terminated, timed_out; unknown when
Temporal no longer has the workflow), why it failed, and its headline metric.` + runsExitHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			_, store, c, err := g.storeAndDial(ctx)
			if err != nil {
				return err
			}
			defer c.Close()
			list, err := listRuns(ctx, c, store)
			if err != nil {
				return err
			}
			if lsJSON {
				if list == nil {
					list = []runListing{}
				}
				if err := json.NewEncoder(cmd.OutOrStdout()).Encode(list); err != nil {
					return err
				}
			} else if err := printRuns(cmd.OutOrStdout(), list); err != nil {
				return err
			}
			return listExit(list)
		},
	}
	ls.Flags().BoolVar(&lsJSON, "json", false, "print as JSON (a list of objects, snake_case keys)")
	var asJSON bool
	show := &cobra.Command{
		Use:   "show RUN-ID",
		Short: "Show a run's state: its summary, its progress while it runs, or why it ended",
		Long: `show prints a completed run's summary; a running run's progress (the bar counts the
samples of finished shards and those the running shards have done so far); a failed,
terminated or timed-out run's reason (the root cause's message); a cancelled run's state.
It also says how many checkpoint files are left under runs/RUN-ID/partial/, and for a batch
run its batches (how many, how they ended) and why requests failed in them (expired, failed
lines, not completed within the window), with an example message of each kind.` + runsExitHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if err := names.RunID(args[0]); err != nil {
				return err
			}
			_, store, c, err := g.storeAndDial(ctx)
			if err != nil {
				return err
			}
			defer c.Close()
			return showRun(ctx, cmd.OutOrStdout(), c, store, args[0], asJSON)
		},
	}
	show.Flags().BoolVar(&asJSON, "json", false, "print as JSON (run_id, state, reason, checkpoints, progress or summary, batches)")
	cmd.AddCommand(ls, show, &cobra.Command{
		Use:   "cancel RUN-ID",
		Short: "Cancel a running evaluation (finished shards are kept; start it again to resume)",
		Long: `cancel asks Temporal to cancel the run's workflow. Its running shards see the request
at their next heartbeat (every 2 s) and stop; the workflow then deletes the run's checkpoint
files (runs/RUN-ID/partial/) and ends as cancelled. The finished shards' results and the
model answers already paid for stay: the same eval started again resumes from them.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := names.RunID(args[0]); err != nil {
				return err
			}
			_, c, err := g.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			if err := c.CancelWorkflow(cmd.Context(), wfclient.EvalWorkflowID(args[0]), ""); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "cancel requested for %s; `benchline runs show %s` says when it has stopped\n", args[0], args[0])
			return nil
		},
	}, newRunsPublishCmd(g))
	return cmd
}

// listRuns reads every plan under runs/ and each run's state.
func listRuns(ctx context.Context, c client.Client, store blob.Store) ([]runListing, error) {
	infos, err := store.List(ctx, "runs/")
	if err != nil {
		return nil, err
	}
	var out []runListing
	for _, info := range infos {
		if !strings.HasSuffix(info.Key, "/plan.json") {
			continue
		}
		var p runs.Plan
		if err := blob.GetJSON(ctx, store, info.Key, &p); err != nil {
			return nil, err
		}
		st, err := wfclient.Status(ctx, c, store, p.RunID)
		if err != nil {
			return nil, err
		}
		l := runListing{RunID: p.RunID, Dataset: p.Dataset, DatasetVersion: p.DatasetVersion, Model: p.Model, Samples: p.Samples,
			State: string(st.State), Reason: st.Reason, CreatedAt: p.CreatedAt}
		switch st.State {
		case wfclient.StateCompleted:
			var s aggregate.Summary
			if err := blob.GetJSON(ctx, store, runs.SummaryKey(p.RunID), &s); err == nil {
				l.SamplesDone = s.Samples
				if len(s.Metrics) > 0 {
					l.Headline = s.Metrics[0].Name + " " + s.Metrics[0].MeanText()
				}
			}
		case wfclient.StateRunning:
			qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			if pr, err := wfclient.QueryProgress(qctx, c, p.RunID); err == nil {
				l.SamplesDone = pr.SamplesDone
			}
			cancel()
		}
		out = append(out, l)
	}
	return out, nil
}

func printRuns(w io.Writer, list []runListing) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tDATASET\tMODEL\tSAMPLES\tSTATE\tHEADLINE\tCREATED")
	for _, l := range list {
		state := l.State
		if l.State == string(wfclient.StateRunning) {
			state = fmt.Sprintf("running %d/%d", l.SamplesDone, l.Samples)
		}
		if l.Reason != "" {
			state += ": " + excerpt(l.Reason, 80)
		}
		fmt.Fprintf(tw, "%s\t%s@%s\t%s\t%d\t%s\t%s\t%s\n", l.RunID, l.Dataset, l.DatasetVersion, l.Model, l.Samples, state, l.Headline, l.CreatedAt.Format(time.DateTime))
	}
	return tw.Flush()
}

// listExit is the exit error of a listing: failed runs first.
func listExit(list []runListing) error {
	failed, cancelled := 0, 0
	for _, l := range list {
		switch s := wfclient.RunState(l.State); {
		case s == wfclient.StateCancelled:
			cancelled++
		case s.Ended():
			failed++
		}
	}
	switch {
	case failed > 0:
		return &exitError{code: exitRunFailed, err: fmt.Errorf("%d of %d runs failed, were terminated or timed out", failed, len(list))}
	case cancelled > 0:
		return &exitError{code: exitRunCancelled, err: fmt.Errorf("%d of %d runs were cancelled", cancelled, len(list))}
	}
	return nil
}

// showRun prints one run's state (see `runs show --help`).
func showRun(ctx context.Context, w io.Writer, c client.Client, store blob.Store, runID string, asJSON bool) error {
	st, err := wfclient.Status(ctx, c, store, runID)
	if err != nil {
		return err
	}
	if st.State == wfclient.StateUnknown {
		if ok, err := blob.Exists(ctx, store, runs.PlanKey(runID)); err != nil {
			return err
		} else if !ok {
			return fmt.Errorf("no run %s: no plan at %s and no workflow %s", runID, runs.PlanKey(runID), wfclient.EvalWorkflowID(runID))
		}
	}
	rep := runReport{RunID: runID, State: string(st.State), Reason: st.Reason, Checkpoints: st.Checkpoints}
	if rep.Batches, err = activities.ReadBatchReport(ctx, store, runID); err != nil {
		return err
	}
	var progress workflows.Progress
	switch st.State {
	case wfclient.StateCompleted:
		var s aggregate.Summary
		if err := blob.GetJSON(ctx, store, runs.SummaryKey(runID), &s); err != nil {
			return fmt.Errorf("run %s completed, but its summary: %w", runID, err)
		}
		rep.Summary = &s
	case wfclient.StateRunning:
		progress, err = wfclient.QueryProgress(ctx, c, runID)
		if err != nil {
			return fmt.Errorf("run %s is running, but its workflow did not answer the progress query: %w", runID, err)
		}
		rep.Progress = newProgressReport(progress)
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
		return stateExit(runID, st)
	}
	switch {
	case rep.Summary != nil:
		wfclient.PrintSummary(w, *rep.Summary)
	case rep.Progress != nil:
		fmt.Fprintf(w, "run %s: running\n%s\n", runID, wfclient.ProgressLine(progress, time.Now()))
	default:
		fmt.Fprintf(w, "run %s: %s\n", runID, st.State)
		if st.Reason != "" {
			fmt.Fprintf(w, "reason: %s\n", st.Reason)
		}
		if st.State == wfclient.StateCancelled {
			fmt.Fprintln(w, "finished shards are kept: the same eval started again resumes from them")
		}
	}
	printBatches(w, rep.Batches)
	if st.State != wfclient.StateCompleted || st.Checkpoints > 0 {
		fmt.Fprintf(w, "checkpoint files left under %spartial/: %d\n", runs.Dir(runID), st.Checkpoints)
	}
	return stateExit(runID, st)
}

// printBatches writes a batch run's batches: how they ended, and why
// requests failed in them.
func printBatches(w io.Writer, r *activities.BatchReport) {
	if r == nil {
		return
	}
	var ended []string
	for _, st := range slices.Sorted(maps.Keys(r.Status)) {
		ended = append(ended, fmt.Sprintf("%d %s", r.Status[st], st))
	}
	fmt.Fprintf(w, "batches: %d (%s), %d requests\n", r.Batches, strings.Join(ended, ", "), r.Requests)
	if r.Failed+r.Fallback == 0 {
		return
	}
	fmt.Fprintf(w, "requests whose batch tries are over: %d failed (4xx lines are the model's failures, others infrastructure errors), %d called interactively (fallback)\n",
		r.Failed, r.Fallback)
	for _, x := range r.Reasons {
		status := ""
		if x.Status != 0 {
			status = fmt.Sprintf(" (HTTP %d)", x.Status)
		}
		fmt.Fprintf(w, "  %d %s%s, e.g. %s\n", x.Requests, x.Class, status, excerpt(x.Example, 160))
	}
}

// excerpt shortens s to n bytes, on one line.
func excerpt(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n-3] + "..."
	}
	return s
}
