package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/benchline/benchline/activities"
	"github.com/benchline/benchline/internal/gateway"
)

// Every activity is retried a bounded number of times, with backoff, and
// bad input (activities.ErrTypeInvalidInput), refused credentials and a
// full store not at all; after the last
// attempt the workflow fails with the last attempt's error. Each set also
// has a ScheduleToCloseTimeout, so that an activity no worker ever picks up
// (a sandbox queue without a sandbox worker) fails the workflow instead of
// waiting forever. Long activities heartbeat, so a killed worker's activity
// is retried on another worker within HeartbeatTimeout.

// infraAttempts bounds the attempts of an activity that fails for
// infrastructure reasons (S3 or a source URL down, a worker killed). With
// backoff from 1 s doubling to at most a minute, twelve attempts span about
// six minutes of waiting, which outlasts a restart of MinIO or of a worker.
// (While the Temporal server is down no attempt is made, so none is spent.)
const infraAttempts = 12

func retry(attempts int32, nonRetryable ...string) *temporal.RetryPolicy {
	return &temporal.RetryPolicy{
		InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute, MaximumAttempts: attempts,
		NonRetryableErrorTypes: append([]string{activities.ErrTypeInvalidInput, activities.ErrTypeAuth, activities.ErrTypeStoreFull}, nonRetryable...),
	}
}

var (
	// planOptions: PlanBuild stages and validates every source, FinishPlan
	// plans parts from generated units; both heartbeat every 5 s.
	planOptions = workflow.ActivityOptions{
		StartToCloseTimeout:    time.Hour,
		ScheduleToCloseTimeout: 3 * time.Hour,
		HeartbeatTimeout:       time.Minute,
		RetryPolicy:            retry(infraAttempts),
	}
	// publishOptions: Publish heads the parts and writes three small
	// objects; it is short and does not heartbeat.
	publishOptions = workflow.ActivityOptions{
		StartToCloseTimeout:    10 * time.Minute,
		ScheduleToCloseTimeout: time.Hour,
		RetryPolicy:            retry(infraAttempts),
	}
	partOptions = workflow.ActivityOptions{
		StartToCloseTimeout:    2 * time.Hour,
		ScheduleToCloseTimeout: 6 * time.Hour,
		HeartbeatTimeout:       10 * time.Second,
		RetryPolicy:            retry(infraAttempts),
	}
	// Generation units call models: a few attempts (each resumes from the
	// unit's response cache; the gateway retries inside each call first),
	// then the build fails with the error naming the item and model.
	// Permanent gateway errors (auth, quota, unknown model) are not retried.
	generateOptions = workflow.ActivityOptions{
		StartToCloseTimeout:    2 * time.Hour,
		ScheduleToCloseTimeout: 6 * time.Hour,
		HeartbeatTimeout:       time.Minute,
		RetryPolicy:            retry(5, gateway.NonRetryableErrorTypes()...),
	}
	// releaseOptions: PlanPublish, FinishPublish and AbortPublish read a
	// manifest and write a few small objects (FinishPublish heads every
	// file and reads one Parquet footer); they do not heartbeat.
	releaseOptions = workflow.ActivityOptions{
		StartToCloseTimeout:    10 * time.Minute,
		ScheduleToCloseTimeout: time.Hour,
		RetryPolicy:            retry(infraAttempts),
	}
	// copyOptions: CopyReleaseFile streams one data file to the release and
	// reads it back, heartbeating every 5 s; a retry skips a copy already
	// verified.
	copyOptions = workflow.ActivityOptions{
		StartToCloseTimeout:    time.Hour,
		ScheduleToCloseTimeout: 6 * time.Hour,
		HeartbeatTimeout:       time.Minute,
		RetryPolicy:            retry(infraAttempts),
	}
	// evalPlanOptions: PlanRun (which may write a dataset's references)
	// and Aggregate (which reads every result shard) heartbeat every 5 s.
	evalPlanOptions = workflow.ActivityOptions{
		StartToCloseTimeout:    time.Hour,
		ScheduleToCloseTimeout: 3 * time.Hour,
		HeartbeatTimeout:       time.Minute,
		RetryPolicy:            retry(infraAttempts),
	}
	// shardOptions: a shard resumes from its checkpoints on every attempt,
	// so an attempt lost to a killed worker costs little; auth, quota and
	// unknown-model errors stop the run at once. A day bounds a shard
	// waiting for a worker of its queue (e.g. the sandbox queue).
	shardOptions = workflow.ActivityOptions{
		StartToCloseTimeout:    6 * time.Hour,
		ScheduleToCloseTimeout: 24 * time.Hour,
		HeartbeatTimeout:       30 * time.Second,
		RetryPolicy:            retry(infraAttempts, gateway.NonRetryableErrorTypes()...),
	}
	// cleanupOptions: CleanupRun deletes a run's checkpoints after it was
	// cancelled or failed, DiscardStaged a failed build's staged sources
	// and the parts it wrote;
	// short, a few attempts, and bounded so that a cancelled run or failed
	// build ends even with no worker to clean up.
	cleanupOptions = workflow.ActivityOptions{
		StartToCloseTimeout:    5 * time.Minute,
		ScheduleToCloseTimeout: 15 * time.Minute,
		RetryPolicy:            retry(5),
	}
	// boardOptions: ResolveBoard reads manifests and heads summaries;
	// WriteBoard reads the runs' summaries and samples and writes the stamp
	// (it heartbeats every 5 s).
	boardOptions = workflow.ActivityOptions{
		StartToCloseTimeout:    30 * time.Minute,
		ScheduleToCloseTimeout: 2 * time.Hour,
		HeartbeatTimeout:       time.Minute,
		RetryPolicy:            retry(infraAttempts),
	}
	// waitRunOptions: WaitRun waits for a run another workflow started
	// (heartbeating every 10 s); a day bounds it, as it bounds a shard.
	waitRunOptions = workflow.ActivityOptions{
		StartToCloseTimeout:    24 * time.Hour,
		ScheduleToCloseTimeout: 24 * time.Hour,
		HeartbeatTimeout:       time.Minute,
		RetryPolicy:            retry(infraAttempts),
	}
)

