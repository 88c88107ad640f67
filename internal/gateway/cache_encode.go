package gateway

import (
	"encoding/json"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/benchline/benchline/internal/modelapi"
)

// appendEntry appends e as a cache part's line: the bytes json.Encoder
// writes for it, newline included. The entries a run caches by the
// thousand (a chat completion whose choices call no tools) are put
// together here, about five times faster than by reflection; any other
// (a reward, tool calls, a time or cost encoding/json refuses or writes
// its own way) is json.Marshal's. TestAppendEntry and FuzzAppendEntry
// compare the two byte for byte, and TestAppendEntryFields fails when a
// field is added to one of the types written here.
func appendEntry(dst []byte, e *Entry) ([]byte, error) {
	if !plainEntry(e) {
		b, err := json.Marshal(e)
		if err != nil {
			return dst, err
		}
		return append(append(dst, b...), '\n'), nil
	}
	dst = append(dst, `{"key":`...)
	dst = appendJSONString(dst, e.Key)
	dst = append(dst, `,"created":"`...)
	dst = e.Created.AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, '"')
	if r := &e.Response; r.ID != "" || r.Model != "" || r.Choices != nil || r.Usage != (modelapi.Usage{}) {
		dst = append(dst, `,"response":{`...)
		if r.ID != "" {
			dst = append(dst, `"id":`...)
			dst = appendJSONString(dst, r.ID)
			dst = append(dst, ',')
		}
		if r.Model != "" {
			dst = append(dst, `"model":`...)
			dst = appendJSONString(dst, r.Model)
			dst = append(dst, ',')
		}
		dst = append(dst, `"choices":`...)
		if r.Choices == nil {
			dst = append(dst, "null"...)
		} else {
			dst = append(dst, '[')
			for i := range r.Choices {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = appendChoice(dst, &r.Choices[i])
			}
			dst = append(dst, ']')
		}
		u := &r.Usage
		dst = append(dst, `,"usage":{"prompt_tokens":`...)
		dst = strconv.AppendInt(dst, int64(u.PromptTokens), 10)
		dst = append(dst, `,"completion_tokens":`...)
		dst = strconv.AppendInt(dst, int64(u.CompletionTokens), 10)
		dst = append(dst, `,"cost_usd":`...)
		dst = appendJSONFloat(dst, u.CostUSD)
		dst = append(dst, `,"latency_ns":`...)
		dst = strconv.AppendInt(dst, int64(u.Latency), 10)
		dst = append(dst, `,"attempts":`...)
		dst = strconv.AppendInt(dst, int64(u.Attempts), 10)
		dst = append(dst, `,"cache_hit":`...)
		dst = strconv.AppendBool(dst, u.CacheHit)
		dst = append(dst, "}}"...)
	}
	return append(dst, "}\n"...), nil
}

// plainEntry reports whether appendEntry writes e itself: no reward, no
// tool calls, a cost encoding/json writes as a number, and a time its
// MarshalJSON accepts (years 0 to 9999, an offset of whole minutes).
func plainEntry(e *Entry) bool {
	if e.Reward != nil || math.IsNaN(e.Response.Usage.CostUSD) || math.IsInf(e.Response.Usage.CostUSD, 0) {
		return false
	}
	for i := range e.Response.Choices {
		if e.Response.Choices[i].ToolCalls != nil {
			return false
		}
	}
	_, offset := e.Created.Zone()
	y := e.Created.Year()
	return y >= 0 && y <= 9999 && offset%60 == 0
}

// appendChoice appends a choice without tool calls.
func appendChoice(dst []byte, c *modelapi.Choice) []byte {
	dst = append(dst, '{')
	n := len(dst)
	for _, f := range [...]struct{ name, v string }{
		{`"content":`, c.Content}, {`"refusal":`, c.Refusal},
		{`"reasoning_content":`, c.ReasoningContent}, {`"finish_reason":`, c.FinishReason},
	} {
		if f.v == "" {
			continue
		}
		if len(dst) > n {
			dst = append(dst, ',')
		}
		dst = append(dst, f.name...)
		dst = appendJSONString(dst, f.v)
	}
	return append(dst, '}')
}

// appendJSONFloat appends f as encoding/json writes a float64: the
// shortest representation, in exponent form below 1e-6 and from 1e21,
// with a one-digit negative exponent written without its zero.
func appendJSONFloat(dst []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

// appendJSONString appends s quoted as encoding/json quotes a string with
// HTML escaping on (json.Encoder's default): <, > and & as \u003c, \u003e
// and \u0026, control characters as \b, \f, \n, \r, \t or \u00XX, U+2028
// and U+2029 escaped, and each byte of invalid UTF-8 as \ufffd.
func appendJSONString(dst []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= ' ' && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
