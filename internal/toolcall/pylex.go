package toolcall

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file is a tokenizer for the subset of Python expressions that model
// output in BFCL's Python-call syntax uses.

type tokKind uint8

const (
	tkEOF tokKind = iota
	tkName
	tkInt
	tkFloat
	tkString
	tkOp
)

type token struct {
	kind tokKind
	text string // operator, name, or the literal's source text
	str  string // decoded string value (tkString)
	i    int64
	f    float64
	pos  int
}

var pyKeywords = map[string]bool{
	"and": true, "as": true, "assert": true, "async": true, "await": true, "break": true,
	"class": true, "continue": true, "def": true, "del": true, "elif": true, "else": true,
	"except": true, "finally": true, "for": true, "from": true, "global": true, "if": true,
	"import": true, "in": true, "is": true, "lambda": true, "nonlocal": true, "not": true,
	"or": true, "pass": true, "raise": true, "return": true, "try": true, "while": true,
	"with": true, "yield": true,
}

type lexer struct {
	src   string
	pos   int
	depth int // bracket nesting; newlines are only allowed inside brackets
	toks  []token
}

func lexPython(src string) ([]token, error) {
	lx := &lexer{src: src}
	for {
		t, err := lx.next()
		if err != nil {
			return nil, err
		}
		lx.toks = append(lx.toks, t)
		if t.kind == tkEOF {
			return lx.toks, nil
		}
		if len(lx.toks) > 1<<20 {
			return nil, errors.New("too many tokens")
		}
	}
}

func (lx *lexer) errf(format string, args ...any) error {
	return fmt.Errorf("python syntax at offset %d: %s", lx.pos, fmt.Sprintf(format, args...))
}

func isIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }
func isIdentCont(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r) || unicode.Is(unicode.Pc, r)
}

func (lx *lexer) skipSpace() error {
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\f':
			lx.pos++
		case c == '\r' || c == '\n':
			if lx.depth == 0 && strings.TrimSpace(lx.src[lx.pos:]) != "" {
				return lx.errf("newline outside brackets")
			}
			lx.pos++
		case c == '\\' && strings.HasPrefix(lx.src[lx.pos:], "\\\n"):
			lx.pos += 2
		case c == '\\' && strings.HasPrefix(lx.src[lx.pos:], "\\\r\n"):
			lx.pos += 3
		case c == '#':
			for lx.pos < len(lx.src) && lx.src[lx.pos] != '\n' {
				lx.pos++
			}
		default:
			return nil
		}
	}
	return nil
}

func (lx *lexer) next() (token, error) {
	if err := lx.skipSpace(); err != nil {
		return token{}, err
	}
	start := lx.pos
	if lx.pos >= len(lx.src) {
		return token{kind: tkEOF, pos: start}, nil
	}
	c := lx.src[lx.pos]
	r, size := utf8.DecodeRuneInString(lx.src[lx.pos:])
	switch {
	case c >= '0' && c <= '9' || (c == '.' && lx.pos+1 < len(lx.src) && lx.src[lx.pos+1] >= '0' && lx.src[lx.pos+1] <= '9'):
		return lx.number()
	case c == '"' || c == '\'':
		return lx.stringLit("")
	case isIdentStart(r):
		end := lx.pos + size
		for end < len(lx.src) {
			r2, s2 := utf8.DecodeRuneInString(lx.src[end:])
			if !isIdentCont(r2) {
				break
			}
			end += s2
		}
		word := lx.src[lx.pos:end]
		if end < len(lx.src) && (lx.src[end] == '"' || lx.src[end] == '\'') && len(word) <= 2 {
			switch strings.ToLower(word) {
			case "r", "u", "b", "br", "rb", "f", "fr", "rf":
				lx.pos = end
				return lx.stringLit(strings.ToLower(word))
			}
		}
		lx.pos = end
		if r == utf8.RuneError {
			return token{}, lx.errf("invalid UTF-8")
		}
		return token{kind: tkName, text: word, pos: start}, nil
	}
	for _, op := range []string{"...", "**", "//", "(", ")", "[", "]", "{", "}", ",", ":", ".", "=", "*", "/", "%", "+", "-", "~", "@"} {
		if strings.HasPrefix(lx.src[lx.pos:], op) {
			lx.pos += len(op)
			switch op {
			case "(", "[", "{":
				lx.depth++
			case ")", "]", "}":
				lx.depth--
			}
			if op == "=" && strings.HasPrefix(lx.src[lx.pos:], "=") {
				return token{}, lx.errf("comparison operators are not supported")
			}
			return token{kind: tkOp, text: op, pos: start}, nil
		}
	}
	return token{}, lx.errf("unexpected character %q", r)
}

