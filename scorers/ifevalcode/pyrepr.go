package ifevalcode

import (
	"fmt"
	"strings"
	"unicode"
)

// InstructionProgram is the Python program the original runs for the
// instruction check: the whole response as a literal, the item's
// check_instruction source (not unicode_escape-decoded), and a call. It
// passes when it exits 0; the return value of check_instruction is ignored.
func InstructionProgram(response, checkInstruction string) string {
	return "response = " + PyRepr(response) + "\n" + checkInstruction + "\n" + "check_instruction(response)"
}

// PyRepr returns Python 3's repr() of the string s: single quotes unless s
// contains a single quote and no double quote; backslash, the quote, \t,
// \n and \r escaped; other control characters as \xhh; non-ASCII characters
// kept when printable, else \xhh, \uhhhh or \Uhhhhhhhh. Printability uses
// Go's unicode.IsPrint, which matches Python's str.isprintable up to the
// Unicode version; the literal's value is s either way.
func PyRepr(s string) string {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte(quote)
	for _, r := range s {
		switch {
		case r == rune(quote) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < ' ' || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x7f:
			b.WriteRune(r)
		case unicode.IsPrint(r):
			b.WriteRune(r)
		case r <= 0xff:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte(quote)
	return b.String()
}
