package datasets

import (
	"fmt"
	"sort"
	"strings"

	"github.com/benchline/benchline/internal/catalog"
)

// Skipped items and files are counted in a plan's Stats under keys of
// these forms, so that the build result, `dataset show` and the card
// report them the same way (SkipSummary):
//
//	"skipped_items: <name> (<reason>)" = items left out
//	"skipped_files: <name> (<reason>)" = files left out
//
// name is what was skipped (e.g. a BFCL category), reason why (e.g. "not
// supported").
const (
	skippedItems = "skipped_items: "
	skippedFiles = "skipped_files: "
)

// SkipItems adds n items of name skipped for reason to stats.
func SkipItems(stats map[string]int64, name, reason string, n int64) {
	stats[skippedItems+name+" ("+reason+")"] += n
}

// SkipFile counts one file named name skipped for reason in stats.
func SkipFile(stats map[string]int64, name, reason string) {
	stats[skippedFiles+name+" ("+reason+")"]++
}

// SkipSummary renders the skip counts of stats in one line, e.g.
// "skipped 1,055 items: memory 155 (not supported), multi_turn 800 (not
// supported), web_search 100 (not supported); skipped files:
// format_sensitivity (not a category)", or "" when nothing was skipped.
func SkipSummary(stats map[string]int64) string {
	var items, files []string
	var total int64
	keys := make([]string, 0, len(stats))
	for k := range stats {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if rest, ok := strings.CutPrefix(k, skippedItems); ok {
			name, reason := splitReason(rest)
			items = append(items, fmt.Sprintf("%s %s (%s)", name, catalog.Thousands(stats[k]), reason))
			total += stats[k]
		} else if rest, ok := strings.CutPrefix(k, skippedFiles); ok {
			name, reason := splitReason(rest)
			f := fmt.Sprintf("%s (%s)", name, reason)
			if stats[k] > 1 {
				f = fmt.Sprintf("%s x%d (%s)", name, stats[k], reason)
			}
			files = append(files, f)
		}
	}
	var parts []string
	if len(items) > 0 {
		parts = append(parts, fmt.Sprintf("skipped %s items: %s", catalog.Thousands(total), strings.Join(items, ", ")))
	}
	if len(files) > 0 {
		parts = append(parts, "skipped files: "+strings.Join(files, ", "))
	}
	return strings.Join(parts, "; ")
}

func splitReason(s string) (name, reason string) {
	i := strings.LastIndex(s, " (")
	if i < 0 || !strings.HasSuffix(s, ")") {
		return s, ""
	}
	return s[:i], s[i+2 : len(s)-1]
}

// Noter is a Builder whose build counts (a Plan's Stats, a manifest's)
// can hold something its user should be told in the build's output, not
// only in `dataset show`: e.g. reporteval's topics without a report.
type Noter interface {
	// Notes returns the lines to print for stats (none when all is well).
	Notes(stats map[string]int64) []string
}

// BuildNotes returns b's notes about stats, or nil when b is not a Noter.
func BuildNotes(b Builder, stats map[string]int64) []string {
	if n, ok := b.(Noter); ok {
		return n.Notes(stats)
	}
	return nil
}
