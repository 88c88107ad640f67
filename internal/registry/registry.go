// Package registry is the one place where benchmarks are registered. A new
// benchmark adds its builder here and touches nothing else outside its own
// packages.
package registry

import (
	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/bfcl"
	"github.com/benchline/benchline/datasets/ifevalcode"
	"github.com/benchline/benchline/datasets/synthetic"
	"github.com/benchline/benchline/datasets/toolpref"
	"github.com/benchline/benchline/datasets/trbench"
)

// Builders returns a registry of every dataset builder.
func Builders() *datasets.Registry {
	r := datasets.NewRegistry()
	for _, b := range []datasets.Builder{
		bfcl.Builder{},
		ifevalcode.Builder{},
		synthetic.Builder{},
		toolpref.Builder{},
		trbench.Builder{},
	} {
		if err := r.Register(b); err != nil {
			panic(err) // a duplicate name is a programming error caught by tests
		}
	}
	return r
}
