package toolcall

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth bounds nesting so hostile input cannot exhaust the stack.
const maxDepth = 512

// DecodeJSON decodes one JSON value into the value model of this package:
// objects become *Object (key order kept; a repeated key keeps its first
// position and its last value, as Python's json.loads does), integer
// literals become int64 and literals with '.', 'e' or 'E' become float64.
// Like Python's json module it also accepts NaN, Infinity and -Infinity.
// Invalid UTF-8 and lone surrogate escapes become U+FFFD. Trailing
// non-space data is an error.
func DecodeJSON(data []byte) (any, error) {
	return decodeJSON(data, "", "")
}

// DecodeJSONDropping is DecodeJSON, except that inside the value of the
// top-level member named under, object members named key are validated
// but left out. Scorers use it to skip the long "description" texts of
// function schemas, which they never read.
func DecodeJSONDropping(data []byte, under, key string) (any, error) {
	return decodeJSON(data, under, key)
}

func decodeJSON(data []byte, under, key string) (any, error) {
	// Strings without escapes are substrings of one copy of the input:
	// one allocation per document instead of one per string.
	d := jsonDecoder{data: data, src: string(data), validUTF8: utf8.Valid(data), dropUnder: under, dropKey: key}
	d.ws()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.ws()
	if d.pos != len(d.data) {
		return nil, d.errf("trailing data after JSON value")
	}
	return v, nil
}

type jsonDecoder struct {
	data      []byte
	src       string // the same bytes as data
	pos       int
	validUTF8 bool

	dropUnder, dropKey string
	dropping           bool // inside the top-level member dropUnder
}

func (d *jsonDecoder) errf(format string, args ...any) error {
	return fmt.Errorf("toolcall: decode JSON at offset %d: %s", d.pos, fmt.Sprintf(format, args...))
}

func (d *jsonDecoder) ws() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *jsonDecoder) literal(word string, v any) (any, error) {
	if !bytes.HasPrefix(d.data[d.pos:], []byte(word)) {
		return nil, d.errf("invalid literal")
	}
	d.pos += len(word)
	return v, nil
}

