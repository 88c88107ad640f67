package gateway

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/benchline/benchline/internal/modelapi"
)

const redirectKey = "sk-redirect-test-0123456789abcdef"

// keyRecorder is an endpoint that records the Authorization header of every
// request it gets and answers each path the gateway calls with a valid
// reply (so a call that reaches it would be scored).
type keyRecorder struct {
	*httptest.Server
	mu   sync.Mutex
	auth []string // one per request, "" when none
}

func newKeyRecorder(t *testing.T, serve func(w http.ResponseWriter, r *http.Request) bool) *keyRecorder {
	rec := &keyRecorder{}
	rec.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.auth = append(rec.auth, r.Header.Get("Authorization"))
		rec.mu.Unlock()
		if serve != nil && serve(w, r) {
			return
		}
		answerAll(w, r)
	}))
	t.Cleanup(rec.Close)
	return rec
}

func (r *keyRecorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.auth...)
}

// answerAll answers a chat completion, a reward (pooling) call and the
// files and batches API with well-formed replies.
func answerAll(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch p := r.URL.Path; {
	case strings.HasSuffix(p, "/chat/completions"):
		_, _ = w.Write([]byte(`{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"elsewhere"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`))
	case strings.HasSuffix(p, "/pooling"):
		_, _ = w.Write([]byte(`{"data":[{"index":0,"data":[1.5]}],"usage":{"prompt_tokens":3}}`))
	case strings.HasSuffix(p, "/files"):
		_, _ = w.Write([]byte(`{"id":"file-1","object":"file","purpose":"batch"}`))
	case strings.HasSuffix(p, "/content"):
		_, _ = w.Write([]byte("\n"))
	case strings.HasSuffix(p, "/batches"):
		if r.Method == http.MethodGet {
			_, _ = w.Write([]byte(`{"object":"list","data":[],"has_more":false}`))
			return
		}
		fallthrough
	case strings.Contains(p, "/batches/"):
		_, _ = w.Write([]byte(`{"id":"batch-1","object":"batch","status":"completed"}`))
	default:
		http.NotFound(w, r)
	}
}

// redirectGateway is a gateway whose "baseline" provider (chat, reward
// models and batch API) is at url, with the key redirectKey.
func redirectGateway(t *testing.T, url string) *Gateway {
	return newTestGateway(t, url+"/v1", func(p *Provider) {
		p.APIKeyEnv = "REDIRECT_KEY"
		p.RewardModels = []string{"reward-*"}
		p.Batch = &BatchConfig{Enabled: true}
	}, Options{Env: mapEnv(map[string]string{"REDIRECT_KEY": redirectKey})})
}

// keyPaths are the calls that carry the provider's key: chat
// completions (retried in the call, which must not retry a refusal),
// reward models, and each call of the files and batches API.
var keyPaths = []struct {
	name string
	call func(ctx context.Context, g *Gateway) error
}{
	{"chat completion", func(ctx context.Context, g *Gateway) error {
		_, err := g.WithRetry(RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Millisecond}).
			Complete(ctx, modelapi.Request{Model: "baseline/m", Messages: userMsg("hi"), NoCache: true})
		return err
	}},
	{"reward", func(ctx context.Context, g *Gateway) error {
		_, err := g.Reward(ctx, modelapi.RewardRequest{Model: "baseline/reward-x", Messages: userMsg("hi"), NoCache: true})
		return err
	}},
	{"list batches", func(ctx context.Context, g *Gateway) error {
		_, _, err := g.FindBatch(ctx, BaselineProvider, "k")
		return err
	}},
	{"upload a batch file", func(ctx context.Context, g *Gateway) error {
		_, err := g.CreateBatch(ctx, BaselineProvider, "k", []byte("{}\n"))
		return err
	}},
	{"poll a batch", func(ctx context.Context, g *Gateway) error {
		_, err := g.PollBatch(ctx, BaselineProvider, "batch-1")
		return err
	}},
	{"download a result file", func(ctx context.Context, g *Gateway) error {
		_, err := g.BatchResults(ctx, BaselineProvider, BatchStatus{ID: "batch-1", Status: "completed", OutputFileID: "file-1"}, map[string]string{})
		return err
	}},
}

// TestRedirectToAnotherOriginIsRefused: a provider that answers 307 to
// another origin (another host by name, or another port) gets its call
// refused, as a permanent error naming the provider and the target's
// origin (without its path or query); the target never gets a request,
// so never the key (issue 33: the key followed the redirect on every call,
// and the answers from elsewhere were scored).
func TestRedirectToAnotherOriginIsRefused(t *testing.T) {
	other := newKeyRecorder(t, nil)
	_, port, err := splitHostPort(other.URL)
	require.NoError(t, err)
	for _, target := range []struct{ name, origin string }{
		{"another host", "http://localhost:" + port},
		{"another port", "http://127.0.0.1:" + port},
	} {
		provider := newKeyRecorder(t, func(w http.ResponseWriter, r *http.Request) bool {
			http.Redirect(w, r, target.origin+r.URL.Path+"?sig=query-secret", http.StatusTemporaryRedirect)
			return true
		})
		g := redirectGateway(t, provider.URL)
		for _, path := range keyPaths {
			t.Run(target.name+"/"+path.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				before := len(provider.seen())
				err := path.call(ctx, g)
				var ge *Error
				require.ErrorAs(t, err, &ge, "the call must fail, not be answered from elsewhere")
				assert.Equal(t, ClassRedirect, ge.Class, ge.Error())
				assert.False(t, ge.Retryable())
				assert.False(t, IsModelFailure(err), "a redirect is the provider's configuration, not the model's failure")
				assert.Equal(t, 1, len(provider.seen())-before, "one request to the provider, not retried")
				msg := ge.Error()
				assert.Contains(t, msg, `provider "baseline"`)
				assert.Contains(t, msg, target.origin)
				assert.NotContains(t, msg, "query-secret")
				assert.NotContains(t, msg, "/v1/")
				assert.NotContains(t, msg, redirectKey)
				var ae *temporal.ApplicationError
				require.ErrorAs(t, ToTemporal(err), &ae)
				assert.True(t, ae.NonRetryable())
				assert.Equal(t, "permanent-redirect", ae.Type())
			})
		}
		for _, a := range provider.seen() {
			assert.Equal(t, "Bearer "+redirectKey, a, "the provider itself gets the key")
		}
	}
	assert.Empty(t, other.seen(), "the other origin got requests (Authorization headers: %q)", other.seen())
}

