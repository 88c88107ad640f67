package baseline

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"github.com/benchline/benchline/internal/modelapi"
)

// The judges. A task that can compute the reply a deterministic oracle of
// its own would give (a rubric verdict by keyword rule, the claims of an
// answer split into sentences) attaches it to the request; the gateway
// sends it to this server only, base64-encoded in modelapi.OracleHeader.
// The judge models answer from it with generic JSON transforms, so nothing
// here knows a benchmark:
//
//   - judge: the oracle verbatim;
//   - judge-yes: every JSON boolean set to true (a judge biased to "met"),
//     and every number on a scale set to the top of the scale (a judge
//     biased to the best score);
//   - judge-noisy-<p>: each JSON boolean flipped, each number on a listed
//     scale replaced by another value of the scale drawn uniformly, and
//     each number on a bounded scale moved one step up or down within its
//     bounds, with probability p;
//   - judge-malformed-<p>: with probability p a reply that does not parse
//     (the oracle's JSON cut in half, or prose), else the oracle.
//
// A number is on a scale when the request's response format (a JSON
// schema), at its place in the document, lists the values it may take (an
// "enum" of numbers: ReportEval's 0–4 scores, -1/0/1 fact labels) or
// bounds an integer (a "minimum" and a "maximum": RMTBench's 1–5 scores).
// Other numbers, and every number of a request without a schema, are kept.
//
// The draws are pure functions of the request (its body, seed and choice
// index), the server seed and the oracle, like every baseline answer: a
// retried request gets the same reply. An oracle that is not JSON has no
// booleans, so judge-yes and judge-noisy return it unchanged. A request
// without an oracle gets NoOracleReply, which parses as no verdict: the
// task records a judge error.

// decodeOracle decodes the oracle header ("" when absent).
func decodeOracle(h string) (string, error) {
	if h == "" {
		return "", nil
	}
	b, err := base64.StdEncoding.DecodeString(h)
	if err != nil {
		return "", fmt.Errorf("baseline: oracle header is not base64: %w", err)
	}
	return string(b), nil
}

// NoOracleReply is what a judge model replies to a request without an
// oracle: a labelled text with no JSON object in it.
func NoOracleReply(m Model) string {
	return fmt.Sprintf("[benchline baseline/%s] no oracle reply came with this request (the %s header, "+
		"which the gateway sets from the request's Oracle): this judge answers only from one.", m.ID(), modelapi.OracleHeader)
}

// malformedProse is the prose reply of judge-malformed.
const malformedProse = "Having read the answer carefully, I think it covers most of what matters, " +
	"though a few points could be clearer. Overall it seems reasonable."

// oracleReply is judge model m's reply given the oracle and the schema of
// the request's response format (nil without one); d is the request's
// digest.
func oracleReply(m Model, oracle string, schema map[string]any, d digest) string {
	if oracle == "" {
		return NoOracleReply(m)
	}
	d = hashOf(d, "oracle", oracle)
	switch m.Kind {
	case KindJudgeYes:
		return mapVerdicts(oracle, schema, transform{
			boolean: func(string, bool) bool { return true },
			scaled:  func(_ string, _ json.Number, scale []json.Number) json.Number { return top(scale) },
			bounded: func(_ string, _, _, hi int64) int64 { return hi },
		})
	case KindJudgeNoisy:
		return mapVerdicts(oracle, schema, transform{
			boolean: func(path string, b bool) bool {
				if hashOf(d, "flip", path).uniform() < m.P {
					return !b
				}
				return b
			},
			scaled: func(path string, n json.Number, scale []json.Number) json.Number {
				var others []json.Number
				for _, v := range scale {
					if !sameNumber(v, n) {
						others = append(others, v)
					}
				}
				if len(others) == 0 || hashOf(d, "flip", path).uniform() >= m.P {
					return n
				}
				return others[hashOf(d, "to", path).intn(len(others))]
			},
			bounded: func(path string, v, lo, hi int64) int64 {
				if hashOf(d, "flip", path).uniform() >= m.P {
					return v
				}
				up := hashOf(d, "step", path).intn(2) == 0
				switch {
				case v >= hi:
					up = false
				case v <= lo:
					up = true
				}
				if up {
					return v + 1
				}
				return v - 1
			},
		})
	case KindJudgeMalformed:
		if hashOf(d, "malformed").uniform() >= m.P {
			return oracle
		}
		if hashOf(d, "how").intn(2) == 0 {
			return oracle[:len(oracle)/2]
		}
		return malformedProse
	}
	return oracle
}

