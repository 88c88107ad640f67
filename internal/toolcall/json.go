package toolcall

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// maxDepth bounds nesting so hostile input cannot exhaust the stack.
const maxDepth = 512

// DecodeJSON decodes one JSON value into the value model of this package:
// objects become *Object (key order kept; a repeated key keeps its first
// position and its last value, as Python's json.loads does), integer
// literals become int64 and literals with '.', 'e' or 'E' become float64.
// Trailing non-space data is an error.
func DecodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := DecodeJSONFrom(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("toolcall: trailing data after JSON value")
	}
	return v, nil
}

// DecodeJSONFrom reads the next JSON value from dec, which must have
// UseNumber set, into the value model of this package.
func DecodeJSONFrom(dec *json.Decoder) (any, error) {
	return decodeValue(dec, 0)
}

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, errors.New("toolcall: JSON nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("toolcall: decode JSON: %w", err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := NewObject(4)
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, fmt.Errorf("toolcall: decode JSON: %w", err)
				}
				key, ok := kt.(string)
				if !ok {
					return nil, errors.New("toolcall: decode JSON: object key is not a string")
				}
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				obj.Set(key, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, fmt.Errorf("toolcall: decode JSON: %w", err)
			}
			return obj, nil
		case '[':
			arr := make([]any, 0, 4)
			for dec.More() {
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, fmt.Errorf("toolcall: decode JSON: %w", err)
			}
			return arr, nil
		}
		return nil, fmt.Errorf("toolcall: decode JSON: unexpected %q", t)
	case json.Number:
		return NumberValue(string(t))
	default: // string, bool, nil
		return t, nil
	}
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
		if math.IsInf(f, 0) && err != nil {
			// Python's float() also yields inf for overflowing literals.
			return f, nil
		}
		return f, nil
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
