package gateway

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/benchline/benchline/internal/modelapi"
)

// TestRetryAfterIsCapped: whatever a 429 or 503 asks for, the wait the
// error carries (and Temporal's NextRetryDelay, the limiter's pause and a
// sample's wait, which all read it) is at most the provider's
// max_retry_after; negative, NaN and past values ask for no wait.
func TestRetryAfterIsCapped(t *testing.T) {
	far := time.Now().Add(100 * 24 * time.Hour).UTC().Format(http.TimeFormat)
	past := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
	for _, tc := range []struct {
		name   string
		status int
		header map[string]string
		limit  time.Duration // max_retry_after; 0: the default
		want   time.Duration
	}{
		{"100000 s, default cap", 429, map[string]string{"Retry-After": "100000"}, 0, DefaultMaxRetryAfter},
		{"100000 s", 429, map[string]string{"Retry-After": "100000"}, 5 * time.Second, 5 * time.Second},
		{"503 100000 s", 503, map[string]string{"Retry-After": "100000"}, 5 * time.Second, 5 * time.Second},
		{"under the cap", 429, map[string]string{"Retry-After": "3"}, 5 * time.Second, 3 * time.Second},
		{"past any duration", 429, map[string]string{"Retry-After": "1e300"}, 5 * time.Second, 5 * time.Second},
		{"Inf", 429, map[string]string{"Retry-After": "Inf"}, 5 * time.Second, 5 * time.Second},
		{"NaN", 429, map[string]string{"Retry-After": "NaN"}, 5 * time.Second, 0},
		{"negative", 429, map[string]string{"Retry-After": "-100000"}, 5 * time.Second, 0},
		{"a date 100 days ahead", 429, map[string]string{"Retry-After": far}, 5 * time.Second, 5 * time.Second},
		{"a date in the past", 429, map[string]string{"Retry-After": past}, 5 * time.Second, 0},
		{"retry-after-ms past any duration", 429, map[string]string{"Retry-After-Ms": "1e20"}, 5 * time.Second, 5 * time.Second},
		{"retry-after-ms negative", 429, map[string]string{"Retry-After-Ms": "-5"}, 5 * time.Second, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				for k, v := range tc.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(`{"error":{"message":"slow down"}}`))
			}))
			defer hs.Close()
			g := newTestGateway(t, hs.URL+"/v1", func(p *Provider) { p.MaxRetryAfter = tc.limit }, Options{})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err := g.Complete(ctx, modelapi.Request{Model: "baseline/x", Messages: userMsg("hi")})
			var ge *Error
			require.ErrorAs(t, err, &ge)
			require.True(t, ge.Retryable(), ge.Error())
			assert.Equal(t, tc.want, ge.RetryAfter, ge.Error())
			var ae *temporal.ApplicationError
			require.ErrorAs(t, ToTemporal(err), &ae)
			assert.Equal(t, tc.want, ae.NextRetryDelay())
			if tc.want != 0 && tc.header["Retry-After"] == "100000" {
				assert.Contains(t, ge.Error(), "27h46m40s", "the error says what the provider asked for")
				assert.Contains(t, ge.Error(), "max_retry_after")
			}
		})
	}
}

// TestOneRetryAfterDoesNotStallTheProvider: one model of a provider
// answers 429 with Retry-After: 100000 (27 h 46 m); another caller of the
// same provider, with another model, is served once max_retry_after has
// passed (issue 33: it waited the whole 27 h, 0 requests in 120 s).
func TestOneRetryAfterDoesNotStallTheProvider(t *testing.T) {
	var ok atomic.Int32
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Model string }
		_ = json.NewDecoder(r.Body).Decode(&body)
		w.Header().Set("Content-Type", "application/json")
		if body.Model == "limited" {
			w.Header().Set("Retry-After", "100000")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"error":{"message":"Rate limit reached","type":"requests"}}`))
			return
		}
		ok.Add(1)
		_, _ = w.Write([]byte(`{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"fine"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`))
	}))
	defer hs.Close()
	const limit = 100 * time.Millisecond
	g := newTestGateway(t, hs.URL+"/v1", func(p *Provider) { p.MaxRetryAfter = limit }, Options{})

	// The first run's sample, retrying in the call as shard activities do.
	first := g.WithRetry(RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := first.Complete(ctx, modelapi.Request{Model: "baseline/limited", Messages: userMsg("a"), NoCache: true})
	var ge *Error
	require.ErrorAs(t, err, &ge)
	assert.Equal(t, ClassRateLimit, ge.Class)
	assert.Equal(t, limit, ge.RetryAfter)
	assert.Equal(t, 3, ge.Attempts)

	// The second run, right after: the provider is paused for at most the
	// cap. The deadlines only prevent a hang (the bug waited 27 h).
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := g.Complete(ctx, modelapi.Request{Model: "baseline/healthy", Messages: userMsg("b"), NoCache: true})
	require.NoError(t, err, "the second caller is stalled by the first one's Retry-After")
	assert.Equal(t, "fine", resp.Choices[0].Content)
	assert.Equal(t, int32(1), ok.Load())
}

// TestLimiterPauseIsCapped: Release with a Retry-After past the provider's
// max_retry_after pauses the provider for the cap only.
func TestLimiterPauseIsCapped(t *testing.T) {
	p := Provider{Name: "x", BaseURL: "http://x/v1", MaxRetryAfter: 50 * time.Millisecond}
	require.NoError(t, p.validate())
	l := NewLimiter(p, 1)
	require.NoError(t, l.Acquire(context.Background(), 0))
	l.Release(Overload, 100000*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, l.Acquire(ctx, 0), "the pause outlives max_retry_after")
	l.Release(Success, 0)

	// A provider without the setting gets the default cap.
	d := NewLimiter(Provider{MaxConcurrency: 1, InitialConcurrency: 1, MinConcurrency: 1}, 1)
	require.NoError(t, d.Acquire(context.Background(), 0))
	d.Release(Overload, time.Duration(math.MaxInt64))
	d.mu.Lock()
	until := d.pausedUntil
	d.mu.Unlock()
	assert.LessOrEqual(t, time.Until(until), DefaultMaxRetryAfter)
}

func TestMaxRetryAfterConfig(t *testing.T) {
	cfg, err := LoadConfig(strings.NewReader("providers:\n  x:\n    base_url: http://a/v1\n    max_retry_after: 5m\n"), mapEnv(nil))
	require.NoError(t, err)
	assert.Equal(t, 5*time.Minute, cfg.Providers["x"].MaxRetryAfter)
	assert.Equal(t, DefaultMaxRetryAfter, cfg.Providers["openai"].MaxRetryAfter, "the default")
	_, err = LoadConfig(strings.NewReader("providers:\n  x:\n    base_url: http://a/v1\n    max_retry_after: -1s\n"), mapEnv(nil))
	assert.ErrorContains(t, err, "max_retry_after")
}
