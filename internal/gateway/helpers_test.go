package gateway

import (
	"net/http/httptest"
	"testing"

	"github.com/benchline/benchline/internal/baseline"
	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"
)

func userMsg(s string) []openai.ChatCompletionMessage {
	return []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: s}}
}

// startBaseline serves a baseline server on a real local listener.
func startBaseline(t testing.TB, opts baseline.Options) (*baseline.Server, string) {
	t.Helper()
	s, err := baseline.New(opts)
	require.NoError(t, err)
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return s, hs.URL + "/v1"
}

// newTestGateway builds a gateway whose "baseline" provider points at url.
func newTestGateway(t testing.TB, url string, mut func(*Provider), opts Options) *Gateway {
	t.Helper()
	p := &Provider{BaseURL: url, MaxConcurrency: 32}
	if mut != nil {
		mut(p)
	}
	opts.Config = &Config{Providers: map[string]*Provider{BaselineProvider: p}}
	if opts.Env == nil {
		opts.Env = func(string) (string, bool) { return "", false }
	}
	g, err := New(opts)
	require.NoError(t, err)
	return g
}
