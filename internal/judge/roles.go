package judge

import (
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
	var out []string
	for _, m := range strings.Split(judges[role], ",") {
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