// ActivityOptionSet is one set of activity options a workflow schedules
// activities with, and the activities it is used for.
type ActivityOptionSet struct {
	Name       string
	Activities []string
	Options    workflow.ActivityOptions
	// Long is true when the activities may run for minutes: they heartbeat,
	// and the set must have a HeartbeatTimeout, so a dead worker is noticed.
	Long bool
	// Unbounded, when not empty, is the documented reason the set may retry
	// without a maximum number of attempts. No set needs one today.
	Unbounded string
}

// ActivityOptionSets lists every activity option set of BuildDataset,
// EvaluateModel, PublishDataset and RefreshLeaderboard, so that a test can check each is bounded.
func ActivityOptionSets() []ActivityOptionSet {
	return []ActivityOptionSet{
		{Name: "plan", Activities: []string{"PlanBuild", "FinishPlan"}, Options: planOptions, Long: true},
		{Name: "publish", Activities: []string{"Publish"}, Options: publishOptions},
		{Name: "part", Activities: []string{"WritePart"}, Options: partOptions, Long: true},
		{Name: "generate", Activities: []string{"Generate"}, Options: generateOptions, Long: true},
		{Name: "release", Activities: []string{"PlanPublish", "FinishPublish", "AbortPublish"}, Options: releaseOptions},
		{Name: "release-copy", Activities: []string{"CopyReleaseFile"}, Options: copyOptions, Long: true},
		{Name: "eval-plan", Activities: []string{"PlanRun", "Aggregate"}, Options: evalPlanOptions, Long: true},
		{Name: "shard", Activities: []string{"RunShard", "ScoreShard"}, Options: shardOptions, Long: true},
		{Name: "cleanup", Activities: []string{"CleanupRun", "DiscardStaged"}, Options: cleanupOptions},
		{Name: "board", Activities: []string{"ResolveBoard", "WriteBoard"}, Options: boardOptions, Long: true},
		{Name: "wait-run", Activities: []string{"WaitRun"}, Options: waitRunOptions, Long: true},
	}
}
