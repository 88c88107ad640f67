package lmeval

import (
	"fmt"
	"strings"
	"time"
	"unicode"

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
	// multi_choice_regex's step 1 (besides re, group and fallback)
	ignoreCase, ignorePunct bool
	ignore                  []*regexp2.Regexp
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
		"take_first_k":       {"k"},
		"multi_choice_regex": {"regex_pattern", "group_select", "fallback", "ignore_case", "ignore_punctuation", "regexes_to_ignore"},
	}
	params, ok := allowed[f.Function]
	if !ok {
		return f, fmt.Errorf("function %q is not supported: regex, multi_choice_regex, take_first, take_first_k, lowercase, uppercase, remove_whitespace, majority_vote and map are", f.Function)
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
	case "regex", "multi_choice_regex":
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
		if f.Function == "regex" {
			break
		}
		for k, dst := range map[string]*bool{"ignore_case": &f.ignoreCase, "ignore_punctuation": &f.ignorePunct} {
			if v, ok := raw[k]; ok && v.Decode(dst) != nil {
				return f, fmt.Errorf("%s: want true or false", k)
			}
		}
		if v, ok := raw["regexes_to_ignore"]; ok && v.Tag != "!!null" {
			var res []string
			if err := v.Decode(&res); err != nil {
				return f, fmt.Errorf("regexes_to_ignore: want a list of patterns")
			}
			for _, p := range res {
				re, err := compileRE(p)
				if err != nil {
					return f, fmt.Errorf("regexes_to_ignore %q: %v", p, err)
				}
				f.ignore = append(f.ignore, re)
			}
		}
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
// gives its answer, as lm-eval's filters do; doc is the row
// (multi_choice_regex reads its choices).
func (p Pipeline) Apply(replies []string, doc map[string]any) (string, error) {
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
		case "multi_choice_regex":
			mc, err := f.choiceRegexes(doc)
			if err != nil {
				return "", err
			}
			for i := range resps {
				out, err := f.multiChoice(mc, resps[i])
				if err != nil {
					return "", err
				}
				resps[i] = out
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

// findAll is re.findall's matches of re in s, bounded.
func findAll(re *regexp2.Regexp, s string) ([]*regexp2.Match, error) {
	var found []*regexp2.Match
	tooMany := false
	err := taskfile.MatchWithin(MatchTimeout, func() error {
		found, tooMany = found[:0], false
		m, err := re.FindStringMatch(s)
		for ; err == nil && m != nil; m, err = re.FindNextMatch(m) {
			found = append(found, m)
			if len(found) > MaxMatches {
				tooMany = true
				return nil
			}
		}
		return err
	})
	if tooMany {
		return nil, fmt.Errorf("lmeval: regex %s: the reply has more than %d matches, the limit", re.String(), MaxMatches)
	}
	if err != nil {
		return nil, fmt.Errorf("lmeval: regex %s: %w", re.String(), err)
	}
	return found, nil
}

// extract is lm-eval's regex filter: re.findall, the group_select'th
// match (negative from the end); of a match with several groups the first
// non-empty one; stripped; fallback when nothing matches.
func (f Filter) extract(s string) (string, error) {
	m, ok, err := f.selected(f.re, s)
	switch {
	case err != nil:
		return "", err
	case !ok:
		return f.fallback, nil
	}
	return pyStrip(m), nil
}

// selected is what lm-eval's regex filters take of re.findall(re, s): the
// group_select'th match (negative from the end), of a match with several
// groups the first non-empty one; ok is false when nothing matches or
// every group of the match is empty.
func (f Filter) selected(re *regexp2.Regexp, s string) (m string, ok bool, err error) {
	found, err := findAll(re, s)
	if err != nil || len(found) == 0 {
		return "", false, err
	}
	i := f.group
	if i < 0 {
		i += len(found)
	}
	if i < 0 || i >= len(found) {
		return "", false, fmt.Errorf("lmeval: group_select %d: the reply has %d matches (lm-eval fails with IndexError here)", f.group, len(found))
	}
	g := found[i].Groups()
	switch len(g) {
	case 1:
		return g[0].String(), true, nil
	case 2:
		return g[1].String(), true, nil
	}
	for _, x := range g[1:] {
		if x.String() != "" {
			return x.String(), true, nil
		}
	}
	return "", false, nil
}

// pyStrip is Python's str.strip(): Unicode whitespace and the separators
// \x1c-\x1f.
func pyStrip(s string) string {
	return strings.TrimFunc(s, pySpace)
}

// pySpaceClass is Python's \s in a str pattern (the characters
// str.isspace says are white space) as a regexp2 class's contents.
const pySpaceClass = `\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000`

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

// choiceSet is multi_choice_regex's regexes for one document: its choices
// (filtered as the replies are, escaped, one alternation) to their letters
// in parentheses, and ":" then a letter.
type choiceSet struct {
	choices, letters *regexp2.Regexp
	toLetter         map[string]string
	parenthesised    map[string]string
}

// choiceRegexes builds lm-eval's MultiChoiceRegexFilter's fallback
// regexes from the document's choices column.
func (f Filter) choiceRegexes(doc map[string]any) (*choiceSet, error) {
	list, ok := doc["choices"].([]any)
	if !ok {
		return nil, fmt.Errorf("lmeval: multi_choice_regex reads the row's choices column, a list of strings: the row has %s", describe(doc["choices"]))
	}
	cs := &choiceSet{toLetter: map[string]string{}, parenthesised: map[string]string{}}
	var alts, letters []string
	next := 'A'
	for _, x := range list {
		c, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("lmeval: multi_choice_regex: the row's choices hold %s, not a string", describe(x))
		}
		m, err := f.ignores(pyStrip(c))
		if err != nil {
			return nil, err
		}
		alts = append(alts, regexp2.Escape(m))
		cs.toLetter[m] = "(" + string(next) + ")"
		letters = append(letters, string(next))
		cs.parenthesised[string(next)] = "(" + string(next) + ")"
		next++
	}
	var err error
	if cs.choices, err = compileRE(strings.Join(alts, "|")); err != nil {
		return nil, fmt.Errorf("lmeval: multi_choice_regex: the row's choices: %v", err)
	}
	if cs.letters, err = compileRE(`:[` + pySpaceClass + `]*(` + strings.Join(letters, "|") + `)`); err != nil {
		return nil, fmt.Errorf("lmeval: multi_choice_regex: %d choices: %v", len(list), err)
	}
	return cs, nil
}

func describe(v any) string {
	if v == nil {
		return "none"
	}
	return fmt.Sprintf("a %T", v)
}

// ignores is MultiChoiceRegexFilter's filter_ignores: regexes_to_ignore
// removed, then lower case, then Unicode punctuation (category P) removed.
func (f Filter) ignores(s string) (string, error) {
	var err error
	for _, re := range f.ignore {
		if s, err = replaceWithin(re, s); err != nil {
			return "", fmt.Errorf("lmeval: regexes_to_ignore %s: %w", re.String(), err)
		}
	}
	if f.ignoreCase {
		s = strings.ToLower(s)
	}
	if f.ignorePunct {
		s = strings.Map(func(r rune) rune {
			if unicode.IsPunct(r) {
				return -1
			}
			return r
		}, s)
	}
	return s, nil
}

// findMatch is MultiChoiceRegexFilter's find_match: the group_select'th
// of re.findall's matches, of a match with several groups the first
// non-empty one ("" when none is), stripped and converted; "" when
// nothing matches.
func (f Filter) findMatch(re *regexp2.Regexp, s string, convert map[string]string) (string, error) {
	m, ok, err := f.selected(re, s)
	if err != nil || !ok {
		return "", err
	}
	m = pyStrip(m)
	if v, ok := convert[m]; ok && m != "" {
		m = v
	}
	return m, nil
}

// multiChoice is MultiChoiceRegexFilter on one reply: regex_pattern; else
// the choices' text in the filtered reply, as its letter in parentheses;
// else ":" and a letter; else the fallback.
func (f Filter) multiChoice(cs *choiceSet, s string) (string, error) {
	m, err := f.findMatch(f.re, s, nil)
	if err != nil || m != "" {
		return m, err
	}
	filtered, err := f.ignores(s)
	if err != nil {
		return "", err
	}
	if m, err = f.findMatch(cs.choices, filtered, cs.toLetter); err != nil || m != "" {
		return m, err
	}
	if m, err = f.findMatch(cs.letters, s, cs.parenthesised); err != nil || m != "" {
		return m, err
	}
	return f.fallback, nil
}
