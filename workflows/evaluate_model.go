package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/benchline/benchline/activities"
	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/runs"
)

// Priorities: on-demand runs go ahead of scheduled refreshes on every task
// queue (Temporal priority keys: smaller runs sooner).
const (
	PriorityOnDemand  = 1
	PriorityScheduled = 4
)

// EvaluateModelInput asks for a model to be evaluated on a dataset version.
type EvaluateModelInput struct {
	Request runs.Request
	// MaxConcurrentShards bounds shard activities in flight [8].
	MaxConcurrentShards int
	// RerunErrors re-evaluates the samples of a finished run that failed
	// for infrastructure reasons.
	RerunErrors bool
	// Priority is PriorityOnDemand (default) or PriorityScheduled.
	Priority int
	// ShardsPerRun is how many shards one workflow run completes before it
	// continues as new, bounding history size [400].
	ShardsPerRun int
	// ShardHeartbeatTimeout is how long a shard may go without a heartbeat
	// before it is retried on another worker [30s]; shards heartbeat every
	// 2 s.
	ShardHeartbeatTimeout time.Duration
	// ShardTarget is how long one shard activity should last when shards
	// are fast: once shards have finished, the workflow hands the next
	// activity as many consecutive shards as take about this long at
	// their measured time per shard (ShardGroup) [5s]; negative: one
	// shard per activity. Shards scored on another queue (sandboxes) are
	// never grouped.
	ShardTarget time.Duration `json:",omitempty"`
	// State carries progress across continue-as-new; nil on the first run.
	State *EvalState
}

// EvalState is a run's progress, small and carried across continue-as-new.
type EvalState struct {
	Plan        activities.PlanRunResult
	StartedAt   time.Time
	NextShard   int
	ShardsDone  int
	SamplesDone int64
	ModelFailed int64
	InfraFailed int64
	Calls       int64
	CacheHits   int64
	CostUSD     float64
	// ShardSeconds is the activity time of the ShardsTimed shards whose
	// results said how long they took: ShardGroup's time per shard.
	ShardSeconds float64 `json:",omitempty"`
	ShardsTimed  int     `json:",omitempty"`
}

// Progress is what the "progress" query returns.
type Progress struct {
	RunID       string
	Dataset     string
	Model       string
	Samples     int64
	Shards      int
	ShardsDone  int
	SamplesDone int64
	ModelFailed int64
	InfraFailed int64
	CostUSD     float64
	StartedAt   time.Time
	Finished    bool
	// ShardsRunning is filled by the client (wfclient.QueryProgress), which also
	// adds the running shards' counts so far to the counts above; the
	// workflow answers 0 and counts finished shards only. It counts shard
	// activities: a group of fast shards (ShardGroup) counts once.
	ShardsRunning int
	// Batches are the batch-mode batches of the running shards, filled by
	// the client from their heartbeats like ShardsRunning.
	Batches activities.BatchCounts `json:",omitzero"`
}

// ProgressQuery is the name of the query that returns Progress.
const ProgressQuery = "progress"

// EvaluateModelResult is the run's summary.
type EvaluateModelResult struct {
	RunID   string
	Summary aggregate.Summary
}

