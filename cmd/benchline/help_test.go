package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// walk calls fn for cmd and every command under it.
func walk(cmd *cobra.Command, fn func(*cobra.Command)) {
	fn(cmd)
	for _, c := range cmd.Commands() {
		walk(c, fn)
	}
}

// TestFlagHelpHasNoStrayValueNames checks every flag of every command: pflag
// takes a `backquoted` word in a usage string as the flag's value name, so
// a quoted command became "--no-worker benchline worker" in dev --help
// (finding 9). A value name must be one word.
func TestFlagHelpHasNoStrayValueNames(t *testing.T) {
	walk(newRootCmd(), func(cmd *cobra.Command) {
		check := func(f *pflag.Flag) {
			name, usage := pflag.UnquoteUsage(f)
			if strings.ContainsAny(name, " \t") {
				t.Errorf("%s --%s: help shows value name %q (usage %q): backquotes in a usage string name the value", cmd.CommandPath(), f.Name, name, usage)
			}
		}
		cmd.LocalFlags().VisitAll(check)
		cmd.PersistentFlags().VisitAll(check)
	})
}
