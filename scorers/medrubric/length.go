package medrubric

import (
	"github.com/benchline/benchline/internal/judge"
	"unicode"
	"unicode/utf8"
)

// DefaultWordLimit is the word limit of the length-limited mode,
// QuarkMedBench's ≤1000-word setting.
const DefaultWordLimit = 1000

// words calls fn with the byte offset just past the end of each word of s,
// in order, until fn returns false. A word is a CJK character, or a maximal
// run of characters that are neither white space nor CJK and that holds at
// least one letter or digit (so "dose.", "5mg" and "COVID-19" are one word
// each; a lone "-" or a run of CJK punctuation such as "，" is none).
func words(s string, fn func(end int) bool) {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case unicode.IsSpace(r):
			i += size
		case judge.IsCJK(r):
			i += size
			if !fn(i) {
				return
			}
		default:
			hasAlnum := false
			for i < len(s) {
				r, size = utf8.DecodeRuneInString(s[i:])
				if unicode.IsSpace(r) || judge.IsCJK(r) {
					break
				}
				hasAlnum = hasAlnum || unicode.IsLetter(r) || unicode.IsDigit(r)
				i += size
			}
			if hasAlnum && !fn(i) {
				return
			}
		}
	}
}

// CountWords counts the words of s as the length-limited mode does: white
// space separated tokens with a letter or digit, and each CJK character
// (so English counts like a word processor, Chinese by characters).
func CountWords(s string) int {
	n := 0
	words(s, func(int) bool { n++; return true })
	return n
}

// Truncate returns answer cut just after its limit-th word (keeping the
// text before it exactly, punctuation attached to that word included), the
// number of words of the whole answer, and whether it was cut. A limit of 0
// or less means no limit.
//
// The length-limited mode judges the truncated answer: what a reader held
// to the limit would see. Points the answer makes after the limit earn
// nothing, and pitfalls after it do not trip the breaker.
func Truncate(answer string, limit int) (kept string, n int, cut bool) {
	end := len(answer)
	words(answer, func(e int) bool {
		n++
		if limit > 0 && n == limit {
			end = e
		}
		return true
	})
	if limit <= 0 || n <= limit {
		return answer, n, false
	}
	return answer[:end], n, true
}
