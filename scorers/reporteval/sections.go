// Package reporteval holds the deterministic parts of
// DeepResearch-ReportEval (HKUDS/DeepResearch-Eval): the section split and
// filters behind its redundancy score, the seeded sampling of section
// pairs, the extraction of cited sentences for its factuality check, and
// the loader of its topics file. The judged parts live elsewhere.
//
// Everything here reproduces the original Python code (judge_score.py,
// Atools.py, judge_fact.py) on Unicode strings: lengths count code points,
// and whitespace is what Python's str.isspace, str.strip and the re
// module's \s accept. Inputs are assumed to be valid UTF-8.
package reporteval

import (
	"strings"
	"unicode/utf8"
)

// MinSectionLength is the original's min_length: sections shorter than
// this many code points (heading line included) are never paired.
const MinSectionLength = 200

// beginningHeading labels the text before the first "## " heading, as the
// original does.
const beginningHeading = "Beginning of the report"

// Sections returns the sections of report from which the original samples
// redundancy pairs, in order, each as its heading line, a newline and its
// body. skipped is true when the original skips the report as too short:
// when splitting the stripped report at blank lines (a newline, any
// whitespace, a newline) leaves at most three non-blank paragraphs.
//
// Otherwise the report is cut at the lines that start with "## " (the
// original's ^## .*$). Each heading's boundary is where str.find first
// finds the heading's text at or after the end of the previous boundary,
// not where the line matched, so a heading whose text also occurs earlier
// (say inside "### Results") cuts there. Text before the first heading
// becomes a section headed "Beginning of the report"; a report that ends
// with its last heading (no text after it, not even a newline) loses that
// last section. Bodies are stripped of surrounding whitespace; a heading
// keeps anything its line holds, a trailing "\r" included. Then, in the
// original's order: the first and last sections are dropped, sections
// containing "https" or shorter than MinSectionLength code points are
// removed, and the first and last of those left are dropped again.
//
// A report with no "## " heading makes the original raise and leave the
// report out of scoring altogether (not as too short): Sections then
// returns false and no sections, as it does for a report whose sections
// are all filtered away.
func Sections(report string) (skipped bool, sections []string) {
	if paragraphsUpTo(report, 4) <= 3 {
		return true, nil
	}
	all := splitSections(report)
	var kept []string
	for _, s := range inner(all) {
		if strings.Contains(s, "https") || !atLeastRunes(s, MinSectionLength) {
			continue
		}
		kept = append(kept, s)
	}
	return false, inner(kept)
}

// inner is Python's s[1:-1]: empty for fewer than three elements.
func inner(s []string) []string {
	if len(s) < 3 {
		return nil
	}
	return s[1 : len(s)-1]
}

// atLeastRunes reports whether s has at least n code points.
func atLeastRunes(s string, n int) bool {
	if len(s) < n { // each code point takes at least one byte
		return false
	}
	if len(s) >= n*utf8.UTFMax {
		return true
	}
	return utf8.RuneCountInString(s) >= n
}

// paragraphsUpTo counts the non-blank pieces of re.split(r'\n\s*\n',
// report.strip()), stopping at limit. The pattern's greedy \s* backtracks
// to the last newline of the whitespace run that follows a newline, so one
// separator spans from a newline to the last newline of that run.
func paragraphsUpTo(report string, limit int) int {
	t := pyStrip(report)
	n, start := 0, 0
	piece := func(p string) {
		if pyStrip(p) != "" {
			n++
		}
	}
	for i := 0; i < len(t) && n < limit; {
		if t[i] != '\n' {
			i++
			continue
		}
		j, lastNL := i+1, -1
		for j < len(t) {
			r, size := utf8.DecodeRuneInString(t[j:])
			if !isPySpace(r) {
				break
			}
			if r == '\n' {
				lastNL = j
			}
			j += size
		}
		if lastNL < 0 {
			i = j // no separator starts at i, nor before j
			continue
		}
		piece(t[start:i])
		start = lastNL + 1
		i = start
	}
	if n < limit {
		piece(t[start:])
	}
	return min(n, limit)
}

// headingLines returns the lines of s that start with "## ", without their
// newline: re.findall(r'^## .*$', s, re.MULTILINE), where only "\n" ends a
// line.
func headingLines(s string) []string {
	var hs []string
	for pos := 0; pos < len(s); {
		end := strings.IndexByte(s[pos:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += pos
		}
		if strings.HasPrefix(s[pos:end], "## ") {
			hs = append(hs, s[pos:end])
		}
		pos = end + 1
	}
	return hs
}

// splitSections is the original's extract_first_level_headings, returning
// its sections_with_headings (nil when there is no heading).
func splitSections(report string) []string {
	hs := headingLines(report)
	if len(hs) == 0 {
		return nil
	}
	out := make([]string, 0, len(hs)+1)
	if first := strings.Index(report, hs[0]); first > 0 {
		out = append(out, beginningHeading+"\n"+pyStrip(report[:first]))
	}
	cur := 0
	for i, h := range hs {
		// Byte offsets stand in for Python's code point offsets: in valid
		// UTF-8 a match can only start on a code point boundary, so both
		// find the same occurrence.
		at := strings.Index(report[cur:], h)
		if at < 0 {
			continue
		}
		at += cur
		if cur > 0 {
			out = append(out, hs[i-1]+"\n"+pyStrip(report[cur:at]))
		}
		cur = at + len(h)
	}
	if cur < len(report) {
		out = append(out, hs[len(hs)-1]+"\n"+pyStrip(report[cur:]))
	}
	return out
}

// isPySpace is Python's str.isspace for one code point, which is also what
// the re module's \s matches in str patterns: the ASCII whitespace
// characters, the separators U+001C to U+001F (which Go's unicode.IsSpace
// leaves out) and Unicode's other spaces.
func isPySpace(r rune) bool {
	switch {
	case r >= '\t' && r <= '\r', r >= 0x1c && r <= ' ':
		return true
	case r < 0x85:
		return false
	}
	switch r {
	case 0x85, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// pyStrip is Python's str.strip() with no argument.
func pyStrip(s string) string { return strings.TrimFunc(s, isPySpace) }
