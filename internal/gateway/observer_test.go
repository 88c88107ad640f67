package gateway

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/modelapi"
)

type observed struct {
	provider, model, status string
	usage                   modelapi.Usage
}

type recordingObserver struct {
	mu    sync.Mutex
	calls []observed
	waits int
}

func (r *recordingObserver) ModelCall(provider, model, status string, u modelapi.Usage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, observed{provider, model, status, u})
}

func (r *recordingObserver) LimiterWait(string, time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waits++
}

// TestObserverSeesEveryCall: one ModelCall per Complete, with the status
// the caller sees (ok, cache_hit, the error's class) and the usage; one
// LimiterWait per HTTP attempt (none for a cache hit).
func TestObserverSeesEveryCall(t *testing.T) {
	const ok = `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"a"},"finish_reason":"stop"}],"usage":{"prompt_tokens":20,"completion_tokens":3,"total_tokens":23}}`
	transport := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		body, _ := io.ReadAll(r.Body)
		_ = r.Body.Close()
		status, reply := 200, ok
		if strings.Contains(string(body), "deny me") {
			status, reply = 401, `{"error":{"message":"no","type":"auth"}}`
		}
		return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(reply)), Request: r}, nil
	})
	obs := &recordingObserver{}
	g := newTestGateway(t, "http://canned/v1", func(p *Provider) {
		p.Prices = Prices{InputPerMTok: 1e6, OutputPerMTok: 2e6}
	}, Options{Transport: transport, Observer: obs})
	tests := []struct {
		name, prompt string
		want         observed
		wantWaits    int
	}{
		{"answered", "hello", observed{"baseline", "echo", "ok", modelapi.Usage{PromptTokens: 20, CompletionTokens: 3, CostUSD: 26}}, 1},
		{"cached", "hello", observed{"baseline", "echo", "cache_hit", modelapi.Usage{PromptTokens: 20, CompletionTokens: 3, CostUSD: 26}}, 0},
		{"refused", "deny me", observed{"baseline", "echo", ClassAuth.String(), modelapi.Usage{}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs.calls, obs.waits = nil, 0
			_, _ = g.Complete(context.Background(), modelapi.Request{Model: "baseline/echo", Messages: userMsg(tt.prompt)})
			if len(obs.calls) != 1 {
				t.Fatalf("%d observed calls, want 1: %+v", len(obs.calls), obs.calls)
			}
			got := obs.calls[0]
			if got.provider != tt.want.provider || got.model != tt.want.model || got.status != tt.want.status ||
				got.usage.PromptTokens != tt.want.usage.PromptTokens || got.usage.CompletionTokens != tt.want.usage.CompletionTokens ||
				got.usage.CostUSD != tt.want.usage.CostUSD {
				t.Errorf("observed %+v, want %+v", got, tt.want)
			}
			if obs.waits != tt.wantWaits {
				t.Errorf("%d limiter waits, want %d", obs.waits, tt.wantWaits)
			}
		})
	}
}
