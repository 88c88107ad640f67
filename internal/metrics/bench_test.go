package metrics_test

import (
	"testing"
	"time"

	"github.com/benchline/benchline/internal/metrics"
	"github.com/benchline/benchline/internal/modelapi"
)

// BenchmarkObserve is what the gateway adds per call with metrics on,
// from parallel callers: an answered call (its limiter wait, the call,
// tokens, cost, latency) and a cache hit.
func BenchmarkObserve(b *testing.B) {
	m := metrics.New()
	u := modelapi.Usage{PromptTokens: 20, CompletionTokens: 3, CostUSD: 1e-5, Latency: 30 * time.Millisecond}
	b.Run("answered", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				m.LimiterWait("openai", time.Millisecond)
				m.ModelCall("openai", "gpt-4o-mini", metrics.StatusOK, u)
			}
		})
	})
	b.Run("cache-hit", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				m.ModelCall("openai", "gpt-4o-mini", metrics.StatusCacheHit, u)
			}
		})
	})
}
