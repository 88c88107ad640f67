//go:build !bench

package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// The product binary keeps the name `benchline bench` (design.md's
// contract) but not the benches: they shell out to go test -bench in a
// source checkout, so they are in the tool build only (bench.go).
func init() { toolCommands = append(toolCommands, newBenchStub) }

func newBenchStub(*globals) *cobra.Command {
	return &cobra.Command{
		Use:                "bench",
		Short:              "Measure docs/PERFORMANCE.md's figures (in the tool build: make build-bench)",
		DisableFlagParsing: true,
		RunE: func(*cobra.Command, []string) error {
			return errors.New("bench: this binary is the product build, without the benches; in a source checkout run `make build-bench` (go build -tags bench) and use that bin/benchline (docs/PERFORMANCE.md)")
		},
	}
}
