package reporteval

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// pySpaceClass is the body of a character class holding Python's \s (see
// isPySpace); Go's \s is ASCII only and leaves out \v.
const pySpaceClass = `\t-\r\x1c-\x20\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}`

var (
	// citedSentenceRE is the original's extract_numbered_sentences pattern
	// (Atools.py), [^。.!?]*\[\[\d+(?:,\d+)*\]\][^。.!?]*[。.!?], with
	// Python's Unicode \d spelled \p{Nd}. Go's leftmost-first matching
	// picks the same matches as Python's backtracking findall here.
	citedSentenceRE = regexp.MustCompile(`[^。.!?]*\[\[\p{Nd}+(?:,\p{Nd}+)*\]\][^。.!?]*[。.!?]`)
	// citationRE finds the citations of one sentence.
	citationRE = regexp.MustCompile(`\[\[(\p{Nd}+(?:,\p{Nd}+)*)\]\]`)
	// singleCitedSentenceRE and singleCitationRE are benchline's
	// extension (Citations): the same with single brackets, [n] or
	// [n,m,…], where a '.' followed by a digit (a decimal point) does not
	// end a sentence.
	singleCitedSentenceRE = regexp.MustCompile(`(?:[^。.!?]|\.\p{Nd})*\[\p{Nd}+(?:,\p{Nd}+)*\](?:[^。.!?]|\.\p{Nd})*[。.!?]`)
	singleCitationRE      = regexp.MustCompile(`\[(\p{Nd}+(?:,\p{Nd}+)*)\]`)
	// citationMarkRE is a citation mark of either pattern, with the
	// white space before it.
	citationMarkRE = regexp.MustCompile(`[ \t]*\[\[?\p{Nd}+(?:,\p{Nd}+)*\]\]?`)
	// referenceLineRE is a line of the reports' reference list,
	// "[12],https://…" (an empty URL when the source is unknown).
	referenceLineRE = regexp.MustCompile(`(?m)^\[([0-9]+)\],(.*)$`)
	// urlRE is judge_fact.py's normalize_url pattern https?://[^\s)\]]+.
	urlRE = regexp.MustCompile(`https?://[^` + pySpaceClass + `)\]]+`)
)

// A Claim is one cited sentence of a report, with what it cites.
type Claim struct {
	// Sentence is the sentence as the original's pattern matches it (it
	// runs from the previous '.', '!', '?' or '。' and may span lines),
	// with surrounding whitespace stripped; its citation marks are kept.
	Sentence string `json:"sentence"`
	// Refs are the reference numbers cited, in order of first citation,
	// without repeats. Numbers that are not plain ASCII decimal integers
	// (Python's \d also takes other scripts' digits) are left out.
	Refs []int `json:"refs"`
	// URLs are the normalized URLs of those references the report's
	// reference list gives, in the order of Refs, without repeats.
	URLs []string `json:"urls"`
}

// CitedSentences returns the sentences of report that cite references as
// [[n]] or [[n,m,…]], found with the original's pattern, each mapped to the
// URLs of its references. The references are the lines "[n],URL" of the
// report (the form of the reference list under "## Reference" in the
// original's reports; the first line for a number wins), each URL
// normalized with NormalizeURL; a reference with an empty URL, or none,
// gives no URL.
func CitedSentences(report string) []Claim {
	return citedWith(citedSentenceRE, citationRE, report, report)
}

// The citation patterns Citations reports.
const (
	// PatternOriginal is the original's [[n]] pattern (CitedSentences).
	PatternOriginal = "[[n]]"
	// PatternSingle is benchline's extension to single brackets, [n]: the
	// form the bundled Qwen reports and the fixtures use.
	PatternSingle = "[n]"
)

