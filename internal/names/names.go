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
	// versionRE: what may follow NAME@: a version id (hex, with or
	// without its leading v) or a tag a build gave with --as (a letter,
	// then letters, digits, '.', '_' and '-'); never '/', and never a
	// leading '.', so neither "." nor ".." can pass.
	versionRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
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

// ParseRef splits a dataset reference NAME, NAME@latest, NAME@VERSION or
// NAME@TAG into the name and what follows the @ ("" or "latest" for the
// latest; a version id keeps its leading v, so that a tag such as
// "variant" is not cut: the catalog drops it when it reads a version),
// after checking both.
func ParseRef(ref string) (name, version string, err error) {
	name, version, hasAt := strings.Cut(ref, "@")
	if err := Name("dataset", name); err != nil {
		return "", "", fmt.Errorf("dataset reference %q: %w", ref, err)
	}
	if hasAt && version != "latest" && !versionRE.MatchString(version) {
		return "", "", fmt.Errorf("dataset reference %q: %w", ref,
			invalid("version", version, "latest, a version id such as v1a2b3c4d5e6f7a8b or a tag given with --as"))
	}
	return name, version, nil
}

// RunID checks a run id.
func RunID(id string) error {
	if !runRE.MatchString(id) {
		return invalid("run id", id, "a run id such as r0123456789abcde")
	}
	return nil
}
