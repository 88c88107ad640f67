package reporteval

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// Oracles. Every judge request the task makes carries the reply a
// deterministic oracle would give (judge.Request.Oracle): the baseline
// judges answer from it (baseline/judge verbatim, judge-yes at the top of
// every scale, judge-noisy-<p> moved at random, judge-malformed-<p>
// broken), so the whole path runs offline; real judges never receive it.
// Each oracle sees exactly what its judge sees. The rules:
//
//   - quality (QualityOracle): five features of the report, each mapped
//     to 0–4 by fixed steps (see QualityFeatures);
//   - redundancy (RedundancyOracle): the word overlap of the two sections
//     (WordOverlap), mapped to 0–4 by RepetitionScore;
//   - a fact check, or a checker's check (FactOracle): the claim's numbers
//     must all be in the source, and most of its words;
//   - the proposer (ClaimsOracle): each cited sentence, without its
//     heading lines and citation marks, is one claim with its references.

// MinWordLetters is the shortest word WordOverlap and the fact oracle
// count: shorter words are mostly function words.
const MinWordLetters = 4

// Words returns the set of words of text with at least MinWordLetters
// letters, lower-cased; a word is a run of Unicode letters.
func Words(text string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) }) {
		if len([]rune(w)) >= MinWordLetters {
			set[w] = true
		}
	}
	return set
}

// WordOverlap is the Jaccard similarity of the sets of Words of a and b:
// shared words over words in either, 0 when neither has any. It is the
// redundancy oracle's measure of restated content.
func WordOverlap(a, b string) float64 {
	wa, wb := Words(a), Words(b)
	inter := 0
	for w := range wa {
		if wb[w] {
			inter++
		}
	}
	union := len(wa) + len(wb) - inter
	if union == 0 {
		return 0
	}
	return float64(inter) / float64(union)
}

// steps returns how many of the thresholds v reaches: 0 to len(thresholds).
func steps(v float64, thresholds ...float64) int {
	n := 0
	for _, t := range thresholds {
		if v >= t {
			n++
		}
	}
	return n
}

// RepetitionScore maps the word overlap of two sections to the redundancy
// scale (4: no repetition): below 0.10 → 4, below 0.20 → 3, below 0.35 →
// 2, below 0.50 → 1, else 0.
func RepetitionScore(overlap float64) int {
	return ScaleMax - steps(overlap, 0.10, 0.20, 0.35, 0.50)
}

// RedundancyOracle is the redundancy oracle's reply for a pair of
// sections: RepetitionScore of their WordOverlap, the shared words (at
// most 12, sorted) as the repetitions found.
func RedundancyOracle(a, b string) RedundancyReply {
	o := WordOverlap(a, b)
	wa, wb := Words(a), Words(b)
	shared := []string{}
	for w := range wa {
		if wb[w] {
			shared = append(shared, w)
		}
	}
	slices.Sort(shared)
	if len(shared) > 12 {
		shared = shared[:12]
	}
	reps := make([]json.RawMessage, len(shared))
	for i, w := range shared {
		reps[i] = mustJSON(w)
	}
	s := RepetitionScore(o)
	return RedundancyReply{
		Score:       Score(s),
		Explanation: fmt.Sprintf("word-overlap rule: the passages share %.2f of their words of %d+ letters (Jaccard), which maps to %d", o, MinWordLetters, s),
		Repetitions: reps,
		Confidence:  mustJSON("100%"),
	}
}

// QualityFeatures are what the quality oracle reads of a report.
type QualityFeatures struct {
	// Words counts the report's white-space separated words.
	Words int `json:"words"`
	// Sections counts its "## " heading lines.
	Sections int `json:"sections"`
	// Sources counts the distinct URLs its cited sentences cite
	// (Citations).
	Sources int `json:"sources"`
	// Overlap is the largest WordOverlap between two of its candidate
	// sections (Sections); 0 with fewer than two.
	Overlap float64 `json:"overlap"`
}

// FeaturesOf reads a report's QualityFeatures.
func FeaturesOf(report string) QualityFeatures {
	f := QualityFeatures{Words: len(strings.Fields(report)), Sections: len(headingLines(report))}
	_, claims := Citations(report)
	urls := map[string]bool{}
	for _, c := range claims {
		for _, u := range c.URLs {
			urls[u] = true
		}
	}
	f.Sources = len(urls)
	_, cands := Sections(report)
	for i := range cands {
		for j := i + 1; j < len(cands); j++ {
			f.Overlap = math.Max(f.Overlap, WordOverlap(cands[i], cands[j]))
		}
	}
	return f
}

// Scores maps the features to the five criteria, in Criteria's order:
//
//   - comprehensiveness by words: below 100 → 0, 300 → 1, 600 → 2,
//     1000 → 3, else 4;
//   - coherence by sections: 0 → 0, 1–2 → 1, 3–4 → 2, 5–6 → 3, 7 or
//     more → 4;
//   - clarity: the lower of coherence and RepetitionScore(Overlap), so a
//     report repeating itself loses clarity and one without structure
//     has none;
//   - insightfulness (material integration) by sources cited: 0 → 0,
//     1 → 1, 2–3 → 2, 4–5 → 3, 6 or more → 4;
//   - overall: the mean of the four, rounded half up.
func (f QualityFeatures) Scores() []int {
	comp := steps(float64(f.Words), 100, 300, 600, 1000)
	coh := steps(float64(f.Sections), 1, 3, 5, 7)
	clar := min(coh, RepetitionScore(f.Overlap))
	ins := steps(float64(f.Sources), 1, 2, 4, 6)
	overall := int(math.Floor(float64(comp+coh+clar+ins)/4 + 0.5))
	return []int{comp, coh, clar, ins, overall}
}

