package gateway

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"

	"github.com/benchline/benchline/internal/secret"
)

const redacted = secret.Redacted

// A Redactor replaces every occurrence of a set of keys in text with
// [REDACTED], whether the key appears as is or encoded. It covers, for each
// key:
//   - the key itself;
//   - URL percent-encoding of any of its bytes, in either hex case, mixed
//     freely with plain bytes (sk%2Dabc, %73%6B-abc), "+" for a space, and
//     the same encoded twice (%252D);
//   - JSON string escapes: any rune as \uXXXX in either case, "/" as "\/";
//   - base64, standard and URL-safe, with or without padding, at each of
//     the three byte alignments inside a longer encoded string (a key in a
//     Basic credential, a token or a JWT): the characters determined by
//     the key's bytes alone are found, and the whole base64 run holding
//     them is replaced; those characters may themselves be URL- or
//     JSON-escaped.
//
// Not covered: other encodings (hex, base32, compression), base64 split
// across lines, and keys shorter than minEncodedKey bytes in base64 (their
// encoded core is too short to find without replacing unrelated text).
// Matching encoded forms costs a regular expression per key set, so a
// Redactor is built once per set of keys and reused.
type Redactor struct {
	re *regexp.Regexp // nil: no keys
	// margin bounds how long one encoded key can be outside a base64 run:
	// text cut at n+margin holds every match that starts before n.
	margin int
}

// minEncodedKey is the shortest key whose base64 forms are redacted.
const minEncodedKey = 8

// NewRedactor returns a Redactor for keys; empty keys are ignored.
func NewRedactor(keys ...string) *Redactor {
	var alts []string
	r := &Redactor{}
	seen := map[string]bool{}
	for _, k := range keys {
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		alts = append(alts, escapedForm(k))
		r.margin = max(r.margin, 6*len(k))
		if len(k) < minEncodedKey {
			continue
		}
		for _, enc := range []struct {
			alphabet string
			chars    string // the alphabet's characters, escaped for a class
		}{
			{base64Std, `A-Za-z0-9+/`},
			{base64URL, `A-Za-z0-9_\-`},
		} {
			run := `(?:[` + enc.chars + `]|%2[BbFf])*`
			for off := range 3 {
				core := base64Core(k, off, enc.alphabet)
				alts = append(alts, run+escapedForm(core)+run+`(?:=|%3[Dd]){0,2}`)
			}
		}
	}
	if len(alts) > 0 {
		r.re = regexp.MustCompile(strings.Join(alts, "|"))
	}
	return r
}

// Redact returns s with every key, plain or encoded, replaced.
func (r *Redactor) Redact(s string) string {
	if r == nil || r.re == nil {
		return s
	}
	return r.re.ReplaceAllString(s, redacted)
}

const (
	base64Std = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	base64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
)

// base64Core returns the base64 characters (in alphabet) that the bytes of
// key alone determine when key starts off bytes (0-2) after a 3-byte
// boundary of the encoded data: the characters mixing in bytes before or
// after the key are left out.
func base64Core(key string, off int, alphabet string) string {
	enc := base64.NewEncoding(alphabet).WithPadding(base64.NoPadding)
	full := enc.EncodeToString(append(make([]byte, off), key...))
	first := (off*8 + 5) / 6         // the first character with no bit before the key
	last := (off + len(key)) * 8 / 6 // characters wholly inside the key's bits
	return full[first:last]
}

// escapedForm is a regular expression matching s with any of its runes
// written as is, percent-encoded (once or twice) or JSON-escaped.
func escapedForm(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteString("(?:")
		b.WriteString(regexp.QuoteMeta(string(r)))
		if r == ' ' {
			b.WriteString(`|\+`)
		}
		if r == '/' {
			b.WriteString(`|\\/`)
		}
		// Percent-encoding of each UTF-8 byte, once or twice.
		b.WriteString("|")
		for _, c := range []byte(string(r)) {
			b.WriteString("%(?:25)?" + hexClass(c>>4) + hexClass(c&0xf))
		}
		if r <= 0xffff {
			fmt.Fprintf(&b, `|\\u%s%s%s%s`, hexClass(byte(r>>12)), hexClass(byte(r>>8&0xf)), hexClass(byte(r>>4&0xf)), hexClass(byte(r&0xf)))
		}
		b.WriteString(")")
	}
	return b.String()
}

// hexClass matches the hex digit of v (0-15) in either case.
func hexClass(v byte) string {
	const digits = "0123456789abcdef"
	d := digits[v]
	if d >= 'a' {
		return "[" + string(d) + string(d-'a'+'A') + "]"
	}
	return string(d)
}