// transform says how a judge changes an oracle's verdicts: each boolean
// at path, and each number on a scale (the values its schema lists).
//
// A scale is either listed (an "enum" of numbers: values without an order
// the judge must respect) or bounded (an "integer" with a "minimum" and a
// "maximum", such as a 1–5 score: an ordinal range).
type transform struct {
	boolean func(path string, b bool) bool
	scaled  func(path string, n json.Number, scale []json.Number) json.Number
	bounded func(path string, v, lo, hi int64) int64
}

// mapVerdicts returns the JSON document doc with every boolean b at path
// (e.g. "verdicts.2.met") replaced by t.boolean(path, b), and every number
// whose schema node (schema followed down "properties" and "items") lists
// an enum of numbers replaced by t.scaled(path, n, enum). The document is
// re-encoded (object keys sorted) only when something changed; doc is
// returned unchanged when it is not JSON or nothing changed.
func mapVerdicts(doc string, schema map[string]any, t transform) string {
	dec := json.NewDecoder(bytes.NewReader([]byte(doc)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return doc
	}
	changed := false
	var walk func(v any, schema map[string]any, path string) any
	walk = func(v any, schema map[string]any, path string) any {
		switch x := v.(type) {
		case bool:
			y := t.boolean(path, x)
			changed = changed || y != x
			return y
		case json.Number:
			scale := numberEnum(schema)
			if len(scale) == 0 {
				n, err := strconv.ParseInt(string(x), 10, 64)
				lo, hi, ok := integerBounds(schema)
				if err != nil || !ok {
					return x
				}
				if y := t.bounded(path, n, lo, hi); y != n {
					changed = true
					return json.Number(strconv.FormatInt(y, 10))
				}
				return x
			}
			y := t.scaled(path, x, scale)
			changed = changed || !sameNumber(x, y)
			return y
		case map[string]any:
			props, _ := schema["properties"].(map[string]any)
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				sub, _ := props[k].(map[string]any)
				x[k] = walk(x[k], sub, join(path, k))
			}
		case []any:
			items, _ := schema["items"].(map[string]any)
			for i := range x {
				x[i] = walk(x[i], items, join(path, strconv.Itoa(i)))
			}
		}
		return v
	}
	v = walk(v, schema, "")
	if !changed {
		return doc
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return doc
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// numberEnum returns the numbers a schema node's "enum" lists, when every
// value it lists is a number; nil otherwise.
func numberEnum(schema map[string]any) []json.Number {
	enum, _ := schema["enum"].([]any)
	var out []json.Number
	for _, e := range enum {
		var n json.Number
		switch x := e.(type) {
		case json.Number:
			n = x
		case float64:
			n = json.Number(strconv.FormatFloat(x, 'g', -1, 64))
		default:
			return nil
		}
		out = append(out, n)
	}
	return out
}

// integerBounds returns the minimum and maximum of an integer schema; ok
// is false unless the schema says "integer" and gives both.
func integerBounds(schema map[string]any) (lo, hi int64, ok bool) {
	if t, _ := schema["type"].(string); t != "integer" {
		return 0, 0, false
	}
	least, ok1 := schema["minimum"].(float64)
	most, ok2 := schema["maximum"].(float64)
	if !ok1 || !ok2 || least > most {
		return 0, 0, false
	}
	return int64(least), int64(most), true
}

// top is the largest value of a scale.
func top(scale []json.Number) json.Number {
	best := scale[0]
	for _, v := range scale[1:] {
		a, _ := v.Float64()
		b, _ := best.Float64()
		if a > b {
			best = v
		}
	}
	return best
}

// sameNumber reports whether two JSON numbers are equal in value ("1" and
// "1.0" are).
func sameNumber(a, b json.Number) bool {
	x, err1 := a.Float64()
	y, err2 := b.Float64()
	if err1 != nil || err2 != nil {
		return a == b
	}
	return x == y
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}
