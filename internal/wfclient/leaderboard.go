package wfclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/benchline/benchline/internal/config"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/workflows"
)

// CheckBoard checks every model and judge a board names against the
// configured providers, as `benchline eval` checks --model and --judge
// (CheckModels), naming the board file and the key.
func CheckBoard(cfg config.Config, b leaderboard.Board) error {
	var names []ModelName
	for _, r := range b.ModelRefs() {
		names = append(names, ModelName{Flag: b.File + ": " + r.Key, Given: r.Model, Model: r.Model})
	}
	return CheckModels(cfg, names...)
}

// RefreshWorkflowID is the workflow id of an on-demand refresh of a board:
// a refresh asked for while one is running attaches to it.
func RefreshWorkflowID(board string) string { return "refresh-" + board }

// ScheduleID is the id of a board's Temporal Schedule.
func ScheduleID(board string) string { return "leaderboard-" + board }

// ScheduleCatchupWindow bounds catch-up after downtime: a scheduled time
// missed while the Temporal server (or the schedule) was down is still run
// when it comes back within this window, and dropped after it. With the
// overlap policy skip, several missed times start at most one refresh.
const ScheduleCatchupWindow = time.Hour

// StartRefresh starts (or attaches to) the on-demand refresh of a board.
func StartRefresh(ctx context.Context, c client.Client, cfg config.Config, in workflows.RefreshLeaderboardInput) (client.WorkflowRun, error) {
	opts := client.StartWorkflowOptions{
		ID:                       RefreshWorkflowID(in.Board.Name),
		TaskQueue:                cfg.Temporal.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
	}
	digest := in.Board.Digest()
	opts.Memo = map[string]any{BoardDigestMemo: digest}
	run, err := c.ExecuteWorkflow(ctx, opts, workflows.RefreshLeaderboard, in)
	if err != nil {
		return nil, fmt.Errorf("start refresh of board %s: %w", in.Board.Name, err)
	}
	if err := sameBoard(ctx, c, run, in.Board, digest); err != nil {
		return nil, err
	}
	return run, nil
}

// BoardDigestMemo is the memo field of a refresh workflow holding its
// board's digest (leaderboard.Board.Digest).
const BoardDigestMemo = "board_sha256"

// sameBoard checks that the refresh run (which may be one already running
// that ExecuteWorkflow attached to) refreshes the board with digest: a
// board's identity is its content, and attaching to the refresh of another
// board with the same name would report that board's stamp as this one's.
// A refresh without the memo (started before it existed) is accepted.
func sameBoard(ctx context.Context, c client.Client, run client.WorkflowRun, b leaderboard.Board, digest string) error {
	desc, err := c.DescribeWorkflowExecution(ctx, run.GetID(), run.GetRunID())
	if err != nil {
		return fmt.Errorf("refresh of board %s: describe workflow %s: %w", b.Name, run.GetID(), err)
	}
	p := desc.GetWorkflowExecutionInfo().GetMemo().GetFields()[BoardDigestMemo]
	if p == nil {
		return nil
	}
	var running string
	if err := converter.GetDefaultDataConverter().FromPayload(p, &running); err != nil || running == digest {
		return nil
	}
	return fmt.Errorf("board %s: a refresh of another board with this name is running (workflow %s, board sha256 %.12s; this file's is %.12s): "+
		"boards with one name must have one content; wait for it to finish (`benchline leaderboard refresh` again then) or give this board another name",
		b.Name, run.GetID(), running, digest)
}

// WaitRefresh waits for a refresh and returns its result, its error as a
// user reads it.
func WaitRefresh(ctx context.Context, run client.WorkflowRun) (workflows.RefreshLeaderboardResult, error) {
	var res workflows.RefreshLeaderboardResult
	if err := run.Get(ctx, &res); err != nil {
		return res, fmt.Errorf("refresh %s: %w", run.GetID(), Cause(err))
	}
	return res, nil
}