// TestTransportSendsKeyOnlyToTheProvider: the provider's transport adds
// the key (and the baseline's oracle) only to requests for the provider's
// own origins, base_url's and reward_url's, whatever client sends it.
func TestTransportSendsKeyOnlyToTheProvider(t *testing.T) {
	other := newKeyRecorder(t, nil)
	reward := newKeyRecorder(t, nil)
	provider := newKeyRecorder(t, nil)
	g := newTestGateway(t, provider.URL+"/v1", func(p *Provider) {
		p.APIKeyEnv = "REDIRECT_KEY"
		p.RewardURL = reward.URL + "/pooling"
	}, Options{Env: mapEnv(map[string]string{"REDIRECT_KEY": redirectKey})})
	rt := g.providers[BaselineProvider].http.Transport
	for _, u := range []string{provider.URL + "/v1/models", reward.URL + "/pooling", other.URL + "/v1/models"} {
		req, err := http.NewRequest(http.MethodGet, u, nil)
		require.NoError(t, err)
		resp, err := rt.RoundTrip(req)
		require.NoError(t, err)
		resp.Body.Close()
	}
	assert.Equal(t, []string{"Bearer " + redirectKey}, provider.seen())
	assert.Equal(t, []string{"Bearer " + redirectKey}, reward.seen(), "reward_url is the provider's too")
	assert.Equal(t, []string{""}, other.seen(), "another origin never gets the key")
}

// TestSameOriginRedirect: a redirect within the provider's origin is
// followed, with the key; a loop of them ends after maxRedirects as a
// permanent error, not a retried network failure.
func TestSameOriginRedirect(t *testing.T) {
	provider := newKeyRecorder(t, func(w http.ResponseWriter, r *http.Request) bool {
		switch {
		case strings.HasPrefix(r.URL.Path, "/v1/"):
			http.Redirect(w, r, "/moved"+r.URL.Path, http.StatusTemporaryRedirect)
		case strings.HasPrefix(r.URL.Path, "/loop"):
			http.Redirect(w, r, r.URL.Path+"x", http.StatusTemporaryRedirect)
		default:
			return false
		}
		return true
	})
	g := redirectGateway(t, provider.URL)
	resp, err := g.Complete(context.Background(), modelapi.Request{Model: "baseline/m", Messages: userMsg("hi")})
	require.NoError(t, err)
	assert.Equal(t, "elsewhere", resp.Choices[0].Content)
	assert.Equal(t, []string{"Bearer " + redirectKey, "Bearer " + redirectKey}, provider.seen())

	g = redirectGateway(t, provider.URL+"/loop")
	_, err = g.Complete(context.Background(), modelapi.Request{Model: "baseline/m", Messages: userMsg("hi")})
	var ge *Error
	require.ErrorAs(t, err, &ge)
	assert.Equal(t, ClassRedirect, ge.Class, ge.Error())
	assert.Contains(t, ge.Error(), "redirects")
	assert.Len(t, provider.seen(), 2+1+maxRedirects, "the loop is cut after maxRedirects")
}

func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"https://api.example.com/v1", "https://api.example.com/v2/x?y", true},
		{"https://api.example.com/v1", "https://API.example.com:443/v1", true},
		{"http://h/v1", "http://h:80/v1", true},
		{"https://h/v1", "http://h/v1", false},
		{"https://h/v1", "https://h:8443/v1", false},
		{"http://127.0.0.1:8000/v1", "http://localhost:8000/v1", false},
		{"https://api.example.com/v1", "https://api.example.com.evil/v1", false},
		{"http://[::1]:80/v1", "http://[::1]/v1", true},
	} {
		a, err := url.Parse(tc.a)
		require.NoError(t, err)
		b, err := url.Parse(tc.b)
		require.NoError(t, err)
		assert.Equal(t, tc.same, originOf(a) == originOf(b), "%s vs %s", tc.a, tc.b)
	}
	u, _ := url.Parse("https://user:pass@Evil.example:8443/p?q=1#f")
	assert.Equal(t, "https://evil.example:8443", originOf(u).String(), "no credentials, path or query")
}

func splitHostPort(u string) (string, string, error) {
	pu, err := url.Parse(u)
	if err != nil {
		return "", "", err
	}
	return pu.Hostname(), pu.Port(), nil
}