// EvaluateModel plans a run, evaluates its shards through a sliding window of
// shard activities (continuing as new every ShardsPerRun shards, so runs of
// any size fit the history limits), and aggregates the results.
//
// A run that is cancelled or fails stops its shards (they see the cancel
// request in their next heartbeat's answer; the workflow waits for them)
// and then deletes its checkpoints with CleanupRun in a disconnected
// context; a run that finishes runs CleanupRun after Aggregate, for the
// checkpoints a shard could not delete. A restart of the same plan is the
// same run id and resumes from the shards' result files and cache
// segments.
func EvaluateModel(ctx workflow.Context, in EvaluateModelInput) (res EvaluateModelResult, err error) {
	var a *activities.Eval
	prio := in.Priority
	if prio == 0 {
		prio = PriorityOnDemand
	}
	st := in.State
	finished := false
	if err := workflow.SetQueryHandler(ctx, ProgressQuery, func() (Progress, error) {
		if st == nil {
			return Progress{}, nil
		}
		return Progress{RunID: st.Plan.RunID, Dataset: st.Plan.Dataset, Model: st.Plan.Model, Samples: st.Plan.Samples,
			Shards: st.Plan.Shards, ShardsDone: st.ShardsDone, SamplesDone: st.SamplesDone, ModelFailed: st.ModelFailed,
			InfraFailed: st.InfraFailed, CostUSD: st.CostUSD, StartedAt: st.StartedAt, Finished: finished}, nil
	}); err != nil {
		return EvaluateModelResult{}, err
	}

	// Histories recorded before cancellation cleaned up have no marker and
	// replay as DefaultVersion: shards not waited for, no cleanup.
	cleanup := workflow.GetVersion(ctx, cleanupChange, workflow.DefaultVersion, 1) >= 1
	// Histories recorded before shards were grouped replay with one shard
	// per activity.
	grouping := workflow.GetVersion(ctx, shardGroupChange, workflow.DefaultVersion, 1) >= 1
	// Histories recorded before shard time hints size their first
	// activities one shard each and record no timing.
	hinted := workflow.GetVersion(ctx, shardHintChange, workflow.DefaultVersion, 1) >= 1
	if cleanup {
		defer func() {
			if err == nil || st == nil || workflow.IsContinueAsNewError(err) {
				return
			}
			err = cleanupRun(ctx, st.Plan.RunID, err)
		}()
	}

	if st == nil {
		var plan activities.PlanRunResult
		pctx := workflow.WithActivityOptions(ctx, withPriority(evalPlanOptions, prio, ""))
		if err := workflow.ExecuteActivity(pctx, a.PlanRun, activities.PlanRunInput{Request: in.Request, CreatedAt: workflow.Now(ctx)}).Get(ctx, &plan); err != nil {
			return EvaluateModelResult{}, err
		}
		st = &EvalState{Plan: plan, StartedAt: workflow.Now(ctx)}
		if plan.Finished && !in.RerunErrors {
			st.NextShard, st.ShardsDone, st.SamplesDone = plan.Shards, plan.Shards, plan.Samples
		}
	}
	sctx, scoreCtx, maxConc, target := shardContexts(ctx, in, st, prio, cleanup, grouping)
	perRun := in.ShardsPerRun
	if perRun <= 0 {
		perRun = 400
	}
	type shardDone struct {
		res    activities.ShardResult
		shards int
		err    error
	}
	results := workflow.NewChannel(ctx)
	runOne := func(ctx workflow.Context, shard, n int) {
		var r activities.ShardResult
		si := activities.RunShardInput{RunID: st.Plan.RunID, Shard: shard, RerunErrors: in.RerunErrors}
		if n > 1 {
			si.Shards = n
		}
		err := workflow.ExecuteActivity(sctx, a.RunShard, si).Get(ctx, &r)
		if err == nil && scoreCtx != nil {
			err = workflow.ExecuteActivity(scoreCtx, a.ScoreShard, activities.ScoreShardInput{RunID: st.Plan.RunID, Shard: shard}).Get(ctx, &r)
		}
		results.Send(ctx, shardDone{res: r, shards: n, err: err})
	}

	sched := &shardScheduler{st: st, target: target, conc: maxConc, hinted: hinted, hint: st.Plan.ShardSecondsHint,
		stopAt: min(st.NextShard+perRun, st.Plan.Shards)}
	var firstErr error
	running := 0
	for sched.more() || running > 0 {
		sched.wave()
		for running < maxConc && sched.more() && firstErr == nil && !workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			shard, n := sched.next()
			workflow.Go(ctx, func(ctx workflow.Context) { runOne(ctx, shard, n) })
			running++
		}
		if running == 0 {
			break // stopped launching (error or continue-as-new suggested) and drained
		}
		var d shardDone
		results.Receive(ctx, &d)
		running--
		if d.err != nil {
			if firstErr == nil {
				firstErr = d.err
			}
			continue
		}
		st.ShardsDone += d.shards
		sched.done(d.shards, d.res.Seconds)
		st.add(d.res)
	}
	if firstErr != nil {
		return EvaluateModelResult{RunID: st.Plan.RunID}, firstErr
	}
	if st.NextShard < st.Plan.Shards {
		next := in
		next.State = st
		return EvaluateModelResult{}, workflow.NewContinueAsNewError(ctx, EvaluateModel, next)
	}

	sum, err := finishRun(ctx, in, st, prio, hinted && target > 0, cleanup)
	if err != nil {
		return EvaluateModelResult{RunID: st.Plan.RunID}, err
	}
	finished = true
	return EvaluateModelResult{RunID: st.Plan.RunID, Summary: sum}, nil
}

