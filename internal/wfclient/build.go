package wfclient

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/benchline/benchline/activities"
	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/config"
	"github.com/benchline/benchline/workflows"
)

// BuildWorkflowID is the id of the build of one request: the same request
// started twice attaches to the running build instead of starting another.
func BuildWorkflowID(dataset string, req datasets.Request) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n", dataset, req.Source)
	keys := make([]string, 0, len(req.Params))
	for k := range req.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(h, "%s=%s\n", k, req.Params[k])
	}
	return "build-" + dataset + "-" + hex.EncodeToString(h.Sum(nil))[:12]
}

// StartBuild starts (or attaches to) the BuildDataset workflow for a request.
func StartBuild(ctx context.Context, c client.Client, cfg config.Config, in workflows.BuildDatasetInput) (client.WorkflowRun, error) {
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       BuildWorkflowID(in.Dataset, in.Request),
		TaskQueue:                cfg.Temporal.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
	}, workflows.BuildDataset, in)
	if err != nil {
		return nil, fmt.Errorf("start build of %s: %w", in.Dataset, err)
	}
	return run, nil
}

// BuildDataset starts a build and waits for it.
func BuildDataset(ctx context.Context, c client.Client, cfg config.Config, in workflows.BuildDatasetInput) (workflows.BuildDatasetResult, error) {
	run, err := StartBuild(ctx, c, cfg, in)
	if err != nil {
		return workflows.BuildDatasetResult{}, err
	}
	var res workflows.BuildDatasetResult
	if err := run.Get(ctx, &res); err != nil {
		return res, fmt.Errorf("build of %s (workflow %s): %w", in.Dataset, run.GetID(), Cause(err))
	}
	return res, nil
}

// WatchBuild waits for a build, calling progress (every "every") with a
// line saying what its running activities report: PlanBuild's sources
// staged so far, the rows each WritePart has written. A line is passed
// only when it changes.
func WatchBuild(ctx context.Context, c client.Client, run client.WorkflowRun, dataset string, every time.Duration, progress func(string)) (workflows.BuildDatasetResult, error) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		last := ""
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			dctx, cancel := context.WithTimeout(ctx, every)
			desc, err := c.DescribeWorkflowExecution(dctx, run.GetID(), run.GetRunID())
			cancel()
			if err != nil {
				continue
			}
			var parts []string
			for _, pa := range desc.GetPendingActivities() {
				name := pa.GetActivityType().GetName()
				d := pa.GetHeartbeatDetails()
				if d == nil || len(d.GetPayloads()) == 0 {
					continue
				}
				switch name {
				case "PlanBuild":
					var p activities.PlanProgress
					if converter.GetDefaultDataConverter().FromPayload(d.GetPayloads()[0], &p) == nil {
						parts = append(parts, fmt.Sprintf("planning: %d source files staged (%.1f MB)", p.Sources, float64(p.Bytes)/1e6))
					}
				case "WritePart":
					var rows int64
					if converter.GetDefaultDataConverter().FromPayload(d.GetPayloads()[0], &rows) == nil {
						parts = append(parts, fmt.Sprintf("part: %d rows", rows))
					}
				}
				if a := pa.GetAttempt(); a > 1 {
					parts = append(parts, fmt.Sprintf("%s attempt %d", name, a))
				}
			}
			if line := strings.Join(parts, "; "); line != "" && line != last {
				last = line
				progress(dataset + ": " + line)
			}
		}
	}()
	var res workflows.BuildDatasetResult
	err := run.Get(ctx, &res)
	close(done)
	if err != nil {
		return res, fmt.Errorf("build of %s (workflow %s): %w", dataset, run.GetID(), Cause(err))
	}
	return res, nil
}

// Cause strips Temporal's wrapping from a workflow error down to the
// application error a user can act on (e.g. "file:line: ..." for bad input).
// Its text says the message once (see CauseError); errors.As still finds
// the *temporal.ApplicationError.
func Cause(err error) error {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		return &CauseError{App: appErr}
	}
	return err
}