func digitsOK(s string, isDigit func(byte) bool) bool {
	if s == "" || s[0] == '_' || s[len(s)-1] == '_' || strings.Contains(s, "__") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '_' && !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func isDec(c byte) bool { return c >= '0' && c <= '9' }

func (lx *lexer) number() (token, error) {
	start := lx.pos
	s := lx.src
	end := start
	for end < len(s) && (isDec(s[end]) || s[end] == '_' || s[end] == '.' || (s[end] >= 'a' && s[end] <= 'z') || (s[end] >= 'A' && s[end] <= 'Z') ||
		((s[end] == '+' || s[end] == '-') && end > start && (s[end-1] == 'e' || s[end-1] == 'E') && !strings.HasPrefix(strings.ToLower(s[start:end]), "0x"))) {
		end++
	}
	lit := s[start:end]
	lx.pos = end
	low := strings.ToLower(lit)
	if strings.HasSuffix(low, "j") {
		return token{}, lx.errf("complex literals are not supported")
	}
	if len(low) > 2 && low[0] == '0' && (low[1] == 'x' || low[1] == 'o' || low[1] == 'b') {
		base := map[byte]int{'x': 16, 'o': 8, 'b': 2}[low[1]]
		body := strings.TrimPrefix(low[2:], "_")
		if !digitsOK(body, func(c byte) bool {
			v, err := strconv.ParseUint(string(c), base, 8)
			return err == nil && v < uint64(base)
		}) {
			return token{}, lx.errf("invalid number %q", lit)
		}
		n, err := strconv.ParseInt(strings.ReplaceAll(body, "_", ""), base, 64)
		if err != nil {
			return token{}, lx.errf("integer %q out of range", lit)
		}
		return token{kind: tkInt, text: lit, i: n, pos: start}, nil
	}
	mant, exp, hasExp := low, "", false
	if i := strings.IndexByte(low, 'e'); i >= 0 {
		mant, exp, hasExp = low[:i], low[i+1:], true
	}
	intPart, frac, hasDot := mant, "", false
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		intPart, frac, hasDot = mant[:i], mant[i+1:], true
	}
	if (intPart != "" && !digitsOK(intPart, isDec)) || (frac != "" && !digitsOK(frac, isDec)) || (intPart == "" && frac == "") {
		return token{}, lx.errf("invalid number %q", lit)
	}
	if hasExp {
		e := strings.TrimLeft(exp, "+-")
		if len(exp)-len(e) > 1 || !digitsOK(e, isDec) {
			return token{}, lx.errf("invalid number %q", lit)
		}
	}
	clean := strings.ReplaceAll(low, "_", "")
	if !hasDot && !hasExp {
		if len(intPart) > 1 && intPart[0] == '0' && strings.Trim(intPart, "0_") != "" {
			return token{}, lx.errf("leading zeros in decimal integer %q", lit)
		}
		n, err := strconv.ParseInt(clean, 10, 64)
		if err != nil {
			return token{}, lx.errf("integer %q out of int64 range", lit)
		}
		return token{kind: tkInt, text: lit, i: n, pos: start}, nil
	}
	f, err := strconv.ParseFloat(clean, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return token{}, lx.errf("invalid number %q", lit)
	}
	return token{kind: tkFloat, text: lit, f: f, pos: start}, nil
}