// shardContexts is how EvaluateModel runs a run's shards: the activity
// context of RunShard (and of ScoreShard on the plan's score queue, nil
// when it has none), how many run at once, and the grouping target (-1:
// one shard per activity). It starts no command.
func shardContexts(ctx workflow.Context, in EvaluateModelInput, st *EvalState, prio int, cleanup, grouping bool) (sctx, scoreCtx workflow.Context, maxConc int, target time.Duration) {
	// One fairness key per run: no run starves another on a shared queue.
	so := withPriority(shardOptions, prio, st.Plan.RunID)
	if in.ShardHeartbeatTimeout > 0 {
		so.HeartbeatTimeout = in.ShardHeartbeatTimeout
	}
	// On cancellation, wait for the shards to acknowledge (stop writing)
	// before the cleanup deletes their checkpoints.
	so.WaitForCancellation = cleanup
	maxConc = in.MaxConcurrentShards
	if maxConc <= 0 {
		maxConc = 8
	}
	if st.Plan.Batch {
		// A batch shard mostly waits for its provider: it may take its
		// batches' bound, every round, and many wait at once. (No history
		// before batch mode has a batch plan: no version marker needed.)
		so = batchShardOptions(so, st.Plan.BatchBound)
		if in.MaxConcurrentShards <= 0 {
			maxConc = DefaultBatchShards
		}
	}
	sctx = workflow.WithActivityOptions(ctx, so)

	// A deferred scorer (sandboxes) runs on its own task queue after the
	// shard is generated.
	if st.Plan.ScoreQueue != "" {
		sco := so
		sco.TaskQueue = st.Plan.ScoreQueue
		scoreCtx = workflow.WithActivityOptions(ctx, sco)
	}
	target = in.ShardTarget
	if target == 0 {
		target = DefaultShardTarget
	}
	if !grouping || scoreCtx != nil || st.Plan.Batch {
		target = -1 // batch shards: each its own batches, all waiting at once
	}
	return sctx, scoreCtx, maxConc, target
}

// finishRun aggregates a run whose shards are all done (timed: record the
// time per sample for the model's next run) and, with cleanup, deletes the
// checkpoints its shards left.
func finishRun(ctx workflow.Context, in EvaluateModelInput, st *EvalState, prio int, timed, cleanup bool) (aggregate.Summary, error) {
	var a *activities.Eval
	var sum aggregate.Summary
	actx := workflow.WithActivityOptions(ctx, withPriority(evalPlanOptions, prio, ""))
	agg := activities.AggregateInput{RunID: st.Plan.RunID, Recompute: in.RerunErrors || !st.Plan.Finished}
	if timed && st.ShardsTimed > 0 && st.Plan.Samples > 0 {
		// For the model's next run on the dataset (its first groups).
		agg.SecondsPerSample = st.ShardSeconds / float64(st.ShardsTimed) * float64(st.Plan.Shards) / float64(st.Plan.Samples)
		agg.ShardsTimed = st.ShardsTimed
	}
	if err := workflow.ExecuteActivity(actx, a.Aggregate, agg).Get(ctx, &sum); err != nil {
		return sum, err
	}
	if cleanup {
		// Each shard deletes its own checkpoints; this deletes those a shard
		// could not (a delete that failed while the store restarted, a worker
		// killed between its result file and the deletes, whose retry then
		// found the result file). The run's result does not depend on it.
		var r activities.CleanupRunResult
		cctx := workflow.WithActivityOptions(ctx, cleanupOptions)
		if err := workflow.ExecuteActivity(cctx, a.CleanupRun, activities.CleanupRunInput{RunID: st.Plan.RunID}).Get(ctx, &r); err != nil {
			workflow.GetLogger(ctx).Warn("run finished; deleting leftover checkpoints failed", "run", st.Plan.RunID, "error", err)
		} else if r.Checkpoints > 0 {
			workflow.GetLogger(ctx).Info("run finished; deleted leftover checkpoints", "run", st.Plan.RunID, "checkpoints", r.Checkpoints)
		}
	}
	return sum, nil
}