// WatchRefresh waits for a refresh like WaitRefresh, calling progress with
// the refresh's progress (its "progress" query) about every interval.
func WatchRefresh(ctx context.Context, c client.Client, run client.WorkflowRun, every time.Duration, progress func(workflows.RefreshProgress)) (workflows.RefreshLeaderboardResult, error) {
	type done struct {
		res workflows.RefreshLeaderboardResult
		err error
	}
	ch := make(chan done, 1)
	go func() {
		res, err := WaitRefresh(ctx, run)
		ch <- done{res, err}
	}()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case d := <-ch:
			return d.res, d.err
		case <-t.C:
			qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			if v, err := c.QueryWorkflow(qctx, run.GetID(), run.GetRunID(), workflows.ProgressQuery); err == nil {
				var p workflows.RefreshProgress
				if v.Get(&p) == nil {
					progress(p)
				}
			}
			cancel()
		}
	}
}

// RefreshProgressLine is a refresh's progress for people.
func RefreshProgressLine(p workflows.RefreshProgress) string {
	if p.Cells == 0 {
		return fmt.Sprintf("board %s: resolving the board's runs", p.Board)
	}
	line := fmt.Sprintf("board %s: %d cells: %d runs reused, %d running, %d done", p.Board, p.Cells, p.Reused, p.Running, p.Done)
	if p.Failed > 0 {
		line += fmt.Sprintf(" (%d failed)", p.Failed)
	}
	return line
}

// RefreshReport is the object `benchline leaderboard refresh --json`
// prints.
type RefreshReport struct {
	Board       string `json:"board"`
	Stamp       string `json:"stamp"`
	RunsStarted int    `json:"runs_started"`
	RunsReused  int    `json:"runs_reused"`
	ModelCalls  int64  `json:"model_calls"`
	Site        string `json:"site"`
	// Changes is what changed since the previous stamp ([] when nothing
	// did): the stamp's changes.json "changes", objects {"kind",
	// "dataset", "model", ...}; ChangesSummary says it in one line.
	Changes        []leaderboard.Change `json:"changes"`
	ChangesSummary string               `json:"changes_summary"`
	// Webhook is whether the board's webhook took them (absent when none
	// was due).
	Webhook string `json:"webhook,omitempty"`
}

// Report is the refresh's report, its site as an s3:// URI.
func Report(cfg config.Config, r workflows.RefreshLeaderboardResult) RefreshReport {
	changes := r.ChangeList
	if changes == nil {
		changes = []leaderboard.Change{}
	}
	return RefreshReport{Board: r.Board, Stamp: r.Stamp, RunsStarted: r.RunsStarted, RunsReused: r.RunsReused,
		ModelCalls: r.ModelCalls, Site: StoreURI(cfg, r.SiteKey) + "/", Changes: changes, ChangesSummary: r.Changes, Webhook: r.Webhook}
}

// StoreURI is the s3:// URI of a key of the configured store.
func StoreURI(cfg config.Config, key string) string {
	if p := strings.Trim(cfg.S3.Prefix, "/"); p != "" {
		key = p + "/" + key
	}
	return "s3://" + cfg.S3.Bucket + "/" + key
}

func scheduleAction(cfg config.Config, b leaderboard.Board) *client.ScheduleWorkflowAction {
	return &client.ScheduleWorkflowAction{
		ID:        RefreshWorkflowID(b.Name),
		Workflow:  workflows.RefreshLeaderboard,
		Args:      []any{workflows.RefreshLeaderboardInput{Board: b, Priority: workflows.PriorityScheduled}},
		TaskQueue: cfg.Temporal.TaskQueue,
		Memo:      map[string]any{BoardDigestMemo: b.Digest()},
	}
}

// UpsertSchedule creates a board's schedule, or updates it in place when
// it exists (the cron expression and the board, carried in the schedule's
// workflow input); created says which. Overlapping refreshes are skipped,
// and catch-up is bounded by ScheduleCatchupWindow.
func UpsertSchedule(ctx context.Context, c client.Client, cfg config.Config, b leaderboard.Board, cron string) (created bool, err error) {
	spec := client.ScheduleSpec{CronExpressions: []string{cron}}
	policy := &client.SchedulePolicies{Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP, CatchupWindow: ScheduleCatchupWindow}
	_, err = c.ScheduleClient().Create(ctx, client.ScheduleOptions{
		ID: ScheduleID(b.Name), Spec: spec, Action: scheduleAction(cfg, b),
		Overlap: policy.Overlap, CatchupWindow: policy.CatchupWindow,
		Note: "benchline leaderboard schedule " + b.Name,
	})
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		return false, fmt.Errorf("schedule %s: %w", ScheduleID(b.Name), err)
	}
	h := c.ScheduleClient().GetHandle(ctx, ScheduleID(b.Name))
	err = h.Update(ctx, client.ScheduleUpdateOptions{DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
		s := in.Description.Schedule
		s.Spec = &spec
		s.Action = scheduleAction(cfg, b)
		s.Policy = policy
		return &client.ScheduleUpdate{Schedule: &s}, nil
	}})
	if err != nil {
		return false, fmt.Errorf("schedule %s: update: %w", ScheduleID(b.Name), err)
	}
	return false, nil
}