// Citations returns the cited sentences of report and the pattern that
// found them. The original's [[n]] pattern comes first (CitedSentences);
// when it finds no sentence, the same pattern with single brackets, in
// which a decimal point does not end a sentence,
// (?:[^。.!?]|\.\d)*\[\d+(?:,\d+)*\](?:[^。.!?]|\.\d)*[。.!?], is applied to
// the report's body: the text before its first reference-list line "[n],…"
// (whose URLs hold dots that would end sentences inside the list). The references come from
// the whole report in both cases. With no cited sentence either way, the
// pattern is "".
func Citations(report string) (pattern string, claims []Claim) {
	if c := CitedSentences(report); len(c) > 0 {
		return PatternOriginal, c
	}
	body := report
	if loc := referenceLineRE.FindStringIndex(report); loc != nil {
		body = report[:loc[0]]
	}
	if c := citedWith(singleCitedSentenceRE, singleCitationRE, body, report); len(c) > 0 {
		return PatternSingle, c
	}
	return "", nil
}

// ClaimText is the text of a cited sentence that a judge checks: the
// sentence without the Markdown heading lines it runs across (a sentence
// runs back to the previous terminator, so the first sentence of a
// section starts with the section's heading), stripped. Citation marks
// are kept.
func ClaimText(sentence string) string {
	lines := strings.Split(sentence, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(strings.TrimLeft(lines[i], " \t"), "#") {
			return pyStrip(strings.Join(lines[i+1:], "\n"))
		}
	}
	return pyStrip(sentence)
}

// StripCitations removes the citation marks ([n], [[n]], [n,m]) of text.
func StripCitations(text string) string {
	return citationMarkRE.ReplaceAllString(text, "")
}

// citedWith finds the sentences of text matching sentenceRE and reads
// their citations with citeRE, mapping them to the references of report.
func citedWith(sentenceRE, citeRE *regexp.Regexp, text, report string) []Claim {
	matches := sentenceRE.FindAllString(text, -1)
	if len(matches) == 0 {
		return nil
	}
	refs := References(report)
	claims := make([]Claim, 0, len(matches))
	for _, m := range matches {
		c := Claim{Sentence: pyStrip(m)}
		seen := map[int]bool{}
		for _, cite := range citeRE.FindAllStringSubmatch(m, -1) {
			for _, num := range strings.Split(cite[1], ",") {
				n, err := strconv.Atoi(num)
				if err != nil || seen[n] {
					continue
				}
				seen[n] = true
				c.Refs = append(c.Refs, n)
				if u, ok := refs[n]; ok && !slices.Contains(c.URLs, u) {
					c.URLs = append(c.URLs, u)
				}
			}
		}
		claims = append(claims, c)
	}
	return claims
}

// References returns the report's reference list: number → normalized URL,
// from its lines "[n],URL". Lines with an empty URL are left out; when a
// number is listed twice the first line wins.
func References(report string) map[int]string {
	refs := map[int]string{}
	for _, m := range referenceLineRE.FindAllStringSubmatch(report, -1) {
		n, err := strconv.Atoi(m[1])
		if err != nil {
			continue
		}
		if _, dup := refs[n]; dup {
			continue
		}
		if u := NormalizeURL(m[2]); u != "" {
			refs[n] = u
		}
	}
	return refs
}

// NormalizeURL is judge_fact.py's normalize_url: the last match of
// https?://[^\s)\]]+ in raw (so "https://a.com/x](https://a.com/x)", a
// Markdown link, gives "https://a.com/x"), or raw stripped of whitespace
// when nothing matches.
func NormalizeURL(raw string) string {
	all := urlRE.FindAllString(raw, -1)
	if len(all) == 0 {
		return pyStrip(raw)
	}
	return all[len(all)-1]
}

// URLContexts is one line of the original's fact-checking input,
// {"<url>": {"contexts": [...]}}: a source and the sentences to check
// against it alone.
type URLContexts struct {
	URL      string   `json:"url"`
	Contexts []string `json:"contexts"`
}

// ByURL groups claims by source: one entry per URL in order of first
// citation, each with the sentences citing it in report order, without
// repeats. A sentence citing several sources is checked against each on
// its own; claims with no URL are left out.
func ByURL(claims []Claim) []URLContexts {
	var out []URLContexts
	index := map[string]int{}
	for _, c := range claims {
		for _, u := range c.URLs {
			i, ok := index[u]
			if !ok {
				i = len(out)
				index[u] = i
				out = append(out, URLContexts{URL: u})
			}
			if !slices.Contains(out[i].Contexts, c.Sentence) {
				out[i].Contexts = append(out[i].Contexts, c.Sentence)
			}
		}
	}
	return out
}
