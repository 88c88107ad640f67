package workflows

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/benchline/benchline/activities"
	"github.com/benchline/benchline/internal/leaderboard"
)

// EvalWorkflowID is the workflow id of a run's EvaluateModel workflow: the
// same plan started twice (by `benchline eval` or a board) is one run.
func EvalWorkflowID(runID string) string { return "eval-" + runID }

// RefreshLeaderboardInput asks for a board to be refreshed.
type RefreshLeaderboardInput struct {
	// Board is the parsed board file (leaderboard.ParseBoard).
	Board leaderboard.Board
	// Stamp names the stamp written; empty: the workflow's start time
	// (workflow.Now) in leaderboard.StampLayout.
	Stamp string
	// MaxConcurrentRuns bounds the EvaluateModel children running at once
	// [4].
	MaxConcurrentRuns int
	// Priority is given to the runs started: PriorityOnDemand (default)
	// or PriorityScheduled (a schedule's refreshes).
	Priority int
}

// RefreshLeaderboardResult is what `benchline leaderboard refresh --json`
// prints (with the site's URI made from SiteKey).
type RefreshLeaderboardResult struct {
	Board       string
	Stamp       string
	RunsStarted int
	RunsReused  int
	// ModelCalls are the calls paid for by the runs this refresh started:
	// their calls minus their cache hits. Reused runs count 0.
	ModelCalls int64
	Failed     []leaderboard.FailedCell
	SiteKey    string
	// Changes is what changed since the board's previous stamp, in one
	// line; ChangeList the changes themselves (changes.json's "changes");
	// Webhook whether the board's webhook took them.
	Changes    string
	ChangeList []leaderboard.Change
	Webhook    string
}

var stampRE = regexp.MustCompile(`^\d{8}T\d{6}Z$`)

// RefreshProgress is what the "progress" query of a refresh returns.
type RefreshProgress struct {
	Board  string
	Stamp  string
	Cells  int // 0 until the board is resolved
	Reused int
	// Running are the runs started (or waited for) and not yet done;
	// Done the runs done, Failed those of them that failed.
	Running int
	Done    int
	Failed  int
}

// RefreshLeaderboard resolves a board's (benchmark, model) cells to runs,
// reuses every finished run, evaluates the others as EvaluateModel child
// workflows (at most MaxConcurrentRuns at once; the child's workflow id is
// the run's usual one, so a run already in progress is waited for, not
// started twice), then writes the stamp (scores.json, scores.parquet, the
// site) and, last, the board's latest pointer. A cell whose run fails is
// listed in the stamp's Failed; if every cell fails, nothing is written
// and the refresh fails naming them, leaving the last good stamp as latest.
func RefreshLeaderboard(ctx workflow.Context, in RefreshLeaderboardInput) (RefreshLeaderboardResult, error) {
	var a *activities.Leaderboard
	now := workflow.Now(ctx).UTC()
	stamp := in.Stamp
	if stamp == "" {
		stamp = now.Format(leaderboard.StampLayout)
	}
	res := RefreshLeaderboardResult{Board: in.Board.Name, Stamp: stamp}
	if !stampRE.MatchString(stamp) {
		return res, temporal.NewNonRetryableApplicationError(fmt.Sprintf("stamp %q: want %s", stamp, leaderboard.StampLayout), activities.ErrTypeInvalidInput, nil)
	}
	prio := in.Priority
	if prio == 0 {
		prio = PriorityOnDemand
	}
	maxRuns := in.MaxConcurrentRuns
	if maxRuns <= 0 {
		maxRuns = 4
	}

	progress := RefreshProgress{Board: in.Board.Name, Stamp: stamp}
	if err := workflow.SetQueryHandler(ctx, ProgressQuery, func() (RefreshProgress, error) { return progress, nil }); err != nil {
		return res, err
	}

	var cells []activities.BoardCell
	lctx := workflow.WithActivityOptions(ctx, boardOptions)
	if err := workflow.ExecuteActivity(lctx, a.ResolveBoard, activities.ResolveBoardInput{Board: in.Board}).Get(ctx, &cells); err != nil {
		return res, err
	}

	progress.Cells = len(cells)
	outcomes := evaluateCells(ctx, cells, maxRuns, prio, &progress, &res)

	var failed []string
	for _, o := range outcomes {
		if o.Error != "" {
			failed = append(failed, fmt.Sprintf("%s on %s: %s", o.Model, o.Dataset, o.Error))
		}
	}
	if len(outcomes) > 0 && len(failed) == len(outcomes) {
		return res, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("board %s: every cell failed; latest is unchanged: %s", in.Board.Name, strings.Join(failed, "; ")), "BoardFailed", nil)
	}
	var w activities.WriteBoardResult
	if err := workflow.ExecuteActivity(lctx, a.WriteBoard, activities.WriteBoardInput{Board: in.Board, Stamp: stamp, CreatedAt: now, Cells: outcomes}).Get(ctx, &w); err != nil {
		return res, err
	}
	res.Failed, res.SiteKey, res.Changes, res.ChangeList, res.Webhook = w.Failed, w.SiteKey, w.Changes, w.ChangeList, w.Webhook
	return res, nil
}

