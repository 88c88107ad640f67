package bfcl

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/source"
)

// Cat is one category of a BFCL data folder that a build reads: its
// question file and, when present, its possible-answer file (names
// relative to the folder).
type Cat struct {
	Name     string // the v4 category name, e.g. simple_python
	Question string
	Answer   string // "" when the folder has none
}

// Layout is what a BFCL data folder holds, as gorilla publishes it
// (berkeley-function-call-leaderboard/bfcl_eval/data): the categories a
// build reads, and the counts of what it leaves out (datasets.SkipItems,
// datasets.SkipFile), for the plan's Stats.
type Layout struct {
	Cats  []Cat
	Stats map[string]int64
}

// nameRE matches a question file at the top of the folder, in the v4
// naming (BFCL_v4_<category>.json) or the v3 one.
var nameRE = regexp.MustCompile(`^BFCL_v([34])_([a-z_]+)\.json$`)

// v3Names maps v3 category names that v4 renamed.
var v3Names = map[string]string{"simple": "simple_python", "java": "simple_java", "javascript": "simple_javascript"}

// CategoryOf returns the v4 category of a question file's name
// (BFCL_v4_<category>.json, or its v3 name), or false for other names.
func CategoryOf(name string) (string, bool) {
	m := nameRE.FindStringSubmatch(name)
	if m == nil {
		return "", false
	}
	if m[1] == "3" && v3Names[m[2]] != "" {
		return v3Names[m[2]], true
	}
	return m[2], true
}

// notCategories are files named like a category's that are not one: in
// v4, BFCL_v4_format_sensitivity.json is a JSON object listing ids of
// other categories to re-ask in other formats.
var notCategories = map[string]bool{"format_sensitivity": true}

// Group is the name under which skipped items of category cat are
// counted: multi_turn_* are counted together.
func Group(cat string) string {
	if strings.HasPrefix(cat, "multi_turn") {
		return "multi_turn"
	}
	return cat
}

// Supported reports whether benchline builds category cat (one of
// Categories).
func Supported(cat string) bool {
	for _, c := range Categories {
		if c == cat {
			return true
		}
	}
	return false
}