func (d *jsonDecoder) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, d.errf("nested too deeply")
	}
	if d.pos >= len(d.data) {
		return nil, d.errf("unexpected end of input")
	}
	switch c := d.data[d.pos]; c {
	case '{':
		d.pos++
		obj := NewObject(4)
		d.ws()
		if d.pos < len(d.data) && d.data[d.pos] == '}' {
			d.pos++
			return obj, nil
		}
		for {
			d.ws()
			if d.pos >= len(d.data) || d.data[d.pos] != '"' {
				return nil, d.errf("expected string key")
			}
			key, err := d.str()
			if err != nil {
				return nil, err
			}
			d.ws()
			if d.pos >= len(d.data) || d.data[d.pos] != ':' {
				return nil, d.errf("expected ':'")
			}
			d.pos++
			d.ws()
			if d.dropping && key == d.dropKey {
				if err := d.skip(depth + 1); err != nil {
					return nil, err
				}
			} else {
				top := depth == 0 && d.dropUnder != "" && key == d.dropUnder
				d.dropping = d.dropping || top
				v, err := d.value(depth + 1)
				if top {
					d.dropping = false
				}
				if err != nil {
					return nil, err
				}
				obj.Set(key, v)
			}
			d.ws()
			if d.pos >= len(d.data) {
				return nil, d.errf("unexpected end of object")
			}
			if d.data[d.pos] == '}' {
				d.pos++
				return obj, nil
			}
			if d.data[d.pos] != ',' {
				return nil, d.errf("expected ',' or '}'")
			}
			d.pos++
		}
	case '[':
		d.pos++
		arr := make([]any, 0, 4)
		d.ws()
		if d.pos < len(d.data) && d.data[d.pos] == ']' {
			d.pos++
			return arr, nil
		}
		for {
			d.ws()
			v, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
			d.ws()
			if d.pos >= len(d.data) {
				return nil, d.errf("unexpected end of array")
			}
			if d.data[d.pos] == ']' {
				d.pos++
				return arr, nil
			}
			if d.data[d.pos] != ',' {
				return nil, d.errf("expected ',' or ']'")
			}
			d.pos++
		}
	case '"':
		return d.str()
	case 't':
		return d.literal("true", true)
	case 'f':
		return d.literal("false", false)
	case 'n':
		return d.literal("null", nil)
	case 'N':
		return d.literal("NaN", math.NaN())
	case 'I':
		return d.literal("Infinity", math.Inf(1))
	default:
		if c == '-' && bytes.HasPrefix(d.data[d.pos:], []byte("-Infinity")) {
			return d.literal("-Infinity", math.Inf(-1))
		}
		if c == '-' || (c >= '0' && c <= '9') {
			return d.number()
		}
	}
	return nil, d.errf("unexpected character %q", d.data[d.pos])
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (d *jsonDecoder) number() (any, error) {
	start := d.pos
	if d.data[d.pos] == '-' {
		d.pos++
	}
	switch {
	case d.pos < len(d.data) && d.data[d.pos] == '0':
		d.pos++
	case d.pos < len(d.data) && isDigit(d.data[d.pos]):
		for d.pos < len(d.data) && isDigit(d.data[d.pos]) {
			d.pos++
		}
	default:
		return nil, d.errf("invalid number")
	}
	if d.pos < len(d.data) && d.data[d.pos] == '.' {
		d.pos++
		if d.pos >= len(d.data) || !isDigit(d.data[d.pos]) {
			return nil, d.errf("invalid number")
		}
		for d.pos < len(d.data) && isDigit(d.data[d.pos]) {
			d.pos++
		}
	}
	if d.pos < len(d.data) && (d.data[d.pos] == 'e' || d.data[d.pos] == 'E') {
		d.pos++
		if d.pos < len(d.data) && (d.data[d.pos] == '+' || d.data[d.pos] == '-') {
			d.pos++
		}
		if d.pos >= len(d.data) || !isDigit(d.data[d.pos]) {
			return nil, d.errf("invalid number")
		}
		for d.pos < len(d.data) && isDigit(d.data[d.pos]) {
			d.pos++
		}
	}
	return NumberValue(string(d.data[start:d.pos]))
}

func (d *jsonDecoder) str() (string, error) {
	d.pos++ // opening quote
	start := d.pos
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		if c == '"' {
			s := d.src[start:d.pos]
			d.pos++
			if !d.validUTF8 && !utf8.ValidString(s) {
				return strings.ToValidUTF8(s, "\uFFFD"), nil
			}
			return s, nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		d.pos++
	}
	buf := append([]byte(nil), d.data[start:d.pos]...)
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			d.pos++
			if !utf8.Valid(buf) {
				return strings.ToValidUTF8(string(buf), "\uFFFD"), nil
			}
			return string(buf), nil
		case c < 0x20:
			return "", d.errf("control character in string")
		case c == '\\':
			if d.pos+1 >= len(d.data) {
				return "", d.errf("unterminated escape")
			}
			e := d.data[d.pos+1]
			d.pos += 2
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, ok := d.hex4()
				if !ok {
					return "", d.errf("bad \\u escape")
				}
				if utf16.IsSurrogate(r) {
					r2 := unicode.ReplacementChar
					if bytes.HasPrefix(d.data[d.pos:], []byte("\\u")) {
						save := d.pos
						d.pos += 2
						if lo, ok := d.hex4(); ok && utf16.DecodeRune(r, lo) != unicode.ReplacementChar {
							r2 = utf16.DecodeRune(r, lo)
						} else {
							d.pos = save
						}
					}
					r = r2
				}
				buf = utf8.AppendRune(buf, r)
			default:
				return "", d.errf("invalid escape \\%c", e)
			}
		default:
			buf = append(buf, c)
			d.pos++
		}
	}
	return "", d.errf("unterminated string")
}

