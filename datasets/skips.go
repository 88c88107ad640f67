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
//	"skipped_item: <id> (<reason>)" = 1, one item left out, named
//	"skipped_files: <name> (<reason>)" = files left out
//
// name is what was skipped (e.g. a BFCL category), reason why (e.g. "not
// supported"); id is an item's own id (e.g. a malformed item of a release).
const (
	skippedItems = "skipped_items: "
	skippedItem  = "skipped_item: "
	skippedFiles = "skipped_files: "
)

// MaxNamedItems is how many skipped items one Stats names one by one
// (SkipItem); past it, items are counted by group and reason, unnamed, so
// a release with many bad items keeps its Stats (and the manifest, the
// card and the build's output) small.
const MaxNamedItems = 20

// SkipItems adds n items of name skipped for reason to stats.
func SkipItems(stats map[string]int64, name, reason string, n int64) {
	stats[skippedItems+name+" ("+reason+")"] += n
}

// SkipItem counts one item, id, skipped for reason (e.g. "malformed ground
// truth") in stats, naming it while fewer than MaxNamedItems items are
// named; past that it is counted under group (e.g. its category) as
// SkipItems does.
func SkipItem(stats map[string]int64, group, id, reason string) {
	named := 0
	for k := range stats {
		if strings.HasPrefix(k, skippedItem) {
			named++
		}
	}
	key := skippedItem + id + " (" + reason + ")"
	if stats[key] == 0 && named >= MaxNamedItems {
		SkipItems(stats, group, reason, 1)
		return
	}
	stats[key]++
}

// SkipFile counts one file named name skipped for reason in stats.
func SkipFile(stats map[string]int64, name, reason string) {
	stats[skippedFiles+name+" ("+reason+")"]++
}

// SkipSummary renders the skip counts of stats in one line, e.g.
// "skipped 1,055 items: memory 155 (not supported), multi_turn 800 (not
// supported), web_search 100 (not supported); skipped files:
// format_sensitivity (not a category)", or "" when nothing was skipped.
// An item named by SkipItem shows as "<id> (<reason>)", among the others
// in order of name.
func SkipSummary(stats map[string]int64) string {
	type entry struct{ name, text string }
	var items []entry
	var files []string
	var total int64
	keys := make([]string, 0, len(stats))
	for k := range stats {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if rest, ok := strings.CutPrefix(k, skippedItems); ok {
			name, reason := splitReason(rest)
			items = append(items, entry{name, fmt.Sprintf("%s %s (%s)", name, catalog.Thousands(stats[k]), reason)})
			total += stats[k]
		} else if rest, ok := strings.CutPrefix(k, skippedItem); ok {
			name, reason := splitReason(rest)
			text := fmt.Sprintf("%s (%s)", name, reason)
			if stats[k] > 1 {
				text = fmt.Sprintf("%s x%d (%s)", name, stats[k], reason)
			}
			items = append(items, entry{name, text})
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
	sort.SliceStable(items, func(i, j int) bool { return items[i].name < items[j].name })
	texts := make([]string, len(items))
	for i, e := range items {
		texts[i] = e.text
	}
	var parts []string
	if len(items) > 0 {
		parts = append(parts, fmt.Sprintf("skipped %s items: %s", catalog.Thousands(total), strings.Join(texts, ", ")))
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
