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
//   - judge-yes: every JSON boolean set to true (a judge biased to "met");
//   - judge-noisy-<p>: each JSON boolean flipped with probability p;
//   - judge-malformed-<p>: with probability p a reply that does not parse
//     (the oracle's JSON cut in half, or prose), else the oracle.
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
// request's digest.
func oracleReply(m Model, oracle string, d digest) string {
	if oracle == "" {
		return NoOracleReply(m)
	}
	d = hashOf(d, "oracle", oracle)
	switch m.Kind {
	case KindJudgeYes:
		return mapBooleans(oracle, func(string, bool) bool { return true })
	case KindJudgeNoisy:
		return mapBooleans(oracle, func(path string, b bool) bool {
			if hashOf(d, "flip", path).uniform() < m.P {
				return !b
			}
			return b
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

// mapBooleans returns the JSON document doc with every boolean b at path
// (e.g. "verdicts.2.met") replaced by f(path, b). The document is
// re-encoded (object keys sorted) only when a boolean changed; doc is
// returned unchanged when it is not JSON or nothing changed.
func mapBooleans(doc string, f func(path string, b bool) bool) string {
	dec := json.NewDecoder(bytes.NewReader([]byte(doc)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return doc
	}
	changed := false
	var walk func(v any, path string) any
	walk = func(v any, path string) any {
		switch x := v.(type) {
		case bool:
			y := f(path, x)
			changed = changed || y != x
			return y
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				x[k] = walk(x[k], join(path, k))
			}
		case []any:
			for i := range x {
				x[i] = walk(x[i], join(path, strconv.Itoa(i)))
			}
		}
		return v
	}
	v = walk(v, "")
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

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}