// skip validates and skips one JSON value without building it.
func (d *jsonDecoder) skip(depth int) error {
	if depth > maxDepth {
		return d.errf("nested too deeply")
	}
	if d.pos >= len(d.data) {
		return d.errf("unexpected end of input")
	}
	switch d.data[d.pos] {
	case '{', '[':
		closer := byte('}')
		if d.data[d.pos] == '[' {
			closer = ']'
		}
		isObj := closer == '}'
		d.pos++
		d.ws()
		if d.pos < len(d.data) && d.data[d.pos] == closer {
			d.pos++
			return nil
		}
		for {
			d.ws()
			if isObj {
				if d.pos >= len(d.data) || d.data[d.pos] != '"' {
					return d.errf("expected string key")
				}
				if _, err := d.str(); err != nil {
					return err
				}
				d.ws()
				if d.pos >= len(d.data) || d.data[d.pos] != ':' {
					return d.errf("expected ':'")
				}
				d.pos++
				d.ws()
			}
			if err := d.skip(depth + 1); err != nil {
				return err
			}
			d.ws()
			if d.pos >= len(d.data) {
				return d.errf("unexpected end of input")
			}
			if d.data[d.pos] == closer {
				d.pos++
				return nil
			}
			if d.data[d.pos] != ',' {
				return d.errf("expected ',' or %q", closer)
			}
			d.pos++
		}
	}
	_, err := d.value(depth)
	return err
}

func (d *jsonDecoder) hex4() (rune, bool) {
	if d.pos+4 > len(d.data) {
		return 0, false
	}
	var r rune
	for _, c := range d.data[d.pos : d.pos+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	d.pos += 4
	return r, true
}

// NumberValue converts a JSON number literal to int64 or float64 following
// Python's json module: a literal containing '.', 'e' or 'E' is a float,
// anything else an int. Integers outside the int64 range are an error
// (Python would produce an arbitrary-precision int).
func NumberValue(lit string) (any, error) {
	if strings.ContainsAny(lit, ".eE") {
		f, err := strconv.ParseFloat(lit, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, fmt.Errorf("toolcall: bad number %q: %w", lit, err)
		}
		return f, nil // out of range: ±Inf or 0, as Python's float() gives
	}
	i, err := strconv.ParseInt(lit, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("toolcall: integer %q out of int64 range: %w", lit, err)
	}
	return i, nil
}

// EncodeJSON appends the JSON encoding of a value of this package's model
// to buf. Object keys keep their order; floats always carry a '.' or an
// exponent so that they decode back as floats.
func EncodeJSON(buf []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(buf, "null"...), nil
	case bool:
		return strconv.AppendBool(buf, x), nil
	case int64:
		return strconv.AppendInt(buf, x, 10), nil
	case int:
		return strconv.AppendInt(buf, int64(x), 10), nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, fmt.Errorf("toolcall: cannot encode %v as JSON", x)
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		return append(buf, s...), nil
	case string:
		b, err := json.Marshal(x)
		if err != nil {
			return nil, fmt.Errorf("toolcall: encode string: %w", err)
		}
		return append(buf, b...), nil
	case []any:
		return encodeList(buf, x)
	case Tuple:
		return encodeList(buf, x)
	case *Object:
		buf = append(buf, '{')
		for i := 0; i < x.Len(); i++ {
			if i > 0 {
				buf = append(buf, ", "...)
			}
			k, val := x.At(i)
			kb, _ := json.Marshal(k)
			buf = append(buf, kb...)
			buf = append(buf, ": "...)
			var err error
			if buf, err = EncodeJSON(buf, val); err != nil {
				return nil, err
			}
		}
		return append(buf, '}'), nil
	default:
		return nil, fmt.Errorf("toolcall: cannot encode %T as JSON", v)
	}
}

func encodeList(buf []byte, xs []any) ([]byte, error) {
	buf = append(buf, '[')
	for i, e := range xs {
		if i > 0 {
			buf = append(buf, ", "...)
		}
		var err error
		if buf, err = EncodeJSON(buf, e); err != nil {
			return nil, err
		}
	}
	return append(buf, ']'), nil
}