// ScheduleHandle returns the handle of a board's schedule after checking
// that it exists, so that an unknown board is an error naming it.
func ScheduleHandle(ctx context.Context, c client.Client, board string) (client.ScheduleHandle, *client.ScheduleDescription, error) {
	h := c.ScheduleClient().GetHandle(ctx, ScheduleID(board))
	d, err := h.Describe(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("board %s has no schedule %s: %w", board, ScheduleID(board), err)
	}
	return h, d, nil
}

// BoardSchedule is one board's schedule as `leaderboard schedule list`
// prints it.
type BoardSchedule struct {
	Board   string     `json:"board"`
	ID      string     `json:"id"`
	Cron    []string   `json:"cron"`
	Paused  bool       `json:"paused"`
	Next    *time.Time `json:"next,omitempty"`
	Recent  int        `json:"recent_actions"`
	Comment string     `json:"note,omitempty"`
}

// ListSchedules lists the boards' schedules (ids starting "leaderboard-").
func ListSchedules(ctx context.Context, c client.Client) ([]BoardSchedule, error) {
	it, err := c.ScheduleClient().List(ctx, client.ScheduleListOptions{PageSize: 100})
	if err != nil {
		return nil, fmt.Errorf("list schedules: %w", err)
	}
	var out []BoardSchedule
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("list schedules: %w", err)
		}
		board, ok := strings.CutPrefix(e.ID, "leaderboard-")
		if !ok {
			continue
		}
		// The list comes from the visibility store, which lags an update
		// by a moment; describe each schedule for its current spec.
		d, err := c.ScheduleClient().GetHandle(ctx, e.ID).Describe(ctx)
		var notFound *serviceerror.NotFound
		if errors.As(err, &notFound) {
			continue // deleted since it was listed
		}
		if err != nil {
			return nil, fmt.Errorf("describe schedule %s: %w", e.ID, err)
		}
		s := BoardSchedule{Board: board, ID: e.ID, Recent: len(d.Info.RecentActions)}
		if st := d.Schedule.State; st != nil {
			s.Paused, s.Comment = st.Paused, st.Note
		}
		if spec := d.Schedule.Spec; spec != nil {
			s.Cron = append(s.Cron, spec.CronExpressions...)
			for _, cal := range spec.Calendars {
				s.Cron = append(s.Cron, calendarText(cal))
			}
		}
		if len(d.Info.NextActionTimes) > 0 {
			t := d.Info.NextActionTimes[0]
			s.Next = &t
		}
		out = append(out, s)
	}
	return out, nil
}

// calendarText writes a calendar spec (what the server turns a cron
// expression into) as "minute hour day-of-month month day-of-week", each
// field its ranges ("*" for every value).
func calendarText(c client.ScheduleCalendarSpec) string {
	field := func(rs []client.ScheduleRange, lo, hi int) string {
		var parts []string
		for _, r := range rs {
			end := max(r.End, r.Start)
			p := fmt.Sprint(r.Start)
			switch {
			case r.Start == lo && end == hi:
				p = "*"
			case end > r.Start:
				p += fmt.Sprintf("-%d", end)
			}
			if r.Step > 1 {
				p += fmt.Sprintf("/%d", r.Step)
			}
			parts = append(parts, p)
		}
		if len(parts) == 0 {
			return "*"
		}
		return strings.Join(parts, ",")
	}
	return strings.Join([]string{field(c.Minute, 0, 59), field(c.Hour, 0, 23), field(c.DayOfMonth, 1, 31),
		field(c.Month, 1, 12), field(c.DayOfWeek, 0, 6)}, " ")
}
