package judge

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// KeywordsMet reports whether answer contains every keyword (see
// ContainsKeyword): the rule a lexical judge applies to a rubric's
// keywords, and the oracle the task attaches to its judge requests (see
// Oracle). A rubric without keywords is never met this way.
func KeywordsMet(answer string, keywords []string) bool {
	if len(keywords) == 0 {
		return false
	}
	text := normalise(answer)
	for _, k := range keywords {
		if !containsNormalised(text, normalise(k)) {
			return false
		}
	}
	return true
}

// ContainsKeyword reports whether keyword occurs in text, ignoring case and
// treating any run of white space as one space. Where the keyword starts
// or ends with a letter or digit that is not CJK, the occurrence must not
// continue a word of text on that side: "ice" is not found in "advice", nor
// "iron" in "environment". CJK keywords match anywhere (Chinese has no
// spaces between words).
func ContainsKeyword(text, keyword string) bool {
	return containsNormalised(normalise(text), normalise(keyword))
}

func normalise(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}

func containsNormalised(text, kw string) bool {
	if kw == "" {
		return false
	}
	first, _ := utf8.DecodeRuneInString(kw)
	last, _ := utf8.DecodeLastRuneInString(kw)
	for from := 0; from <= len(text)-len(kw); {
		i := strings.Index(text[from:], kw)
		if i < 0 {
			return false
		}
		start, end := from+i, from+i+len(kw)
		before, _ := utf8.DecodeLastRuneInString(text[:start])
		after, _ := utf8.DecodeRuneInString(text[end:])
		if (start == 0 || !joins(first, before)) && (end == len(text) || !joins(last, after)) {
			return true
		}
		_, size := utf8.DecodeRuneInString(text[start:])
		from = start + size
	}
	return false
}

// joins reports whether the keyword's edge rune k and the neighbouring rune
// n of the text would be one word: both letters or digits, neither CJK.
func joins(k, n rune) bool {
	word := func(r rune) bool {
		return (unicode.IsLetter(r) || unicode.IsDigit(r)) && !IsCJK(r)
	}
	return word(k) && word(n)
}

// IsCJK reports whether r belongs to a script written without spaces
// between words: Han ideographs, Hiragana, Katakana and Hangul. Keywords
// in these scripts match anywhere (ContainsKeyword); medrubric's
// length-limited mode counts each such character as one word.
func IsCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}
