// Package registry holds the list of benchmarks (benchmarks.go, one line
// each) and the lookups built from it: builders, evaluation tasks and line
// scorers. A new benchmark declares its benchmark.Benchmark in
// datasets/<name>/benchmark.go and adds one line to the list; the demo,
// `dataset build`, `score`, the workers and the end-to-end tests all
// iterate the list. Tests build their own Registry with New.
package registry

import (
	"fmt"
	"sort"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
)

// A Registry is a validated set of benchmarks, by name.
type Registry struct {
	list   []benchmark.Benchmark
	byName map[string]int
}

// New validates the benchmarks and returns their registry; a duplicate
// name, or a line scorer name used twice, is an error.
func New(bs ...benchmark.Benchmark) (*Registry, error) {
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

// With returns a registry of r's benchmarks and bs.
func (r *Registry) With(bs ...benchmark.Benchmark) (*Registry, error) {
	return New(append(append([]benchmark.Benchmark(nil), r.list...), bs...)...)
}

// Default is the registry of every benchmark in the list.
func Default() *Registry {
	r, err := New(benchmarks()...)
	if err != nil {
		panic(err) // a broken registration is a programming error caught by tests
	}
	return r
}

// All returns the benchmarks in list order (the order the demo runs them).
func (r *Registry) All() []benchmark.Benchmark { return append([]benchmark.Benchmark(nil), r.list...) }

// Get returns the benchmark called name.
func (r *Registry) Get(name string) (benchmark.Benchmark, error) {
	i, ok := r.byName[name]
	if !ok {
		return benchmark.Benchmark{}, fmt.Errorf("registry: no benchmark called %q (have %v)", name, r.Names())
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

// Builders returns the dataset builders.
func (r *Registry) Builders() *datasets.Registry {
	reg := datasets.NewRegistry()
	for _, b := range r.list {
		if err := reg.Register(b.Builder); err != nil {
			panic(err) // New rejected duplicates
		}
	}
	return reg
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

// Tasks returns the evaluation tasks, built with deps.
func (r *Registry) Tasks(deps benchmark.Deps) *scorers.Registry {
	reg := scorers.NewRegistry()
	for _, b := range r.list {
		if b.NewTask == nil {
			continue
		}
		if err := reg.Register(b.NewTask(deps)); err != nil {
			panic(err) // Validate checked each task's dataset; New rejected duplicates
		}
	}
	return reg
}

// Clusters returns the cluster function of every benchmark that declares
// one (benchmark.Benchmark.Cluster), by dataset name.
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
func (r *Registry) Scorers() []benchmark.LineScorer {
	var out []benchmark.LineScorer
	for _, b := range r.list {
		out = append(out, b.Scorers...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
