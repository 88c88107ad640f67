package wfclient

import (
	"context"
	"errors"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/benchline/benchline/activities"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/workflows"
)

// RunState is where a run is, from its workflow's execution status.
type RunState string

// The states of a run. Unknown is a run whose workflow Temporal no longer
// has (its history's retention passed) and that has no summary.
const (
	StateRunning    RunState = "running"
	StateCompleted  RunState = "completed"
	StateFailed     RunState = "failed"
	StateCancelled  RunState = "cancelled"
	StateTerminated RunState = "terminated"
	StateTimedOut   RunState = "timed_out"
	StateUnknown    RunState = "unknown"
)

// Ended reports whether s is a state a run ends in without a summary: the
// commands exit non-zero for these.
func (s RunState) Ended() bool {
	switch s {
	case StateFailed, StateCancelled, StateTerminated, StateTimedOut:
		return true
	}
	return false
}

// RunStatus is what `runs ls` and `runs show` report about a run.
type RunStatus struct {
	RunID string
	State RunState
	// Reason says why a run failed, was terminated or timed out: for a
	// failure, the root cause's message (CauseError), e.g. the gateway's
	// "unknown provider".
	Reason string
	// HasSummary is true when runs/<id>/summary.json exists.
	HasSummary bool
	// Checkpoints counts the files left under runs/<id>/partial/.
	Checkpoints int
}

// describe returns the execution info of a run's latest workflow run, or
// nil when Temporal has no workflow of that id.
func describe(ctx context.Context, c client.Client, runID string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	d, err := c.DescribeWorkflowExecution(ctx, EvalWorkflowID(runID), "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("describe workflow %s: %w", EvalWorkflowID(runID), err)
	}
	return d, nil
}

// Status reports a run's state from its workflow's execution status (the
// latest run of workflow eval-<run-id>) and its files.
func Status(ctx context.Context, c client.Client, store blob.Store, runID string) (RunStatus, error) {
	st := RunStatus{RunID: runID}
	var err error
	if st.HasSummary, err = blob.Exists(ctx, store, runs.SummaryKey(runID)); err != nil {
		return st, err
	}
	left, err := store.List(ctx, runs.PartialPrefix(runID))
	if err != nil {
		return st, err
	}
	st.Checkpoints = len(left)
	d, err := describe(ctx, c, runID)
	if err != nil {
		return st, err
	}
	if d == nil {
		st.State = StateUnknown
		if st.HasSummary {
			st.State = StateCompleted
		}
		return st, nil
	}
	info := d.GetWorkflowExecutionInfo()
	switch info.GetStatus() {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
		st.State = StateRunning
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		st.State = StateCompleted
	case enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:
		st.State = StateFailed
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		st.State = StateCancelled
	case enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:
		st.State = StateTerminated
	case enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		st.State = StateTimedOut
	default:
		st.State = StateUnknown
	}
	if st.State == StateFailed || st.State == StateTerminated || st.State == StateTimedOut {
		st.Reason, err = closeReason(ctx, c, runID, info.GetExecution().GetRunId())
		if err != nil {
			return st, err
		}
	}
	return st, nil
}

// closeReason reads the close event of a workflow run and says why it
// ended: a failure's root cause, a termination's reason.
func closeReason(ctx context.Context, c client.Client, runID, wfRunID string) (string, error) {
	it := c.GetWorkflowHistory(ctx, EvalWorkflowID(runID), wfRunID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return "", fmt.Errorf("history of workflow %s: %w", EvalWorkflowID(runID), err)
		}
		if a := ev.GetWorkflowExecutionFailedEventAttributes(); a != nil {
			return Cause(temporal.GetDefaultFailureConverter().FailureToError(a.GetFailure())).Error(), nil
		}
		if a := ev.GetWorkflowExecutionTerminatedEventAttributes(); a != nil {
			if a.GetReason() == "" {
				return "no reason given", nil
			}
			return a.GetReason(), nil
		}
		if ev.GetWorkflowExecutionTimedOutEventAttributes() != nil {
			return "the workflow's execution timeout passed", nil
		}
	}
	return "", nil
}

// QueryProgress asks a running evaluation for its progress: the workflow's
// counts of finished shards (the "progress" query), plus what its shards in
// flight have done so far, read from the heartbeat details of its pending
// activities (activities.ShardCounts) in DescribeWorkflowExecution. The
// workflow cannot read heartbeat details itself, and a one-shard run would
// otherwise show 0 samples until it ends. A shard in deferred scoring
// (ScoreShard) counts the samples it has scored.
func QueryProgress(ctx context.Context, c client.Client, runID string) (workflows.Progress, error) {
	var p workflows.Progress
	v, err := c.QueryWorkflow(ctx, EvalWorkflowID(runID), "", workflows.ProgressQuery)
	if err != nil {
		return p, err
	}
	if err := v.Get(&p); err != nil {
		return p, err
	}
	d, err := describe(ctx, c, runID)
	if err != nil || d == nil {
		return p, err
	}
	dc := converter.GetDefaultDataConverter()
	for _, pa := range d.GetPendingActivities() {
		switch pa.GetActivityType().GetName() {
		case "RunShard", "ScoreShard":
		default:
			continue
		}
		p.ShardsRunning++
		if pa.GetHeartbeatDetails() == nil {
			continue
		}
		var sc activities.ShardCounts
		if err := dc.FromPayloads(pa.GetHeartbeatDetails(), &sc); err != nil {
			continue // an older worker's detail: no counts
		}
		p.SamplesDone += sc.Samples
		p.ModelFailed += sc.ModelFailed
		p.InfraFailed += sc.InfraFailed
		p.CostUSD += sc.CostUSD
		p.Batches.Submitted += sc.BatchCounts.Submitted
		p.Batches.Running += sc.BatchCounts.Running
		p.Batches.Completed += sc.BatchCounts.Completed
		p.Batches.Requests += sc.BatchCounts.Requests
		p.Batches.RequestsDone += sc.BatchCounts.RequestsDone
	}
	return p, nil
}
