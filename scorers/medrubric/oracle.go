package medrubric

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/benchline/benchline/internal/judge"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/benchline/benchline/schemas"
)

// Oracles. Every judge request the task makes carries the reply a
// deterministic oracle would give (judge.Request.Oracle): the baseline
// judges answer from it (baseline/judge verbatim, judge-yes biased,
// judge-noisy-<p> noisy, judge-malformed-<p> broken), so the whole path
// runs offline; real judges never receive it. The oracles:
//
//   - a judge's or a checker's: each rubric is met iff the text it judges
//     contains every keyword of the rubric (KeywordsMet); a rubric without
//     keywords is not met. The checker's text is the proposer's claims
//     joined, never the answer: the oracle sees what the checker sees.
//   - the proposer's: the answer split into sentences (SplitClaims).

// VerdictOracle is the keyword rule's Reply for text against rubrics, as
// JSON: the oracle of judge and checker requests.
func VerdictOracle(text string, rubrics []schemas.MedRubric) string {
	r := Reply{Verdicts: make([]RubricVerdict, len(rubrics))}
	for i, ru := range rubrics {
		met := judge.KeywordsMet(text, ru.Keywords)
		reason := "keyword rule: the text contains every keyword " + quoteList(ru.Keywords)
		switch {
		case len(ru.Keywords) == 0:
			reason = "keyword rule: the rubric has no keywords, so it is not met"
		case !met:
			reason = "keyword rule: the text lacks " + quoteList(missingKeywords(text, ru.Keywords))
		}
		r.Verdicts[i] = RubricVerdict{ID: ru.ID, Met: met, Reason: reason}
	}
	return encodeJSON(r)
}

// ClaimsOracle is the proposer's oracle: the answer's sentences as Claims,
// as JSON.
func ClaimsOracle(answer string) string {
	return encodeJSON(Claims{Claims: SplitClaims(answer)})
}

// SplitClaims splits text into sentences, the proposer oracle's atomic
// claims: a sentence ends at a line break, at ".", "!" or "?" followed by
// white space, or at "。", "！", "？" and "；". Leading list markers ("- ",
// "* ", "• ") and surrounding white space are removed; empty sentences
// are dropped. Every keyword inside a sentence survives the split.
func SplitClaims(text string) []string {
	var out []string
	add := func(s string) {
		s = strings.TrimSpace(s)
		for _, m := range []string{"- ", "* ", "• "} {
			s = strings.TrimSpace(strings.TrimPrefix(s, m))
		}
		if s != "" {
			out = append(out, s)
		}
	}
	start := 0
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		end := -1
		switch r {
		case '\n':
			end = i
		case '。', '！', '？', '；':
			end = i + size
		case '.', '!', '?':
			next, _ := utf8.DecodeRuneInString(text[i+size:])
			if i+size == len(text) || unicode.IsSpace(next) {
				end = i + size
			}
		}
		i += size
		if end >= 0 {
			add(text[start:end])
			start = i
		}
	}
	add(text[start:])
	return out
}

func missingKeywords(text string, keywords []string) []string {
	var out []string
	for _, k := range keywords {
		if !judge.ContainsKeyword(text, k) {
			out = append(out, k)
		}
	}
	return out
}

func quoteList(ks []string) string {
	q := make([]string, len(ks))
	for i, k := range ks {
		q[i] = fmt.Sprintf("%q", k)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// encodeJSON encodes v without HTML escaping and without the trailing
// newline. v is one of this package's reply types (strings, booleans and
// slices of them), which cannot fail to encode.
func encodeJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(buf.String(), "\n")
}
