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
//     and every bounded integer set to its maximum (a lenient scorer);
//   - judge-noisy-<p>: each JSON boolean flipped, and each bounded integer
//     moved one step up or down within its bounds, with probability p;
//   - judge-malformed-<p>: with probability p a reply that does not parse
//     (the oracle's JSON cut in half, or prose), else the oracle.
//
// A bounded integer is one whose place in the request's response schema
// (response_format json_schema: properties of objects, items of arrays)
// says "integer" with a numeric minimum and maximum, such as a 1–5 score;
// the server knows its range only from there. Other numbers are kept as
// written.
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

// oracleReply is judge model m's reply given the oracle; d is the
// request's digest and schema its response schema (nil when it has none).
func oracleReply(m Model, oracle string, d digest, schema map[string]any) string {
	if oracle == "" {
		return NoOracleReply(m)
	}
	d = hashOf(d, "oracle", oracle)
	switch m.Kind {
	case KindJudgeYes:
		return mapJSON(oracle, schema, jsonMap{
			boolean: func(string, bool) bool { return true },
			integer: func(_ string, _, _, hi int64) int64 { return hi },
		})
	case KindJudgeNoisy:
		return mapJSON(oracle, schema, jsonMap{
			boolean: func(path string, b bool) bool {
				if hashOf(d, "flip", path).uniform() < m.P {
					return !b
				}
				return b
			},
			integer: func(path string, v, lo, hi int64) int64 {
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

// jsonMap says how mapJSON changes a document's values: boolean gets each
// boolean at its path (e.g. "verdicts.2.met"), integer each integer that
// the schema bounds to [lo, hi] (lo <= v <= hi is not assumed).
type jsonMap struct {
	boolean func(path string, b bool) bool
	integer func(path string, v, lo, hi int64) int64
}

// mapJSON returns the JSON document doc with its booleans and bounded
// integers replaced as f says, reading the bounds from schema (a JSON
// Schema, nil for none). The document is re-encoded (object keys sorted,
// other numbers as written) only when a value changed; doc is returned
// unchanged when it is not JSON or nothing changed.
func mapJSON(doc string, schema map[string]any, f jsonMap) string {
	dec := json.NewDecoder(bytes.NewReader([]byte(doc)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return doc
	}
	changed := false
	var walk func(v any, path string, schema map[string]any) any
	walk = func(v any, path string, schema map[string]any) any {
		switch x := v.(type) {
		case bool:
			y := f.boolean(path, x)
			changed = changed || y != x
			return y
		case json.Number:
			n, err := strconv.ParseInt(string(x), 10, 64)
			lo, hi, bounded := integerBounds(schema)
			if err != nil || !bounded {
				return x
			}
			if y := f.integer(path, n, lo, hi); y != n {
				changed = true
				return json.Number(strconv.FormatInt(y, 10))
			}
		case map[string]any:
			props, _ := schema["properties"].(map[string]any)
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				sub, _ := props[k].(map[string]any)
				x[k] = walk(x[k], join(path, k), sub)
			}
		case []any:
			items, _ := schema["items"].(map[string]any)
			for i := range x {
				x[i] = walk(x[i], join(path, strconv.Itoa(i)), items)
			}
		}
		return v
	}
	v = walk(v, "", schema)
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

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}
