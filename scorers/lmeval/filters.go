package lmeval

import (
	"fmt"
	"strings"
	"time"

	"github.com/benchline/benchline/scorers/taskfile"
	"github.com/dlclark/regexp2"
	"gopkg.in/yaml.v3"
)

// Regular expressions are Python's re as lm-eval writes them, run by
// regexp2 (github.com/dlclark/regexp2), whose default syntax is .NET's:
// like Python it has look-arounds, back-references, $ before a final
// newline and Unicode \d and \w. MatchTimeout bounds one match.
const MatchTimeout = time.Second

// MaxMatches bounds the matches of a regex filter kept for one reply.
const MaxMatches = 100_000

// Pipeline is one filter_list entry: filters applied in order to a row's
// replies, ending with one answer (take_first; majority_vote leaves one).
type Pipeline struct {
	Name    string
	Filters []Filter
}

// Filter is one step of a pipeline.
type Filter struct {
	Function string
	// regex
	re       *regexp2.Regexp
	group    int
	fallback string
	// take_first_k
	k int
	// map
	mapping map[string]string
	deflt   string
}

// Metric is one metric_list entry (exact_match).
type Metric struct {
	Name              string
	IgnoreCase        bool
	IgnorePunctuation bool
	IgnoreNumbers     bool
	ignore            []*regexp2.Regexp
}

func compileRE(pattern string) (*regexp2.Regexp, error) {
	re, err := regexp2.Compile(pattern, regexp2.None)
	if err != nil {
		return nil, err
	}
	re.MatchTimeout = MatchTimeout
	return re, nil
}

func (t *Task) parseFilters(c *Config) error {
	var list []struct {
		Name   string      `yaml:"name"`
		Filter []yaml.Node `yaml:"filter"`
	}
	ok, err := c.decode("filter_list", &list)
	if err != nil {
		return err
	}
	if !ok {
		t.Pipelines = []Pipeline{{Name: "none", Filters: []Filter{{Function: "take_first"}}}}
		return nil
	}
	for i, p := range list {
		pl := Pipeline{Name: p.Name}
		if pl.Name == "" {
			return c.fail(fmt.Sprintf("filter_list[%d].name", i), "is required")
		}
		for j, n := range p.Filter {
			key := fmt.Sprintf("filter_list[%d].filter[%d]", i, j)
			f, err := parseFilter(n)
			if err != nil {
				return c.fail(key, err.Error())
			}
			if j > 0 && pl.Filters[j-1].Function == "take_first" {
				return c.fail(key, fmt.Sprintf("%s follows take_first: lm-eval would run it over the characters of one answer; put take_first last", f.Function))
			}
			pl.Filters = append(pl.Filters, f)
		}
		if len(pl.Filters) == 0 || pl.Filters[len(pl.Filters)-1].Function != "take_first" {
			// lm-eval's majority_vote gives a list of one answer, which
			// its metric would compare as a list.
			return c.fail(fmt.Sprintf("filter_list[%d].filter", i), "must end with take_first (one answer per row; after majority_vote too, as gsm8k-cot-self-consistency has it)")
		}
		t.Pipelines = append(t.Pipelines, pl)
	}
	if len(t.Pipelines) == 0 {
		return c.fail("filter_list", "is empty")
	}
	return nil
}