// evaluateCells reuses every finished cell's run and evaluates the others
// as EvaluateModel children, at most maxRuns at once (a run already in
// progress elsewhere is waited for), counting into progress and res.
func evaluateCells(ctx workflow.Context, cells []activities.BoardCell, maxRuns, prio int, progress *RefreshProgress, res *RefreshLeaderboardResult) []activities.CellOutcome {
	var a *activities.Leaderboard
	outcomes := make([]activities.CellOutcome, len(cells))
	type runDone struct {
		i       int
		started bool
		calls   int64
		err     error
	}
	results := workflow.NewChannel(ctx)
	wctx := workflow.WithActivityOptions(ctx, waitRunOptions)
	evaluate := func(ctx workflow.Context, i int) {
		c := cells[i]
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID:            EvalWorkflowID(c.RunID),
			WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
			// A run outlives a refresh that is cancelled: a later refresh
			// reuses it.
			ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON,
			Priority:          temporal.Priority{PriorityKey: prio, FairnessKey: c.RunID},
		})
		var r EvaluateModelResult
		err := workflow.ExecuteChildWorkflow(cctx, EvaluateModel, EvaluateModelInput{Request: c.Request, Priority: prio}).Get(ctx, &r)
		var already *temporal.ChildWorkflowExecutionAlreadyStartedError
		if errors.As(err, &already) {
			// Someone else is evaluating this plan: wait for that run.
			err = workflow.ExecuteActivity(wctx, a.WaitRun, activities.WaitRunInput{RunID: c.RunID, WorkflowID: EvalWorkflowID(c.RunID)}).Get(ctx, nil)
			results.Send(ctx, runDone{i: i, err: err})
			return
		}
		results.Send(ctx, runDone{i: i, started: true, calls: r.Summary.Calls - r.Summary.CacheHits, err: err})
	}

	next, running := 0, 0
	for {
		for running < maxRuns && next < len(cells) {
			i := next
			next++
			outcomes[i] = activities.CellOutcome{BoardCell: cells[i], Reused: true}
			if cells[i].Finished {
				res.RunsReused++
				progress.Reused++
				continue
			}
			workflow.Go(ctx, func(ctx workflow.Context) { evaluate(ctx, i) })
			running++
			progress.Running++
		}
		if running == 0 {
			break
		}
		var d runDone
		results.Receive(ctx, &d)
		running--
		progress.Running--
		progress.Done++
		o := &outcomes[d.i]
		if d.started {
			o.Reused = false
			res.RunsStarted++
			res.ModelCalls += max(d.calls, 0)
		} else {
			res.RunsReused++
		}
		if d.err != nil {
			o.Error = errorText(d.err)
			progress.Failed++
		}
	}

	return outcomes
}

// errorText is an error's message as a user reads it: the first
// application error's message (the run's own reason), else the error.
func errorText(err error) string {
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) && ae.Message() != "" {
		return ae.Message()
	}
	var ce *temporal.CanceledError
	if errors.As(err, &ce) {
		return "canceled"
	}
	return err.Error()
}