// QualityOracle is the quality oracle's reply for a report.
func QualityOracle(report string) QualityReply {
	f := FeaturesOf(report)
	s := f.Scores()
	reason := fmt.Sprintf("feature rule: %d words, %d sections, %d sources cited, closest sections overlap %.2f", f.Words, f.Sections, f.Sources, f.Overlap)
	return QualityReply{Reason: mustJSON(reason), Comprehensiveness: Score(s[0]), Coherence: Score(s[1]),
		Clarity: Score(s[2]), Insightfulness: Score(s[3]), Overall: Score(s[4])}
}

// numberRE finds the numbers of a text: digits, with "," or "." between
// groups ("1,000", "3.5"); a "," between digits is a thousands separator
// and dropped.
var numberRE = regexp.MustCompile(`\p{Nd}+(?:[.,]\p{Nd}+)*`)

// numbers returns the set of numbers of text (thousands separators
// dropped).
func numbers(text string) map[string]bool {
	set := map[string]bool{}
	for _, n := range numberRE.FindAllString(text, -1) {
		set[strings.ReplaceAll(n, ",", "")] = true
	}
	return set
}

// Thresholds of the fact oracle: the share of a claim's word stems found
// in the source for "fully" and "partially supported".
const (
	FactSupported = 0.5
	FactPartial   = 0.3
)

// StemLetters is the fact oracle's crude stemmer: a word is compared by
// its first StemLetters letters ("aerobic" and "aerobically" agree).
const StemLetters = 5

// stems returns the stems of the Words of text.
func stems(text string) map[string]bool {
	out := map[string]bool{}
	for w := range Words(text) {
		if r := []rune(w); len(r) > StemLetters {
			w = string(r[:StemLetters])
		}
		out[w] = true
	}
	return out
}

// sourceSentenceRE splits a source into sentences for the oracle's
// sentence_support.
var sourceSentenceRE = regexp.MustCompile(`[^.!?。\n]+[.!?。]?`)

// FactOracle is the fact oracle's reply for a claim (citation marks are
// ignored) against the text of its source:
//
//   - -1 when the claim has a number the source does not (the date or
//     count a contradicted claim gets wrong);
//   - else, with s the share of the claim's word stems (stems: the first
//     StemLetters letters of its Words) found in the source's: 1 when s ≥
//     FactSupported, 0 when s ≥ FactPartial, else -1 (a claim without
//     words is 0).
//
// sentence_support is the source sentence sharing the most stems with the
// claim.
func FactOracle(claim, source string) FactReply {
	text := StripCitations(claim)
	srcNums := numbers(source)
	var missing []string
	for n := range numbers(text) {
		if !srcNums[n] {
			missing = append(missing, n)
		}
	}
	slices.Sort(missing)
	cw, sw := stems(text), stems(source)
	found := 0
	for w := range cw {
		if sw[w] {
			found++
		}
	}
	label := 0
	switch share := float64(found) / float64(max(len(cw), 1)); {
	case len(missing) > 0:
		label = -1
	case len(cw) == 0:
	case share >= FactSupported:
		label = 1
	case share < FactPartial:
		label = -1
	}
	best, bestN := "", -1
	for _, s := range sourceSentenceRE.FindAllString(source, -1) {
		n := 0
		for w := range stems(s) {
			if cw[w] {
				n++
			}
		}
		if n > bestN {
			best, bestN = strings.TrimSpace(s), n
		}
	}
	support := best
	if len(missing) > 0 {
		support = fmt.Sprintf("the source does not give %s; closest: %s", strings.Join(missing, ", "), best)
	}
	return FactReply{IsFactual: Score(label), SentenceSupport: mustJSON(support)}
}

// ClaimsOracle is the proposer oracle's reply for a report: each cited
// sentence (Citations), without its heading lines and citation marks, is
// one claim citing its references. It never proposes what
// ProposedClaims.Validate rejects: a sentence that ends inside a heading
// line (a table whose cells cite, then the next section's heading with a
// period in it, "... of the U.") has nothing after that heading, so its
// claim is its lines other than headings; one left empty even so (only
// citation marks and headings) is not proposed.
func ClaimsOracle(report string) ProposedClaims {
	_, cited := Citations(report)
	out := ProposedClaims{Claims: []ProposedClaim{}}
	for _, c := range cited {
		text := proposedClaim(c.Sentence)
		if text == "" {
			continue
		}
		refs := append([]int{}, c.Refs...)
		out.Claims = append(out.Claims, ProposedClaim{Claim: text, Refs: refs})
	}
	return out
}

// proposedClaim is the claim the proposer oracle makes of a cited
// sentence: ClaimText without citation marks, or, when that is empty (the
// sentence ends in a heading line), the sentence's lines that are not
// headings; "" when nothing is left.
func proposedClaim(sentence string) string {
	if s := strings.TrimSpace(StripCitations(ClaimText(sentence))); s != "" {
		return s
	}
	var body []string
	for _, l := range strings.Split(sentence, "\n") {
		if !strings.HasPrefix(strings.TrimLeft(l, " \t"), "#") {
			body = append(body, l)
		}
	}
	return strings.TrimSpace(StripCitations(pyStrip(strings.Join(body, "\n"))))
}

// mustJSON encodes a value of this package's reply types (strings,
// numbers and slices of them), which cannot fail.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("reporteval: encode %T: %v", v, err))
	}
	return b
}
