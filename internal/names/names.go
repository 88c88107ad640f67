// Package names is the one parser of the names users give benchline:
// dataset references (NAME, NAME@latest, NAME@VERSION), run ids and board
// names. Every command checks its names here before it calls anything, and
// the activities check them again (a workflow may be started by another
// client), so a name such as "../runs/x" is refused at once as bad input,
// never turned into an object key.
package names

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// ErrInvalid is wrapped by every error of a name that breaks its rule.
var ErrInvalid = errors.New("invalid name")

var (
	// nameRE: a dataset or board name: letters, digits, '_' and '-',
	// starting with a letter or digit; no '.', '/' or '@'.
	nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$`)
	// versionRE: a version id (hex, with or without its leading v).
	versionRE = regexp.MustCompile(`^v?[A-Za-z0-9_-]{1,64}$`)
	// runRE: a run id (r and 15 hex digits today; older forms allowed).
	runRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$`)
)

func invalid(kind, s, want string) error {
	return fmt.Errorf("%s %q: %w: want %s", kind, s, ErrInvalid, want)
}

// Name checks a dataset, benchmark or board name; kind names it in errors
// ("dataset", "board").
func Name(kind, s string) error {
	if !nameRE.MatchString(s) {
		return invalid(kind, s, "letters, digits, '_' and '-', starting with a letter or digit, at most 128")
	}
	return nil
}

// ParseRef splits a dataset reference NAME, NAME@latest or NAME@VERSION
// into the name and the version ("" or "latest" for the latest; a
// leading v is dropped), after checking both.
func ParseRef(ref string) (name, version string, err error) {
	name, version, hasAt := strings.Cut(ref, "@")
	if err := Name("dataset", name); err != nil {
		return "", "", fmt.Errorf("dataset reference %q: %w", ref, err)
	}
	if hasAt && version != "latest" && !versionRE.MatchString(version) {
		return "", "", fmt.Errorf("dataset reference %q: %w", ref,
			invalid("version", version, "latest or a version id such as v1a2b3c4d5e6f7a8b"))
	}
	return name, strings.TrimPrefix(version, "v"), nil
}

// RunID checks a run id.
func RunID(id string) error {
	if !runRE.MatchString(id) {
		return invalid("run id", id, "a run id such as r0123456789abcde")
	}
	return nil
}
