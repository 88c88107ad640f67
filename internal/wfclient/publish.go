package wfclient

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/benchline/benchline/internal/config"
	"github.com/benchline/benchline/workflows"
)

// PublishWorkflowID is the id of the publish of one version to one
// destination: the same publish started twice attaches to the running one.
func PublishWorkflowID(ref, dest string) string {
	h := sha256.Sum256([]byte(ref + "\n" + dest))
	return "publish-" + ref + "-" + hex.EncodeToString(h[:])[:12]
}

func publishID(in workflows.PublishDatasetInput) string {
	if in.Run != "" {
		return PublishWorkflowID("run-"+in.Run, in.Dest)
	}
	return PublishWorkflowID(in.Ref, in.Dest)
}

// PublishDataset starts (or attaches to) the PublishDataset workflow and
// waits for it.
func PublishDataset(ctx context.Context, c client.Client, cfg config.Config, in workflows.PublishDatasetInput) (workflows.PublishDatasetResult, error) {
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       publishID(in),
		TaskQueue:                cfg.Temporal.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
	}, workflows.PublishDataset, in)
	if err != nil {
		return workflows.PublishDatasetResult{}, fmt.Errorf("start publish of %s: %w", what(in), err)
	}
	var res workflows.PublishDatasetResult
	if err := run.Get(ctx, &res); err != nil {
		return res, fmt.Errorf("publish of %s to %s (workflow %s): %w", what(in), in.Dest, run.GetID(), Cause(err))
	}
	return res, nil
}

func what(in workflows.PublishDatasetInput) string {
	if in.Run != "" {
		return "run " + in.Run
	}
	return in.Ref
}
