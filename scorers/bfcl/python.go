package bfcl

import (
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/benchline/benchline/internal/toolcall"
)

// pyType is the Python type() of a value of the toolcall value model.
type pyType uint8

const (
	tNone pyType = iota
	tBool
	tInt
	tFloat
	tStr
	tList
	tTuple
	tDict
	tSet     // only used as an expected type (Java "Set"); no value has it
	tUnknown // a Go value outside the model
)

var pyTypeNames = [...]string{"NoneType", "bool", "int", "float", "str", "list", "tuple", "dict", "set", "unknown"}

func (t pyType) String() string { return pyTypeNames[t] }

func typeOf(v any) pyType {
	switch v.(type) {
	case nil:
		return tNone
	case bool:
		return tBool
	case int64:
		return tInt
	case float64:
		return tFloat
	case string:
		return tStr
	case []any:
		return tList
	case toolcall.Tuple:
		return tTuple
	case *toolcall.Object:
		return tDict
	}
	return tUnknown
}

// pyException stands for an exception the reference checker would raise
// (KeyError on an unknown type name, TypeError on malformed ground truth,
// NotImplementedError for Java Set/Queue/...). It is raised with panic deep
// in the port and recovered once, at the Check boundary, where it becomes a
// "checker_error:<kind>" result.
type pyException struct {
	kind string // Python exception class, e.g. "KeyError"
	msg  string
}

func raise(kind, format string, args ...any) {
	panic(pyException{kind: kind, msg: fmt.Sprintf(format, args...)})
}

// numeric returns the value of a bool, int or float as an exact comparison
// key: ints (and bools) as int64, floats as float64.
func numeric(v any) (i int64, f float64, isFloat, ok bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, 0, false, true
		}
		return 0, 0, false, true
	case int64:
		return x, 0, false, true
	case float64:
		return 0, x, true, true
	}
	return 0, 0, false, false
}

// intEqFloat compares an int and a float exactly, as Python does.
func intEqFloat(i int64, f float64) bool {
	if f != math.Trunc(f) || math.IsInf(f, 0) || f < -9.223372036854775808e18 || f >= 9.223372036854775808e18 {
		return false
	}
	return int64(f) == i
}

// pyEqual is Python's == over the value model: bool, int and float compare
// numerically (True == 1 == 1.0), lists equal lists and tuples equal tuples
// element-wise (a list never equals a tuple), dicts compare as sets of
// key/value pairs.
func pyEqual(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case nil:
		return b == nil
	case bool, int64, float64:
		ai, af, aFloat, _ := numeric(x)
		bi, bf, bFloat, ok := numeric(b)
		if !ok {
			return false
		}
		switch {
		case aFloat && bFloat:
			return af == bf
		case aFloat:
			return intEqFloat(bi, af)
		case bFloat:
			return intEqFloat(ai, bf)
		default:
			return ai == bi
		}
	case []any:
		y, ok := b.([]any)
		return ok && listEqual(x, y)
	case toolcall.Tuple:
		y, ok := b.(toolcall.Tuple)
		return ok && listEqual(x, y)
	case *toolcall.Object:
		y, ok := b.(*toolcall.Object)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for i := 0; i < x.Len(); i++ {
			k, xv := x.At(i)
			yv, ok := y.Get(k)
			if !ok || !pyEqual(xv, yv) {
				return false
			}
		}
		return true
	}
	return false
}

func listEqual(x, y []any) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if !pyEqual(x[i], y[i]) {
			return false
		}
	}
	return true
}

// pyIn is Python's `x in container` for a list, str (substring) or dict
// (key) container; any other container raises TypeError.
func pyIn(x, container any) bool {
	switch c := container.(type) {
	case []any:
		for _, e := range c {
			if pyEqual(x, e) {
				return true
			}
		}
		return false
	case toolcall.Tuple:
		for _, e := range c {
			if pyEqual(x, e) {
				return true
			}
		}
		return false
	case string:
		s, ok := x.(string)
		if !ok {
			raise("TypeError", "'in <string>' requires string as left operand, not %s", typeOf(x))
		}
		return strings.Contains(c, s)
	case *toolcall.Object:
		s, ok := x.(string)
		return ok && c.Has(s)
	}
	raise("TypeError", "argument of type '%s' is not iterable", typeOf(container))
	return false
}

// pyIndexItems returns what `[c[i] for i in range(len(c))]` yields in
// Python: list or tuple elements, the characters of a str, nothing for an
// empty dict. Other values raise as Python would (TypeError for numbers,
// KeyError for a non-empty dict).
func pyIndexItems(c any) []any {
	switch x := c.(type) {
	case []any:
		return x
	case toolcall.Tuple:
		return x
	case string:
		out := make([]any, 0, len(x))
		for _, r := range x {
			out = append(out, string(r))
		}
		return out
	case *toolcall.Object:
		if x.Len() == 0 {
			return nil
		}
		raise("KeyError", "0")
	}
	raise("TypeError", "object of type '%s' has no len()", typeOf(c))
	return nil
}

// pyLen is Python's len() for the containers of the value model.
func pyLen(c any) int {
	switch x := c.(type) {
	case []any:
		return len(x)
	case toolcall.Tuple:
		return len(x)
	case string:
		return utf8.RuneCountInString(x)
	case *toolcall.Object:
		return x.Len()
	}
	raise("TypeError", "object of type '%s' has no len()", typeOf(c))
	return 0
}

// Standardize is the reference checker's string normalisation:
// re.sub(r"[ \,\.\/\-\_\*\^]", "", s).lower().replace("'", '"').
// Lower-casing is per code point (Go's unicode.ToLower); Python's str.lower
// differs only for a handful of code points with multi-rune or
// context-dependent lowercase forms (U+0130, final sigma).
func Standardize(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		b := make([]byte, 0, len(s))
		for i := 0; i < len(s); i++ {
			c := s[i]
			switch c {
			case ' ', ',', '.', '/', '-', '_', '*', '^':
				continue
			case '\'':
				c = '"'
			default:
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
			}
			b = append(b, c)
		}
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(s))
	for _, r := range s {
		switch r {
		case ' ', ',', '.', '/', '-', '_', '*', '^':
			continue
		case '\'':
			r = '"'
		default:
			r = unicode.ToLower(r)
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

// standardEqual reports Standardize(a) == Standardize(b) without
// allocating.
func standardEqual(a, b string) bool {
	if a == b {
		return true
	}
	i, j := 0, 0
	for {
		var ra, rb rune
		ra, i = nextStd(a, i)
		rb, j = nextStd(b, j)
		if ra != rb {
			return false
		}
		if ra < 0 {
			return true
		}
	}
}

// stdASCII maps an ASCII byte to its standardized form: 0 for the removed
// characters, lower case for letters, '"' for a single quote.
var stdASCII = func() (t [utf8.RuneSelf]byte) {
	for c := range t {
		t[c] = byte(c)
	}
	for _, c := range " ,./-_*^" {
		t[c] = 0
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = byte(c + 'a' - 'A')
	}
	t['\''] = '"'
	return t
}()

// nextStd returns the next rune of Standardize(s) starting at byte i, and
// the index after it; -1 at the end. (NUL bytes are kept, as by Python.)
func nextStd(s string, i int) (rune, int) {
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			if m := stdASCII[c]; m != 0 || c == 0 {
				return rune(m), i
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		return unicode.ToLower(r), i + size
	}
	return -1, i
}
