package registry

import (
	"github.com/benchline/benchline/scorers"
	"github.com/benchline/benchline/scorers/bfcl"
)

// Tasks returns a registry of every benchmark's evaluation task.
func Tasks() *scorers.Registry {
	r := scorers.NewRegistry()
	for _, t := range []scorers.Task{
		bfcl.Task{},
	} {
		if err := r.Register(t); err != nil {
			panic(err) // a duplicate is a programming error caught by tests
		}
	}
	return r
}
