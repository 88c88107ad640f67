package ifevalcode

import "strings"

// RemoveCppMain removes every top-level definition of main from C++ code,
// as the original does with tree-sitter before appending its own main: a
// function definition that is a direct child of the translation unit (not
// inside a namespace, class, extern "C" block or #if/#ifdef group) whose
// declarator is the plain identifier main. The removed range runs from the
// definition's first token (return type, specifiers, attributes) to its
// closing brace; comments before it and the text after it stay. A
// declaration without a body (int main();) stays, as in the original.
//
// This is a small lexer, not a C++ parser: it skips comments, string,
// character and raw string literals and preprocessor lines, and tracks
// brace, parenthesis and #if depth.
func RemoveCppMain(code string) string {
	s := &cppMainScan{code: code, declStart: -1}
	lineStart := true // only whitespace since the last newline
	n := len(code)
	for i := 0; i < n; {
		c := code[i]
		switch {
		case c == '\n':
			lineStart = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case c == '/' && i+1 < n && code[i+1] == '/':
			i = skipLineComment(code, i)
			continue
		case c == '/' && i+1 < n && code[i+1] == '*':
			i = skipBlockComment(code, i)
			continue
		case c == '#' && lineStart:
			i = s.directive(i)
			continue
		}
		lineStart = false
		if s.braces == 0 && s.parens == 0 && s.declStart < 0 && c != ';' && c != '}' {
			s.declStart = i
		}
		switch {
		case c == '"' || c == '\'':
			i = skipQuoted(code, i)
			s.prevTok = "lit"
		case isRawStringStart(code, i):
			i = skipRawString(code, i)
			s.prevTok = "lit"
		case isIdentStart(c):
			i = s.ident(i)
		default:
			i = s.punct(i)
		}
	}
	return cutSpans(code, s.cuts)
}

// cppSpan is a range of code to cut, [start, end).
type cppSpan struct{ start, end int }

// cppMainScan is RemoveCppMain's lexer state.
type cppMainScan struct {
	code                    string
	cuts                    []cppSpan
	braces, parens, ifDepth int
	declStart               int // first token of the current top-level declaration, or -1
	prevTok                 string
}

// directive skips the preprocessor line at i, tracking #if depth, and
// returns the offset after it.
func (s *cppMainScan) directive(i int) int {
	end := directiveEnd(s.code, i)
	dir := directiveName(s.code[i+1 : end])
	switch {
	case strings.HasPrefix(dir, "if"): // if, ifdef, ifndef
		s.ifDepth++
	case dir == "endif":
		if s.ifDepth > 0 {
			s.ifDepth--
		}
	}
	if s.braces == 0 && s.parens == 0 {
		s.declStart = -1
	}
	return end
}

// ident reads the identifier at i; a top-level definition of main is
// recorded as a cut and skipped. It returns the offset after what it read.
func (s *cppMainScan) ident(i int) int {
	code, n := s.code, len(s.code)
	j := i
	for j < n && isIdentChar(code[j]) {
		j++
	}
	word := code[i:j]
	if word == "main" && s.braces == 0 && s.parens == 0 && s.ifDepth == 0 &&
		s.prevTok != "::" && s.prevTok != "." && s.prevTok != "->" {
		if open := nextSignificant(code, j); open < n && code[open] == '(' {
			if end, ok := definitionEnd(code, open); ok {
				start := s.declStart
				if start < 0 {
					start = i
				}
				s.cuts = append(s.cuts, cppSpan{start, end})
				s.declStart, s.prevTok = -1, "}"
				return end
			}
		}
	}
	s.prevTok = word
	return j
}

// punct reads the punctuation at i, tracking brace and parenthesis depth
// and where top-level declarations end, and returns the offset after it.
func (s *cppMainScan) punct(i int) int {
	code, n := s.code, len(s.code)
	c := code[i]
	switch c {
	case '{':
		s.braces++
	case '}':
		if s.braces > 0 {
			s.braces--
		}
		if s.braces == 0 && s.parens == 0 {
			s.declStart = -1
		}
	case '(':
		s.parens++
	case ')':
		if s.parens > 0 {
			s.parens--
		}
	case ';':
		if s.braces == 0 && s.parens == 0 {
			s.declStart = -1
		}
	}
	if c == ':' && i+1 < n && code[i+1] == ':' {
		s.prevTok = "::"
		return i + 2
	}
	if c == '-' && i+1 < n && code[i+1] == '>' {
		s.prevTok = "->"
		return i + 2
	}
	s.prevTok = string(c)
	return i + 1
}

