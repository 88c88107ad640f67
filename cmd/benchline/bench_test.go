//go:build bench

package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/perf"
)

// TestBenchSelfFiguresNameSubcommands checks that every registry figure that
// runs this executable names a bench subcommand that exists and takes the
// flags it passes.
func TestBenchSelfFiguresNameSubcommands(t *testing.T) {
	for _, f := range perf.Figures {
		if f.Kind != perf.Self {
			continue
		}
		for _, args := range [][]string{f.Args, f.QuickArgs} {
			if args == nil {
				continue
			}
			cmd, rest, err := newRootCmd().Find(args)
			if err != nil || cmd.Name() != args[1] {
				t.Errorf("%s: %v finds %v (%v)", f.Name, args, cmd.CommandPath(), err)
				continue
			}
			if err := cmd.ParseFlags(rest); err != nil {
				t.Errorf("%s: %v: %v", f.Name, args, err)
			}
		}
	}
}

// TestBenchListAndOnly runs `bench --list` and `bench all --list --only`
// through cobra: the output is the registry's list, and --only filters it.
func TestBenchListAndOnly(t *testing.T) {
	run := func(args ...string) (string, error) {
		root := newRootCmd()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(args)
		err := root.Execute()
		return out.String(), err
	}
	got, err := run("bench", "--list")
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := perf.WriteList(&want, perf.Figures, false); err != nil {
		t.Fatal(err)
	}
	if got != want.String() {
		t.Errorf("bench --list:\n%s\nwant:\n%s", got, want.String())
	}
	got, err = run("bench", "all", "--list", "--quick", "--only", "^bfcl-")
	if err != nil {
		t.Fatal(err)
	}
	want.Reset()
	if err := perf.WriteList(&want, perf.Select(perf.Figures, regexp.MustCompile("^bfcl-")), true); err != nil {
		t.Fatal(err)
	}
	if got != want.String() || strings.Count(got, "\n") != 2+3 {
		t.Errorf("bench all --list --quick --only ^bfcl-:\n%s\nwant the three bfcl figures:\n%s", got, want.String())
	}
	if _, err := run("bench", "--only", "no-such-figure"); err == nil || !strings.Contains(err.Error(), "matches no figure") {
		t.Errorf("--only matching nothing: %v", err)
	}
	if _, err := run("bench", "--only", "("); err == nil || !strings.Contains(err.Error(), "--only") {
		t.Errorf("--only with a bad regexp: %v", err)
	}
}
