package benchmark

import (
	"fmt"
	"slices"
	"sort"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
)

// A Registry is a validated set of benchmarks, by name: the one lookup of
// builders, evaluation tasks, line scorers and clusters. The list of
// benchline's benchmarks is internal/registry (registry.Default()); tests
// build their own Registry with New.
type Registry struct {
	list   []Benchmark
	byName map[string]int
	// tasks are the evaluation tasks built with the deps of WithDeps, by
	// dataset; nil until then (Task builds with no deps).
	tasks map[string]scorers.Task
	// dynamic serves the benchmarks defined by data (task files), nil
	// without them (WithDynamic).
	dynamic Dynamic
}

// NewRegistry validates the benchmarks and returns their registry; a
// duplicate name, or a line scorer name used twice, is an error.
func NewRegistry(bs ...Benchmark) (*Registry, error) {
	r := &Registry{byName: map[string]int{}}
	scorerNames := map[string]string{}
	for _, b := range bs {
		if err := b.Validate(); err != nil {
			return nil, fmt.Errorf("registry: %w", err)
		}
		if _, dup := r.byName[b.Name()]; dup {
			return nil, fmt.Errorf("registry: benchmark %q registered twice", b.Name())
		}
		for _, s := range b.Scorers {
			if other, dup := scorerNames[s.Name]; dup {
				return nil, fmt.Errorf("registry: line scorer %q registered by %s and %s", s.Name, other, b.Name())
			}
			scorerNames[s.Name] = b.Name()
		}
		r.byName[b.Name()] = len(r.list)
		r.list = append(r.list, b)
	}
	return r, nil
}

// MustRegistry is NewRegistry for a list fixed in the code: a broken
// registration is a programming error (caught by tests), so it panics.
func MustRegistry(bs ...Benchmark) *Registry {
	r, err := NewRegistry(bs...)
	if err != nil {
		panic(err)
	}
	return r
}

// With returns a registry of r's benchmarks and bs (with no deps bound).
func (r *Registry) With(bs ...Benchmark) (*Registry, error) {
	out, err := NewRegistry(append(slices.Clone(r.list), bs...)...)
	if err == nil {
		out.dynamic = r.dynamic
	}
	return out, err
}

// WithDeps returns a registry of r's benchmarks whose evaluation tasks
// (Task) are built once with deps: what a worker that provides deps
// serves.
func (r *Registry) WithDeps(deps Deps) *Registry {
	out := &Registry{list: r.list, byName: r.byName, tasks: map[string]scorers.Task{}, dynamic: r.dynamic}
	if d, ok := r.dynamic.(DynamicWithDeps); ok {
		out.dynamic = d.WithDeps(deps)
	}
	for _, b := range r.list {
		if b.NewTask != nil {
			out.tasks[b.Name()] = b.NewTask(deps)
		}
	}
	return out
}

// All returns the benchmarks in list order (the order the demo runs them).
func (r *Registry) All() []Benchmark { return slices.Clone(r.list) }

// Get returns the benchmark called name.
func (r *Registry) Get(name string) (Benchmark, error) {
	i, ok := r.byName[name]
	if !ok {
		return Benchmark{}, fmt.Errorf("registry: no benchmark called %q (have %v)", name, r.Names())
	}
	return r.list[i], nil
}

// Names lists the benchmarks, sorted.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.list))
	for _, b := range r.list {
		out = append(out, b.Name())
	}
	sort.Strings(out)
	return out
}

// Builder returns the dataset builder called name.
func (r *Registry) Builder(name string) (datasets.Builder, error) {
	i, ok := r.byName[name]
	if !ok {
		return nil, fmt.Errorf("datasets: no builder called %q (have %v)", name, r.Names())
	}
	return r.list[i].Builder, nil
}

// Task returns the evaluation task of dataset, built with the deps of
// WithDeps (with none on a registry without them).
func (r *Registry) Task(dataset string) (scorers.Task, error) {
	i, ok := r.byName[dataset]
	if !ok || r.list[i].NewTask == nil {
		return nil, fmt.Errorf("scorers: no evaluation task for dataset %q (have %v)", dataset, r.TaskNames())
	}
	if r.tasks != nil {
		return r.tasks[dataset], nil
	}
	return r.list[i].NewTask(Deps{}), nil
}

// TaskNames lists the datasets with an evaluation task, sorted.
func (r *Registry) TaskNames() []string {
	var out []string
	for _, b := range r.list {
		if b.NewTask != nil {
			out = append(out, b.Name())
		}
	}
	sort.Strings(out)
	return out
}

// Descriptions returns each benchmark's one-line description by dataset
// name (for published dataset cards).
func (r *Registry) Descriptions() map[string]string {
	out := make(map[string]string, len(r.list))
	for _, b := range r.list {
		out[b.Name()] = b.Description
	}
	return out
}

// Clusters returns the cluster function of every benchmark that declares
// one (Benchmark.Cluster), by dataset name.
func (r *Registry) Clusters() map[string]func(schemas.ResultRow) string {
	out := map[string]func(schemas.ResultRow) string{}
	for _, b := range r.list {
		if b.Cluster != nil {
			out[b.Name()] = b.Cluster
		}
	}
	return out
}

// Scorers returns every line scorer, sorted by name.
func (r *Registry) Scorers() []LineScorer {
	var out []LineScorer
	for _, b := range r.list {
		out = append(out, b.Scorers...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
