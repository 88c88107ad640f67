package gateway

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/benchline/benchline/internal/modelapi"
)

// recorder is an OpenAI-compatible endpoint that records the oracle header
// and body of every request it receives.
type recorder struct {
	mu      sync.Mutex
	headers []string // the oracle header of each request, "" when absent
	bodies  []string
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.headers = append(rc.headers, r.Header.Get(modelapi.OracleHeader))
	rc.bodies = append(rc.bodies, string(body))
	rc.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
}

func (rc *recorder) seen() ([]string, []string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.headers...), append([]string(nil), rc.bodies...)
}

// oracleGateway has two providers on recording endpoints: the baseline
// provider and "real", standing for any other.
func oracleGateway(t *testing.T) (*Gateway, *recorder, *recorder) {
	t.Helper()
	base, real := &recorder{}, &recorder{}
	bs, rs := httptest.NewServer(base), httptest.NewServer(real)
	t.Cleanup(bs.Close)
	t.Cleanup(rs.Close)
	g, err := New(Options{
		Config: &Config{Providers: map[string]*Provider{
			BaselineProvider: {BaseURL: bs.URL + "/v1"},
			"real":           {BaseURL: rs.URL + "/v1", APIKeyEnv: "REAL_KEY"},
		}},
		Env: func(k string) (string, bool) { return "sk-test", k == "REAL_KEY" },
	})
	require.NoError(t, err)
	return g, base, real
}

func TestOracleReachesOnlyTheBaselineProvider(t *testing.T) {
	g, base, real := oracleGateway(t)
	ctx := context.Background()
	oracle := `{"verdicts":[{"id":"r1","met":true,"reason":"肺炎 keyword found"}]}`
	for _, model := range []string{"baseline/judge", "real/gpt-judge"} {
		_, err := g.Complete(ctx, modelapi.Request{Model: model, Messages: userMsg("judge this"), Oracle: oracle})
		require.NoError(t, err)
	}

	headers, bodies := base.seen()
	require.Len(t, headers, 1)
	got, err := base64.StdEncoding.DecodeString(headers[0])
	require.NoError(t, err)
	assert.Equal(t, oracle, string(got), "the baseline provider gets the oracle, base64")
	assert.NotContains(t, bodies[0], "verdicts", "the oracle travels in the header only")

	headers, bodies = real.seen()
	require.Len(t, headers, 1)
	assert.Empty(t, headers[0], "a real provider never receives the oracle header")
	assert.NotContains(t, bodies[0], "verdicts")
	assert.NotContains(t, bodies[0], base64.StdEncoding.EncodeToString([]byte(oracle)))
}

func TestOracleIsPartOfTheCacheKeyOnlyWhenSent(t *testing.T) {
	g, base, real := oracleGateway(t)
	ctx := context.Background()
	ask := func(model, oracle string) modelapi.Response {
		t.Helper()
		resp, err := g.Complete(ctx, modelapi.Request{Model: model, Messages: userMsg("same prompt"), Oracle: oracle})
		require.NoError(t, err)
		return resp
	}
	tests := []struct {
		name     string
		model    string
		oracle   string
		cacheHit bool
	}{
		{"baseline, oracle a", "baseline/judge", "a", false},
		{"baseline, oracle a again", "baseline/judge", "a", true},
		{"baseline, another oracle is another answer", "baseline/judge", "b", false},
		{"baseline, no oracle is another answer", "baseline/judge", "", false},
		{"real, oracle a", "real/m", "a", false},
		{"real, another oracle is not sent, so the same request", "real/m", "b", true},
		{"real, no oracle: the same request", "real/m", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.cacheHit, ask(tc.model, tc.oracle).Usage.CacheHit)
		})
	}
	bh, _ := base.seen()
	rh, _ := real.seen()
	assert.Len(t, bh, 3)
	assert.Len(t, rh, 1)

	// Without an oracle the key is CacheKey's: adding oracles changed none.
	assert.Equal(t, "k", oracleCacheKey("k", ""))
	assert.NotEqual(t, oracleCacheKey("k", "a"), oracleCacheKey("k", "b"))
}

func TestOracleTooLarge(t *testing.T) {
	g, base, _ := oracleGateway(t)
	_, err := g.Complete(context.Background(), modelapi.Request{Model: "baseline/judge", Messages: userMsg("x"),
		Oracle: strings.Repeat("x", modelapi.MaxOracleBytes+1)})
	var ge *Error
	require.True(t, errors.As(err, &ge), "%v", err)
	assert.Equal(t, ClassBadRequest, ge.Class)
	h, _ := base.seen()
	assert.Empty(t, h, "nothing was sent")
}
