package wfclient

import (
	"context"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/benchline/benchline/activities"
	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/config"
	"github.com/benchline/benchline/internal/names"
	"github.com/benchline/benchline/internal/registry"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/workflows"
)

// EvalWorkflowID is the workflow id of a run: the same plan started twice
// attaches to (or reuses) the same run.
func EvalWorkflowID(runID string) string { return workflows.EvalWorkflowID(runID) }

// ResolveRun computes the plan, and so the run id, a request will get: the
// PlanRun activity derives it with the same activities.NewPlan (minus the
// creation time), so the client can attach to a running evaluation.
func ResolveRun(ctx context.Context, store blob.Store, reg *benchmark.Registry, req runs.Request) (runs.Plan, error) {
	name, _, err := names.ParseRef(req.Dataset)
	if err != nil {
		return runs.Plan{}, err
	}
	if _, err := reg.Task(name); err != nil {
		if _, derr := reg.DynamicBuilder(name); derr != nil {
			return runs.Plan{}, err
		}
	}
	m, err := catalog.Resolve(ctx, store, req.Dataset)
	if err != nil {
		return runs.Plan{}, err
	}
	task, err := reg.TaskOf(ctx, store, m)
	if err != nil {
		return runs.Plan{}, err
	}
	return activities.NewPlan(req, m, task, time.Time{}), nil
}

// StartEval resolves the run of a request against the registered
// benchmarks and starts (or attaches to) its EvaluateModel workflow.
func StartEval(ctx context.Context, c client.Client, cfg config.Config, store blob.Store, in workflows.EvaluateModelInput) (client.WorkflowRun, runs.Plan, error) {
	plan, err := ResolveRun(ctx, store, registry.Default(), in.Request)
	if err != nil {
		return nil, plan, err
	}
	run, err := StartPlanned(ctx, c, cfg, plan, in)
	return run, plan, err
}

// StartPlanned starts (or attaches to) the EvaluateModel workflow of a
// resolved plan, pinning the request to the plan's dataset version.
func StartPlanned(ctx context.Context, c client.Client, cfg config.Config, plan runs.Plan, in workflows.EvaluateModelInput) (client.WorkflowRun, error) {
	in.Request.Dataset = plan.Dataset + "@" + plan.DatasetVersion
	prio := in.Priority
	if prio == 0 {
		prio = workflows.PriorityOnDemand
	}
	opts := client.StartWorkflowOptions{
		ID:                       EvalWorkflowID(plan.RunID),
		TaskQueue:                cfg.Temporal.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		Priority:                 temporalPriority(prio, plan.RunID),
	}
	run, err := c.ExecuteWorkflow(ctx, opts, workflows.EvaluateModel, in)
	if err != nil {
		return nil, fmt.Errorf("start evaluation: %w", err)
	}
	return run, nil
}

// WaitEval waits for a run, calling progress about every interval.
func WaitEval(ctx context.Context, c client.Client, run client.WorkflowRun, runID string, every time.Duration, progress func(workflows.Progress)) (workflows.EvaluateModelResult, error) {
	done := make(chan struct{})
	var res workflows.EvaluateModelResult
	var err error
	go func() {
		defer close(done)
		err = run.Get(ctx, &res)
	}()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-done:
			if err != nil {
				return res, fmt.Errorf("evaluation %s: %w", runID, Cause(err))
			}
			return res, nil
		case <-t.C:
			if progress != nil {
				qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				if p, qerr := QueryProgress(qctx, c, runID); qerr == nil {
					progress(p)
				}
				cancel()
			}
		}
	}
}