// add counts a finished shard group's samples, failures, calls and cost.
func (st *EvalState) add(r activities.ShardResult) {
	st.SamplesDone += r.Samples
	st.ModelFailed += r.ModelFailed
	st.InfraFailed += r.InfraFailed
	st.Calls += r.Calls
	st.CacheHits += r.CacheHits
	st.CostUSD += r.CostUSD
}

// DefaultShardTarget is EvaluateModelInput.ShardTarget's default: against
// a fast endpoint a 500-sample shard lasts about a second, and Temporal's
// cost per activity (its SQLite or database commits, a workflow task, the
// round trip before the next shard starts) was an eighth of the run's CPU
// or more; a group of 5 such shards pays it once.
const DefaultShardTarget = 5 * time.Second

// DefaultBatchShards is how many shard activities of a batch-mode run run
// at once when EvaluateModelInput.MaxConcurrentShards is unset: each
// mostly waits for its provider's batches, so many wait together.
const DefaultBatchShards = 64

// batchShardOptions gives the shard activities of a batch run time for
// their batches: each round may wait the bound (window plus margin), and
// a shard has a judge round after its model round; a retried attempt finds
// its batches and resumes them.
func batchShardOptions(o workflow.ActivityOptions, bound time.Duration) workflow.ActivityOptions {
	if bound <= 0 {
		return o
	}
	o.StartToCloseTimeout = max(o.StartToCloseTimeout, 2*bound+time.Hour)
	o.ScheduleToCloseTimeout = max(o.ScheduleToCloseTimeout, 4*bound+24*time.Hour)
	return o
}

// maxShardGroup bounds the shards of one activity.
const maxShardGroup = 64

// ShardGroup returns how many consecutive shards the next shard activity
// runs, given the measured activity time per shard so far (0: none yet),
// the target time of one activity, the shards left to start in this
// workflow run and the activities run at once: as many as last about
// target, at most maxShardGroup, and at most left/conc, so that every
// slot still gets a share of what is left and the run's last activities
// end together; at least 1.
func ShardGroup(perShard, target time.Duration, left, conc int) int {
	if perShard <= 0 || target <= 0 || conc <= 0 {
		return 1
	}
	n := min(int(target/perShard), left/conc, maxShardGroup)
	return max(n, 1)
}

// shardGroupChange is the workflow.GetVersion change id of handing one
// shard activity several consecutive shards.
const shardGroupChange = "shard-groups"

// shardHintChange is the workflow.GetVersion change id of sizing the first
// groups of shards from the model's last run on the dataset
// (PlanRunResult.ShardSecondsHint) and recording this run's time for the
// next (AggregateInput.SecondsPerSample).
const shardHintChange = "shard-time-hint"

// cleanupChange is the workflow.GetVersion change id of stopping shards
// and deleting checkpoints when a run is cancelled or fails.
const cleanupChange = "cleanup-on-cancel"

// cleanupRun runs CleanupRun for a run that ended with cause (cancelled or
// failed), in a context disconnected from the workflow's cancellation, and
// returns cause: the run ends as it would have. A cleanup that fails is
// logged; the cause is what the user needs to see.
func cleanupRun(ctx workflow.Context, runID string, cause error) error {
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	dctx = workflow.WithActivityOptions(dctx, cleanupOptions)
	var a *activities.Eval
	var r activities.CleanupRunResult
	log := workflow.GetLogger(ctx)
	if err := workflow.ExecuteActivity(dctx, a.CleanupRun, activities.CleanupRunInput{RunID: runID}).Get(dctx, &r); err != nil {
		log.Warn("run ended; deleting its checkpoints failed", "run", runID, "error", err)
		return cause
	}
	log.Info("run ended; deleted its checkpoints", "run", runID, "checkpoints", r.Checkpoints)
	return cause
}

func withPriority(o workflow.ActivityOptions, key int, fairness string) workflow.ActivityOptions {
	o.Priority = temporal.Priority{PriorityKey: key, FairnessKey: fairness}
	return o
}