// cutSpans returns code without the spans.
func cutSpans(code string, cuts []cppSpan) string {
	if len(cuts) == 0 {
		return code
	}
	var b strings.Builder
	last := 0
	for _, s := range cuts {
		b.WriteString(code[last:s.start])
		last = s.end
	}
	b.WriteString(code[last:])
	return b.String()
}

// definitionEnd is given the '(' after main. It returns the offset after the
// closing brace of the body when a body follows the parameter list (after
// optional trailing tokens such as noexcept or "-> int"), and false when a
// ';' or '=' comes first (a declaration) or the text ends.
func definitionEnd(code string, open int) (int, bool) {
	n := len(code)
	depth := 0
	i := open
	for ; i < n; i++ {
		switch code[i] {
		case '(':
			depth++
		case ')':
			depth--
		case '"', '\'':
			i = skipQuoted(code, i) - 1
			continue
		}
		if depth == 0 {
			break
		}
	}
	if i >= n {
		return 0, false
	}
	i++
	for i < n {
		switch c := code[i]; {
		case c == '{':
			depth := 0
			for j := i; j < n; {
				switch {
				case code[j] == '/' && j+1 < n && code[j+1] == '/':
					j = skipLineComment(code, j)
					continue
				case code[j] == '/' && j+1 < n && code[j+1] == '*':
					j = skipBlockComment(code, j)
					continue
				case code[j] == '"' || code[j] == '\'':
					j = skipQuoted(code, j)
					continue
				case isRawStringStart(code, j):
					j = skipRawString(code, j)
					continue
				case code[j] == '{':
					depth++
				case code[j] == '}':
					depth--
					if depth == 0 {
						return j + 1, true
					}
				}
				j++
			}
			return 0, false
		case c == ';' || c == '=' || c == ',':
			return 0, false
		case c == '/' && i+1 < n && code[i+1] == '/':
			i = skipLineComment(code, i)
		case c == '/' && i+1 < n && code[i+1] == '*':
			i = skipBlockComment(code, i)
		default:
			i++
		}
	}
	return 0, false
}

func skipLineComment(code string, i int) int {
	if j := strings.IndexByte(code[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(code)
}

func skipBlockComment(code string, i int) int {
	if j := strings.Index(code[i+2:], "*/"); j >= 0 {
		return i + 2 + j + 2
	}
	return len(code)
}

// skipQuoted skips a "..." or '...' literal starting at i (a quote).
func skipQuoted(code string, i int) int {
	q := code[i]
	for j := i + 1; j < len(code); j++ {
		switch code[j] {
		case '\\':
			j++
		case q:
			return j + 1
		case '\n':
			return j // unterminated: stop at the line end
		}
	}
	return len(code)
}

// isRawStringStart reports whether a raw string literal (R"delim(, with an
// optional u8/u/U/L prefix) starts at i.
func isRawStringStart(code string, i int) bool {
	if i > 0 && isIdentChar(code[i-1]) {
		return false
	}
	for _, p := range []string{`R"`, `u8R"`, `uR"`, `UR"`, `LR"`} {
		if strings.HasPrefix(code[i:], p) {
			return true
		}
	}
	return false
}

func skipRawString(code string, i int) int {
	q := i + strings.IndexByte(code[i:], '"')
	open := strings.IndexByte(code[q:], '(')
	if open < 0 {
		return len(code)
	}
	delim := code[q+1 : q+open]
	end := strings.Index(code[q+open:], ")"+delim+`"`)
	if end < 0 {
		return len(code)
	}
	return q + open + end + len(delim) + 2
}

// directiveEnd returns the end of the preprocessor line at i, following
// backslash-newline continuations.
func directiveEnd(code string, i int) int {
	for j := i; j < len(code); j++ {
		switch code[j] {
		case '\\':
			if j+1 < len(code) && code[j+1] == '\n' {
				j++
			} else if j+2 < len(code) && code[j+1] == '\r' && code[j+2] == '\n' {
				j += 2
			}
		case '\n':
			return j
		}
	}
	return len(code)
}

func directiveName(s string) string {
	s = strings.TrimLeft(s, " \t")
	j := 0
	for j < len(s) && isIdentChar(s[j]) {
		j++
	}
	return s[:j]
}

func nextSignificant(code string, i int) int {
	for i < len(code) {
		switch c := code[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '/' && i+1 < len(code) && code[i+1] == '/':
			i = skipLineComment(code, i)
		case c == '/' && i+1 < len(code) && code[i+1] == '*':
			i = skipBlockComment(code, i)
		default:
			return i
		}
	}
	return i
}

func isIdentStart(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
}

func isIdentChar(c byte) bool { return isIdentStart(c) || '0' <= c && c <= '9' }