func parseFilter(n yaml.Node) (Filter, error) {
	var raw map[string]yaml.Node
	if err := n.Decode(&raw); err != nil {
		return Filter{}, fmt.Errorf("want a mapping with a function key")
	}
	var f Filter
	if fn, ok := raw["function"]; !ok || fn.Decode(&f.Function) != nil {
		return f, fmt.Errorf("function: is required")
	}
	allowed := map[string][]string{
		"regex": {"regex_pattern", "group_select", "fallback"}, "take_first": nil, "lowercase": nil,
		"uppercase": nil, "remove_whitespace": nil, "majority_vote": nil, "map": {"mapping_dict", "default_value"},
		"take_first_k": {"k"},
	}
	params, ok := allowed[f.Function]
	if !ok {
		return f, fmt.Errorf("function %q is not supported: regex, take_first, take_first_k, lowercase, uppercase, remove_whitespace, majority_vote and map are", f.Function)
	}
	for k, v := range raw {
		if v.Tag == "!function" {
			return f, fmt.Errorf("%s: !function is Python code; benchline runs no Python", k)
		}
		if k != "function" && !contains(params, k) {
			return f, fmt.Errorf("%s is not a parameter of %s", k, f.Function)
		}
	}
	switch f.Function {
	case "regex":
		pattern := `#### (\-?[0-9\.\,]+)` // lm-eval's default
		f.fallback = "[invalid]"
		if v, ok := raw["regex_pattern"]; ok {
			if err := v.Decode(&pattern); err != nil {
				return f, fmt.Errorf("regex_pattern: want a string")
			}
		}
		if v, ok := raw["group_select"]; ok {
			if err := v.Decode(&f.group); err != nil {
				return f, fmt.Errorf("group_select: want an integer")
			}
		}
		if v, ok := raw["fallback"]; ok {
			if err := v.Decode(&f.fallback); err != nil {
				return f, fmt.Errorf("fallback: want a string")
			}
		}
		re, err := compileRE(pattern)
		if err != nil {
			return f, fmt.Errorf("regex_pattern %q: %v", pattern, err)
		}
		f.re = re
	case "take_first_k":
		v, ok := raw["k"]
		if !ok || v.Decode(&f.k) != nil || f.k < 1 {
			return f, fmt.Errorf("k: a whole number of at least 1 is required")
		}
	case "map":
		md := raw["mapping_dict"]
		if err := md.Decode(&f.mapping); err != nil || f.mapping == nil {
			return f, fmt.Errorf("mapping_dict: want a mapping of strings to strings")
		}
		v, ok := raw["default_value"]
		if !ok || v.Decode(&f.deflt) != nil || v.Tag == "!!null" {
			return f, fmt.Errorf("default_value: a string is required (lm-eval's None is not a reply benchline can compare)")
		}
	}
	return f, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Apply runs the pipeline over one row's replies (one per repeat) and
// gives its answer, as lm-eval's filters do.
func (p Pipeline) Apply(replies []string) (string, error) {
	resps := append([]string(nil), replies...)
	for _, f := range p.Filters {
		switch f.Function {
		case "take_first":
			return resps[0], nil
		case "majority_vote":
			// lm-eval's gives a list of one: the vote.
			resps = []string{majority(resps)}
		case "take_first_k":
			// The translation holds k to at most repeats; fewer replies
			// are one reply's own verdict in a sample's details.
			resps = resps[:min(f.k, len(resps))]
		case "lowercase":
			for i := range resps {
				resps[i] = strings.ToLower(resps[i])
			}
		case "uppercase":
			for i := range resps {
				resps[i] = strings.ToUpper(resps[i])
			}
		case "remove_whitespace":
			for i := range resps {
				resps[i] = pyStrip(resps[i])
			}
		case "map":
			for i := range resps {
				v, ok := f.mapping[resps[i]]
				if !ok {
					v = f.deflt
				}
				resps[i] = v
			}
		case "regex":
			for i := range resps {
				out, err := f.extract(resps[i])
				if err != nil {
					return "", err
				}
				resps[i] = out
			}
		}
	}
	return "", fmt.Errorf("lmeval: pipeline %s gives no single answer", p.Name)
}

// majority is Counter(resps).most_common(1): the most frequent, the first
// seen among equals.
func majority(resps []string) string {
	count := map[string]int{}
	best, n := "", 0
	for _, r := range resps {
		count[r]++
	}
	for _, r := range resps {
		if count[r] > n {
			best, n = r, count[r]
		}
	}
	return best
}

// extract is lm-eval's regex filter: re.findall, the group_select'th
// match (negative from the end); of a match with several groups the first
// non-empty one; stripped; fallback when nothing matches.
func (f Filter) extract(s string) (string, error) {
	var found []*regexp2.Match
	tooMany := false
	err := taskfile.MatchWithin(MatchTimeout, func() error {
		found, tooMany = found[:0], false
		m, err := f.re.FindStringMatch(s)
		for ; err == nil && m != nil; m, err = f.re.FindNextMatch(m) {
			found = append(found, m)
			if len(found) > MaxMatches {
				tooMany = true
				return nil
			}
		}
		return err
	})
	if tooMany {
		return "", fmt.Errorf("lmeval: regex %s: the reply has more than %d matches, the limit", f.re.String(), MaxMatches)
	}
	if err != nil {
		return "", fmt.Errorf("lmeval: regex %s: %w", f.re.String(), err)
	}
	if len(found) == 0 {
		return f.fallback, nil
	}
	i := f.group
	if i < 0 {
		i += len(found)
	}
	if i < 0 || i >= len(found) {
		return "", fmt.Errorf("lmeval: group_select %d: the reply has %d matches (lm-eval fails with IndexError here)", f.group, len(found))
	}
	g := found[i].Groups()
	var out string
	switch len(g) {
	case 1:
		out = g[0].String()
	case 2:
		out = g[1].String()
	default:
		out = f.fallback
		for _, x := range g[1:] {
			if x.String() != "" {
				out = x.String()
				break
			}
		}
	}
	return pyStrip(out), nil
}

// pyStrip is Python's str.strip(): Unicode whitespace and the separators
// \x1c-\x1f.
func pyStrip(s string) string {
	return strings.TrimFunc(s, pySpace)
}

func pySpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0x1c, 0x1d, 0x1e, 0x1f, 0x85, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

func (t *Task) parseMetrics(c *Config) error {
	var list []map[string]yaml.Node
	ok, err := c.decode("metric_list", &list)
	if err != nil {
		return err
	}
	if !ok {
		t.Metrics = []Metric{{Name: "exact_match"}} // lm-eval's default for generate_until
		return nil
	}
	for i, raw := range list {
		key := fmt.Sprintf("metric_list[%d]", i)
		var m Metric
		if v, ok := raw["metric"]; !ok || v.Decode(&m.Name) != nil {
			return c.fail(key+".metric", "is required")
		}
		if m.Name != "exact_match" {
			return c.fail(key+".metric", fmt.Sprintf("%q is not supported: exact_match is (bleu, rouge and others are Python packages' scores)", m.Name))
		}
		for k, v := range raw {
			var err error
			switch k {
			case "metric":
			case "ignore_case":
				err = v.Decode(&m.IgnoreCase)
			case "ignore_punctuation":
				err = v.Decode(&m.IgnorePunctuation)
			case "ignore_numbers":
				err = v.Decode(&m.IgnoreNumbers)
			case "regexes_to_ignore":
				var res []string
				if err = v.Decode(&res); err == nil {
					for _, p := range res {
						re, cerr := compileRE(p)
						if cerr != nil {
							return c.fail(key+".regexes_to_ignore", fmt.Sprintf("%q: %v", p, cerr))
						}
						m.ignore = append(m.ignore, re)
					}
				}
			case "aggregation":
				var a string
				if err = v.Decode(&a); err == nil && a != "mean" {
					return c.fail(key+".aggregation", fmt.Sprintf("%q: only mean is supported", a))
				}
			case "higher_is_better":
				var b bool
				if err = v.Decode(&b); err == nil && !b {
					return c.fail(key+".higher_is_better", "false: exact_match is higher-is-better")
				}
			default:
				return c.fail(key+"."+k, "is not a parameter of exact_match")
			}
			if err != nil {
				return c.fail(key+"."+k, "has the wrong type")
			}
		}
		t.Metrics = append(t.Metrics, m)
	}
	return nil
}

// replaceWithin removes re's matches from s, run again on a spurious
// regexp2 timeout (taskfile.MatchWithin).
func replaceWithin(re *regexp2.Regexp, s string) (string, error) {
	var out string
	err := taskfile.MatchWithin(MatchTimeout, func() (err error) {
		out, err = re.Replace(s, "", -1, -1)
		return err
	})
	return out, err
}

// punctuation is Python's string.punctuation.
const punctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

// Score is exact_match_hf_evaluate on one prediction and reference:
// regexes_to_ignore removed in order, then case, punctuation and digits.
func (m Metric) Score(pred, ref string) (float64, error) {
	var err error
	for _, re := range m.ignore {
		if pred, err = replaceWithin(re, pred); err != nil {
			return 0, fmt.Errorf("lmeval: regexes_to_ignore %s: %w", re.String(), err)
		}
		if ref, err = replaceWithin(re, ref); err != nil {
			return 0, fmt.Errorf("lmeval: regexes_to_ignore %s: %w", re.String(), err)
		}
	}
	if m.IgnoreCase {
		pred, ref = strings.ToLower(pred), strings.ToLower(ref)
	}
	drop := func(set string, s string) string {
		return strings.Map(func(r rune) rune {
			if r < 128 && strings.ContainsRune(set, r) {
				return -1
			}
			return r
		}, s)
	}
	if m.IgnorePunctuation {
		pred, ref = drop(punctuation, pred), drop(punctuation, ref)
	}
	if m.IgnoreNumbers {
		pred, ref = drop("0123456789", pred), drop("0123456789", ref)
	}
	if pred == ref {
		return 1, nil
	}
	return 0, nil
}
