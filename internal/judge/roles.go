package judge

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Panel returns the judge models named for role in a run's judges (role →
// model, e.g. runs.Request.Judges or scorers.Env.Judges). A panel is
// several models for one role, comma separated: {"judge":
// "baseline/judge,baseline/judge-yes"}. Names are trimmed, empty ones and
// repeats dropped (the same model twice would answer the same prompt the
// same way, a fake agreement), and the result is sorted, so that a panel's
// results, and the order its judges are asked and recorded in, do not
// depend on the order the user listed them. A role without models gives
// nil.
func Panel(judges map[string]string, role string) []string {
	return panel(judges[role])
}

// NormalPanel is a panel's normal form as a comma list: the models of the
// comma list as Panel returns them, joined ("" for none). Two lists that
// name the same panel have the same normal form.
func NormalPanel(list string) string {
	return strings.Join(panel(list), ",")
}

// panel parses a comma list of models into a panel (see Panel).
func panel(list string) []string {
	var out []string
	for _, m := range strings.Split(list, ",") {
		if m = strings.TrimSpace(m); m != "" {
			out = append(out, m)
		}
	}
	sort.Strings(out)
	return compact(out)
}

// compact drops adjacent repeats of a sorted list.
func compact(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	out := s[:1]
	for _, v := range s[1:] {
		if v != out[len(out)-1] {
			out = append(out, v)
		}
	}
	return out
}

// The roles of a judged run (runs.Request.Judges, --judge ROLE=MODEL[,MODEL…])
// for tasks with the information-asymmetric mode (MARCH).
const (
	// RoleJudge is the judge: one model, or a panel.
	RoleJudge = "judge"
	// RoleProposer and RoleChecker turn on the information-asymmetric
	// mode: the proposer (one model) splits the judged text into atomic
	// claims, the checker (one model, or a panel) decides from the claims
	// alone, never seeing the text.
	RoleProposer = "proposer"
	RoleChecker  = "checker"
)

// ErrRoles is returned (wrapped) by RolesOf for judge roles a task cannot
// run.
var ErrRoles = errors.New("judge: roles")

// Roles are a run's judges as a task with the information-asymmetric mode
// uses them.
type Roles struct {
	Judges   []string `json:"judges"`
	Proposer string   `json:"proposer,omitempty"`
	Checkers []string `json:"checkers,omitempty"`
}

// RolesOf reads the judge roles of a run: the judge panel (defaultJudge
// when none is named), and for the asymmetric mode exactly one proposer
// and a checker panel, or neither. Any other role is an error, so that a
// misspelt role is not silently ignored.
func RolesOf(judges map[string]string, defaultJudge string) (Roles, error) {
	for role := range judges {
		if role != RoleJudge && role != RoleProposer && role != RoleChecker {
			return Roles{}, fmt.Errorf("%w: unknown role %q (want %s, %s or %s)", ErrRoles, role, RoleJudge, RoleProposer, RoleChecker)
		}
	}
	r := Roles{Judges: Panel(judges, RoleJudge), Checkers: Panel(judges, RoleChecker)}
	if len(r.Judges) == 0 {
		r.Judges = []string{defaultJudge}
	}
	proposers := Panel(judges, RoleProposer)
	switch {
	case len(proposers) > 1:
		return Roles{}, fmt.Errorf("%w: one proposer, not a panel (got %s)", ErrRoles, strings.Join(proposers, ", "))
	case len(proposers) == 1 && len(r.Checkers) == 0:
		return Roles{}, fmt.Errorf("%w: a proposer needs a checker (--judge checker=MODEL)", ErrRoles)
	case len(proposers) == 0 && len(r.Checkers) > 0:
		return Roles{}, fmt.Errorf("%w: a checker needs a proposer (--judge proposer=MODEL)", ErrRoles)
	case len(proposers) == 1:
		r.Proposer = proposers[0]
	}
	return r, nil
}

// Asymmetric reports whether the run has the information-asymmetric mode.
func (r Roles) Asymmetric() bool { return r.Proposer != "" }
