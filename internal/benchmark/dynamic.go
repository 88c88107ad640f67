package benchmark

import (
	"context"
	"fmt"
	"regexp"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
)

// Dynamic are benchmarks defined by data instead of code: task files
// (docs/tasks.md). A dynamic benchmark has no entry in the list; its
// builder is made for the name a build gives, and its evaluation task is
// made from what a built version stores. So a worker evaluates a task file
// written after it started.
type Dynamic interface {
	// Builder is the builder of the dynamic benchmark called name.
	Builder(name string) datasets.Builder
	// Schema is the table every dynamic benchmark's versions are built in:
	// how a version is known to be one of them.
	Schema() schemas.Table
	// Task is the evaluation task of the built version m.
	Task(ctx context.Context, store blob.Store, m catalog.Manifest) (scorers.Task, error)
}

// DynamicWithDeps is an optional capability of a Dynamic whose tasks need
// a worker's deps (a task file's code scorer, the sandbox): Registry's
// WithDeps binds them.
type DynamicWithDeps interface {
	Dynamic
	WithDeps(deps Deps) Dynamic
}

// WithDynamic returns r with d serving the names r does not register.
func (r *Registry) WithDynamic(d Dynamic) *Registry {
	out := *r
	out.dynamic = d
	return &out
}

// DynamicBuilder is the builder of the dynamic benchmark called name (a
// task file's); an error when r has no Dynamic or name is registered.
func (r *Registry) DynamicBuilder(name string) (datasets.Builder, error) {
	if _, ok := r.byName[name]; ok {
		return nil, fmt.Errorf("datasets: %q is a built-in benchmark: a task file takes another name", name)
	}
	if r.dynamic == nil {
		return nil, fmt.Errorf("datasets: task files are not served here")
	}
	if !dynamicName.MatchString(name) {
		return nil, fmt.Errorf("datasets: %q is no benchmark's name: a task file's name has lower-case letters, digits and dashes, starting with a letter", name)
	}
	return r.dynamic.Builder(name), nil
}

// BuilderOf is the builder of a plan's dataset: the registered one, or the
// dynamic one for a plan of its schema.
func (r *Registry) BuilderOf(dataset string, schema schemas.Table) (datasets.Builder, error) {
	if r.dynamic != nil && schema == r.dynamic.Schema() {
		return r.DynamicBuilder(dataset)
	}
	return r.Builder(dataset)
}

// TaskOf is the evaluation task of the built version m: the registered
// benchmark's, or, for a version of the dynamic schema, the one its stored
// task file defines.
func (r *Registry) TaskOf(ctx context.Context, store blob.Store, m catalog.Manifest) (scorers.Task, error) {
	if r.dynamic != nil && m.Schema == r.dynamic.Schema() {
		if _, ok := r.byName[m.Name]; !ok {
			return r.dynamic.Task(ctx, store, m)
		}
	}
	return r.Task(m.Name)
}

// TaskOfVersion is TaskOf for a dataset version named by name and id.
func (r *Registry) TaskOfVersion(ctx context.Context, store blob.Store, name, version string) (scorers.Task, error) {
	if _, ok := r.byName[name]; ok || r.dynamic == nil {
		return r.Task(name)
	}
	m, err := catalog.ReadManifest(ctx, store, name, version)
	if err != nil {
		return nil, err
	}
	return r.TaskOf(ctx, store, m)
}

// dynamicName is a task file's name (scorers/taskfile's rule).
var dynamicName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,63}$`)
