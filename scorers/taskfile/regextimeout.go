package taskfile

import (
	"strings"
	"time"
)

// spuriousTries is how many times MatchWithin runs a call whose timeout
// fired too early to be real.
const spuriousTries = 4

// MatchWithin runs fn, a github.com/dlclark/regexp2 call bounded by budget
// (its MatchTimeout), and returns its error. regexp2 enforces MatchTimeout
// with a coarse shared clock; on a loaded machine the goroutine that moves
// it can be starved and then jump forward, so a match that has only just
// started fails with "match timeout" long before its budget (a known
// regexp2 behaviour). A timeout that fires before half the budget has
// passed is such a one, and fn runs again, at most spuriousTries times in
// all; a timeout after half the budget or more is real and returned, so
// the bound on a pathological pattern holds (at most about twice).
func MatchWithin(budget time.Duration, fn func() error) error {
	for try := 1; ; try++ {
		start := time.Now()
		err := fn()
		if err == nil || try == spuriousTries || !strings.Contains(err.Error(), "match timeout") || time.Since(start) >= budget/2 {
			return err
		}
	}
}
