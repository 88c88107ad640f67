package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"

	"github.com/benchline/benchline/internal/modelapi"
)

// Oracles. A task may attach to a request the reply a deterministic oracle
// of its own would give (modelapi.Request.Oracle): the baseline provider's
// judge models answer from it, so judged benchmarks run offline. The
// gateway sends it only to the baseline provider, as a header
// (modelapi.OracleHeader), never in the body: a request to any other
// provider is byte for byte what it would be without an oracle.

type oracleKey struct{}

// oracleFor returns the oracle to send with req to provider pname: req's
// for the baseline provider, "" for every other. An oracle over
// modelapi.MaxOracleBytes is a bad request.
func oracleFor(pname string, req modelapi.Request) (string, *Error) {
	if pname != BaselineProvider || req.Oracle == "" {
		return "", nil
	}
	if len(req.Oracle) > modelapi.MaxOracleBytes {
		return "", &Error{Class: ClassBadRequest, Model: req.Model, Message: fmt.Sprintf(
			"oracle reply of %d bytes exceeds %d", len(req.Oracle), modelapi.MaxOracleBytes)}
	}
	return req.Oracle, nil
}

// withOracle returns ctx carrying the oracle for the transport; ctx itself
// when there is none.
func withOracle(ctx context.Context, oracle string) context.Context {
	if oracle == "" {
		return ctx
	}
	return context.WithValue(ctx, oracleKey{}, oracle)
}

// oracleCacheKey is the cache key of a request sent with an oracle: the
// key without it, hashed with the oracle, so that the same prompt with
// another oracle is another answer. Without an oracle the key is
// unchanged, so adding oracles changed no existing key.
func oracleCacheKey(key, oracle string) string {
	if oracle == "" {
		return key
	}
	h := sha256.New()
	fmt.Fprintf(h, "benchline-oracle-v1\x00%s\x00", key)
	h.Write([]byte(oracle))
	return hex.EncodeToString(h.Sum(nil))
}

// oracleHeader returns the value of modelapi.OracleHeader for a request
// whose context carries an oracle, "" otherwise.
func oracleHeader(r *http.Request) string {
	o, _ := r.Context().Value(oracleKey{}).(string)
	if o == "" {
		return ""
	}
	return base64.StdEncoding.EncodeToString([]byte(o))
}
