package main

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// A flagRule is one check of a parsed flag: ok says the value is usable,
// want what a usable value looks like.
type flagRule struct {
	name string
	ok   bool
	want string
}

// checkFlags returns an error naming every flag whose value breaks its
// rule, before the command does anything.
func checkFlags(cmd *cobra.Command, rules ...flagRule) error {
	var errs []error
	for _, r := range rules {
		if r.ok {
			continue
		}
		v := "?"
		if f := cmd.Flags().Lookup(r.name); f != nil {
			v = f.Value.String()
		}
		errs = append(errs, fmt.Errorf("--%s %s: %s", r.name, v, r.want))
	}
	return errors.Join(errs...)
}

// atLeast is the rule for an integer flag with a floor.
func atLeast(name string, v, min int) flagRule {
	return flagRule{name, v >= min, fmt.Sprintf("want at least %d", min)}
}

// port is the rule for a TCP port flag where 0 picks a free port.
func port(name string, v int) flagRule {
	return flagRule{name, v >= 0 && v <= 65535, "want a port from 1 to 65535, or 0 for a free one"}
}

// positiveSeconds is the rule for a flag of seconds that, when given, must
// be a positive finite number.
func positiveSeconds(cmd *cobra.Command, name string, v float64) flagRule {
	ok := !cmd.Flags().Changed(name) || (v > 0 && !math.IsInf(v, 1) && time.Duration(v*float64(time.Second)) > 0)
	return flagRule{name, ok, "want a positive number of seconds"}
}

// oneOf is the rule for a flag whose values must be among choices.
func oneOf(name string, vs []string, choices ...string) error {
	for _, v := range vs {
		if !slices.Contains(choices, v) {
			if len(choices) > 2 {
				return fmt.Errorf("--%s %q: want one of %s", name, v, orList(choices))
			}
			return fmt.Errorf("--%s %q: want %s", name, v, orList(choices))
		}
	}
	return nil
}

// distinctPorts reports two port flags given the same value (0, a free
// port each, excepted).
func distinctPorts(ports map[string]int) error {
	names := make([]string, 0, len(ports))
	for n := range ports {
		names = append(names, n)
	}
	slices.Sort(names)
	for i, a := range names {
		for _, b := range names[i+1:] {
			if ports[a] == ports[b] && ports[a] != 0 {
				return fmt.Errorf("--%s and --%s are both %d: want a port each", a, b, ports[a])
			}
		}
	}
	return nil
}

// orList renders choices as "a, b or c".
func orList(choices []string) string {
	if len(choices) <= 1 {
		return strings.Join(choices, "")
	}
	return strings.Join(choices[:len(choices)-1], ", ") + " or " + choices[len(choices)-1]
}