// Scan reads the layout of a BFCL data folder at loc. keep decides which
// supported categories the build reads (nil: all); for the others it gives
// the reason they are skipped. Categories benchline does not support
// (multi-turn, memory, web search, any other) and files that are not
// categories are skipped and counted, never fatal; other files and
// subfolders (README.md, multi_turn_func_doc/, ...) are ignored. Where loc
// cannot be listed (plain http URLs), the names gorilla has published are
// probed (Published), so such a build reads and skips what a build of the
// same folder on disk does. A supported category whose items need possible
// answers and has no possible-answer file is an *datasets.InputError.
func Scan(ctx context.Context, loc source.Location, keep func(cat string) (bool, string)) (Layout, error) {
	l := Layout{Stats: map[string]int64{}}
	if keep == nil {
		keep = func(string) (bool, string) { return true, "" }
	}
	names, err := loc.List(ctx)
	if errors.Is(err, source.ErrNotListable) {
		names, err = probe(ctx, loc)
	}
	if err != nil {
		return l, err
	}
	has := map[string]bool{}
	for _, n := range names {
		has[n] = true
	}
	type file struct{ name, ver string }
	questions := map[string]file{} // v4 category -> question file (v4 wins over v3)
	for _, n := range names {
		cat, ok := CategoryOf(n)
		if !ok {
			continue
		}
		ver := nameRE.FindStringSubmatch(n)[1]
		if prev, ok := questions[cat]; ok {
			if prev.ver == "4" {
				datasets.SkipFile(l.Stats, n, "the v4 file "+prev.name+" is read")
				continue
			}
			datasets.SkipFile(l.Stats, prev.name, "the v4 file "+n+" is read")
		}
		questions[cat] = file{n, ver}
	}
	cats := make([]string, 0, len(questions))
	for c := range questions {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	for _, cat := range cats {
		q := questions[cat].name
		switch {
		case notCategories[cat]:
			datasets.SkipFile(l.Stats, q, cat+": not a category")
			continue
		case !Supported(cat):
			n, err := countLines(ctx, loc, q)
			if err != nil {
				return l, err
			}
			datasets.SkipItems(l.Stats, Group(cat), "not supported", n)
			continue
		}
		if ok, reason := keep(cat); !ok {
			n, err := countLines(ctx, loc, q)
			if err != nil {
				return l, err
			}
			datasets.SkipItems(l.Stats, cat, reason, n)
			continue
		}
		c := Cat{Name: cat, Question: q}
		for _, a := range []string{"possible_answer/" + q, "possible_answer/BFCL_v4_" + cat + ".json"} {
			if has[a] {
				c.Answer = a
				break
			}
		}
		if c.Answer == "" && HasGroundTruth(cat) {
			return l, &datasets.InputError{File: loc.URI("possible_answer/" + q),
				Msg: fmt.Sprintf("category %s needs a possible-answer file, and it is missing", cat)}
		}
		l.Cats = append(l.Cats, c)
	}
	// Possible-answer files of no question file are left out, and said.
	for _, n := range names {
		base, ok := strings.CutPrefix(n, "possible_answer/")
		if !ok || strings.Contains(base, "/") {
			continue
		}
		cat, ok := CategoryOf(base)
		if !ok {
			continue
		}
		if _, ok := questions[cat]; !ok {
			reason := "no question file beside it"
			if notCategories[cat] {
				reason = cat + ": not a category"
			}
			datasets.SkipFile(l.Stats, n, reason)
		}
	}
	return l, nil
}

// Published are the category names gorilla's BFCL data folders have held
// question files under, in its v3 and v4 releases (BFCL_v3_<name>.json,
// BFCL_v4_<name>.json). Where a folder cannot be listed (a plain http
// URL), Scan probes both versions' files of each, then the possible
// answers of the question files found. A file of another name is seen
// only where the folder can be listed.
var Published = []string{
	// v4's names of the single-turn categories (Categories) and their v3
	// names.
	"simple_python", "simple_java", "simple_javascript", "simple", "java", "javascript",
	"multiple", "parallel", "parallel_multiple",
	"live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
	"irrelevance", "live_irrelevance", "live_relevance",
	// Categories benchline skips.
	"multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context", "multi_turn_composite",
	"memory", "web_search", "format_sensitivity",
	"exec_simple", "exec_multiple", "exec_parallel", "exec_parallel_multiple", "rest", "sql", "chatable",
	"chatable_unused", "multi_turn_composite_unused", "sql_unused",
}

// probe finds, at a location that cannot be listed, the question files of
// the Published categories and their possible answers, in the form
// loc.List gives.
func probe(ctx context.Context, loc source.Location) ([]string, error) {
	var names []string
	for _, c := range Published {
		names = append(names, "BFCL_v3_"+c+".json", "BFCL_v4_"+c+".json")
	}
	found, err := source.Probe(ctx, loc, names)
	if err != nil {
		return nil, err
	}
	var answers []string
	seen := map[string]bool{}
	for _, q := range found {
		cat, _ := CategoryOf(q)
		for _, a := range []string{"possible_answer/" + q, "possible_answer/BFCL_v4_" + cat + ".json"} {
			if !seen[a] {
				seen[a] = true
				answers = append(answers, a)
			}
		}
	}
	more, err := source.Probe(ctx, loc, answers)
	if err != nil && !errors.Is(err, source.ErrNotFound) {
		return nil, err
	}
	return append(found, more...), nil
}

// countLines counts the items (non-blank lines) of a file that is skipped.
func countLines(ctx context.Context, loc source.Location, name string) (int64, error) {
	rc, err := loc.Open(ctx, name)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	var n int64
	err = datasets.EachLine(rc, loc.URI(name), func(int, []byte) error { n++; return nil })
	return n, err
}
