package registry

import (
	"github.com/benchline/benchline/internal/sandbox/lang"
	"github.com/benchline/benchline/scorers"
	"github.com/benchline/benchline/scorers/bfcl"
	"github.com/benchline/benchline/scorers/ifevalcode"
	"github.com/benchline/benchline/scorers/synthetic"
	"github.com/benchline/benchline/scorers/trbench"
)

// TaskDeps are what tasks may need from the worker that runs them. A field
// is nil on workers that do not provide it (a task then fails the samples
// that need it as infrastructure errors, never as wrong answers).
type TaskDeps struct {
	// Sandbox runs untrusted code; set on workers of the sandbox queue.
	Sandbox lang.Sandboxer
}

// Tasks returns a registry of every benchmark's evaluation task.
func Tasks(deps TaskDeps) *scorers.Registry {
	r := scorers.NewRegistry()
	for _, t := range []scorers.Task{
		bfcl.Task{},
		ifevalcode.NewTask(deps.Sandbox, ifevalcode.Options{}),
		synthetic.Task{},
		trbench.Task{},
	} {
		if err := r.Register(t); err != nil {
			panic(err) // a duplicate is a programming error caught by tests
		}
	}
	return r
}
