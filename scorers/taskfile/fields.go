package taskfile

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
)

// MarshalFields writes a row's columns as JSON (a built row's
// fields_json) so that decodeFields reads back the values the data held:
// ints stay ints and a whole float stays a float (2.0, not 2), which
// tool_calls' type rules tell apart as BFCL's do. Object keys are sorted.
func MarshalFields(v any) ([]byte, error) {
	return json.Marshal(floatsKept(v))
}

// floatsKept copies v with every whole float64 as a json.Number ending
// in ".0".
func floatsKept(v any) any {
	switch t := v.(type) {
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1e15 {
			return json.Number(strconv.FormatFloat(t, 'f', 1, 64))
		}
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = floatsKept(x)
		}
		return m
	case []any:
		l := make([]any, len(t))
		for i, x := range t {
			l[i] = floatsKept(x)
		}
		return l
	}
	return v
}

// decodeFields reads fields_json: whole numbers that fit are int64, other
// numbers float64 (as the data reader gives them to templates at build).
func decodeFields(raw string) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return PlainNumbers(m).(map[string]any), nil
}

// PlainNumbers turns the json.Numbers in v (decoded with UseNumber) into
// int64 (whole numbers that fit) or float64, in place, so templates print 3
// as 3, as Python's json does; the data reader and fields_json both use it.
func PlainNumbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(t), 10, 64); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	case map[string]any:
		for k, x := range t {
			t[k] = PlainNumbers(x)
		}
	case []any:
		for i, x := range t {
			t[i] = PlainNumbers(x)
		}
	}
	return v
}
