package activities

import (
	"time"

	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/scorers"
)

// NewPlan derives a run's plan from the request, the pinned dataset version
// and the task. It is the one derivation of a plan: the client calls it to
// learn the run id it will attach to (wfclient.ResolveRun) and PlanRun calls it
// to write plan.json, so the two cannot disagree on the run id. Judge
// panels are normalized (judge.Panel: trimmed, deduplicated, sorted), so a
// panel listed in another order, from flags or a board file, is the same
// run.
func NewPlan(req runs.Request, m catalog.Manifest, task scorers.Task, createdAt time.Time) runs.Plan {
	p := runs.Plan{Dataset: m.Name, DatasetVersion: m.Version, Model: req.Model, Judges: normalJudges(req.Judges), Params: req.Params,
		Seed: req.Seed, TaskVersion: task.Version(), Metrics: task.Metrics(), ShardSize: req.ShardSize, Limit: req.Limit,
		NoCache: req.NoCache, Batch: req.Batch, CreatedAt: createdAt.UTC()}
	var rows, bytes int64
	for _, f := range m.Files {
		p.Files = append(p.Files, runs.File{Key: catalog.Dir(m.Name, m.Version) + f.Path, Rows: f.Rows})
		rows, bytes = rows+f.Rows, bytes+f.Bytes
	}
	if p.Batch && p.ShardSize <= 0 {
		p.ShardSize = runs.BatchShardSize(rows, bytes)
	}
	p.Layout()
	p.RunID = p.ID()
	return p
}

// normalJudges returns the judges with every role's panel in its normal
// form; roles left without a model are dropped, and nil stays nil.
func normalJudges(judges map[string]string) map[string]string {
	if judges == nil {
		return nil
	}
	out := make(map[string]string, len(judges))
	for role, list := range judges {
		if panel := judge.NormalPanel(list); panel != "" {
			out[role] = panel
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
