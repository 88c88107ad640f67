package activities

import (
	"time"

	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/scorers"
)

// NewPlan derives a run's plan from the request, the pinned dataset version
// and the task. It is the one derivation of a plan: the client calls it to
// learn the run id it will attach to (app.ResolveRun) and PlanRun calls it
// to write plan.json, so the two cannot disagree on the run id.
func NewPlan(req runs.Request, m catalog.Manifest, task scorers.Task, createdAt time.Time) runs.Plan {
	p := runs.Plan{Dataset: m.Name, DatasetVersion: m.Version, Model: req.Model, Judges: req.Judges, Params: req.Params,
		Seed: req.Seed, TaskVersion: task.Version(), Metrics: task.Metrics(), ShardSize: req.ShardSize, Limit: req.Limit,
		NoCache: req.NoCache, CreatedAt: createdAt.UTC()}
	for _, f := range m.Files {
		p.Files = append(p.Files, runs.File{Key: catalog.Dir(m.Name, m.Version) + f.Path, Rows: f.Rows})
	}
	p.Layout()
	p.RunID = p.ID()
	return p
}