// stringLit reads one string literal (after its prefix) and decodes it.
func (lx *lexer) stringLit(prefix string) (token, error) {
	start := lx.pos
	if strings.ContainsRune(prefix, 'b') {
		return token{}, lx.errf("bytes literals are not supported")
	}
	if strings.ContainsRune(prefix, 'f') {
		return token{}, lx.errf("f-strings are not supported")
	}
	raw := strings.ContainsRune(prefix, 'r')
	q := lx.src[lx.pos : lx.pos+1]
	triple := strings.HasPrefix(lx.src[lx.pos:], q+q+q)
	delim := q
	if triple {
		delim = q + q + q
	}
	i := lx.pos + len(delim)
	var body strings.Builder
	for {
		if i >= len(lx.src) {
			return token{}, lx.errf("unterminated string literal")
		}
		if strings.HasPrefix(lx.src[i:], delim) {
			i += len(delim)
			break
		}
		c := lx.src[i]
		if (c == '\n' || c == '\r') && !triple {
			return token{}, lx.errf("newline in string literal")
		}
		if c == '\\' {
			if i+1 >= len(lx.src) {
				return token{}, lx.errf("unterminated string literal")
			}
			if raw {
				// A raw string keeps the backslash and the next character.
				_, sz := utf8.DecodeRuneInString(lx.src[i+1:])
				body.WriteString(lx.src[i : i+1+sz])
				i += 1 + sz
				continue
			}
			n, err := decodeEscape(lx.src[i:], &body)
			if err != nil {
				lx.pos = i
				return token{}, lx.errf("%v", err)
			}
			i += n
			continue
		}
		_, sz := utf8.DecodeRuneInString(lx.src[i:])
		body.WriteString(lx.src[i : i+sz])
		i += sz
	}
	lx.pos = i
	if !utf8.ValidString(body.String()) {
		return token{}, lx.errf("invalid UTF-8 in string literal")
	}
	return token{kind: tkString, text: lx.src[start:i], str: body.String(), pos: start}, nil
}

// decodeEscape decodes the escape sequence at the start of s (s[0] is a
// backslash), writes it to b and returns its length.
func decodeEscape(s string, b *strings.Builder) (int, error) {
	c := s[1]
	simple := map[byte]string{'\\': "\\", '\'': "'", '"': "\"", 'a': "\a", 'b': "\b", 'f': "\f", 'n': "\n", 'r': "\r", 't': "\t", 'v': "\v", '\n': ""}
	if v, found := simple[c]; found {
		b.WriteString(v)
		return 2, nil
	}
	switch {
	case c == '\r':
		if strings.HasPrefix(s[2:], "\n") {
			return 3, nil
		}
		return 2, nil
	case c >= '0' && c <= '7':
		n := 1
		for n < 3 && 1+n < len(s) && s[1+n] >= '0' && s[1+n] <= '7' {
			n++
		}
		v, _ := strconv.ParseUint(s[1:1+n], 8, 32)
		b.WriteRune(rune(v))
		return 1 + n, nil
	case c == 'x' || c == 'u' || c == 'U':
		width := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
		if len(s) < 2+width {
			return 0, fmt.Errorf("truncated \\%c escape", c)
		}
		v, err := strconv.ParseUint(s[2:2+width], 16, 32)
		if err != nil {
			return 0, fmt.Errorf("bad \\%c escape", c)
		}
		if v > unicode.MaxRune || (v >= 0xD800 && v <= 0xDFFF) {
			return 0, fmt.Errorf("escape \\%c%s is not a valid code point", c, s[2:2+width])
		}
		b.WriteRune(rune(v))
		return 2 + width, nil
	case c == 'N':
		return 0, errors.New(`\N{...} escapes are not supported`)
	}
	// Unknown escapes keep the backslash, as Python does.
	b.WriteByte('\\')
	return 1, nil
}
