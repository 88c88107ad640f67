package gateway

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testLimiter(t *testing.T, p Provider) (*Limiter, *time.Time) {
	t.Helper()
	p.Name, p.BaseURL = "x", "http://x/v1"
	require.NoError(t, p.validate())
	l := NewLimiter(p, 1)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l.now = func() time.Time { return now }
	return l, &now
}

func TestAIMD(t *testing.T) {
	ctx := context.Background()
	l, now := testLimiter(t, Provider{MaxConcurrency: 16, MinConcurrency: 2})
	assert.Equal(t, 16.0, l.Limit(), "starts at max by default")

	// One overload episode: many 429s at once cut the limit once.
	for range 5 {
		require.NoError(t, l.Acquire(ctx, 0))
	}
	for range 5 {
		l.Release(Overload, 0)
	}
	assert.Equal(t, 8.0, l.Limit())

	// After the cooldown another episode cuts again, down to the floor.
	for range 4 {
		*now = now.Add(AIMDCooldown)
		require.NoError(t, l.Acquire(ctx, 0))
		l.Release(Overload, 0)
	}
	assert.Equal(t, 2.0, l.Limit(), "never below min_concurrency")

	// Healthy traffic grows it back additively: about +1 per window.
	for range 100 {
		require.NoError(t, l.Acquire(ctx, 0))
		l.Release(Success, 0)
	}
	assert.InDelta(t, 14.0, l.Limit(), 1.5)
	for range 1000 {
		require.NoError(t, l.Acquire(ctx, 0))
		l.Release(Success, 0)
	}
	assert.Equal(t, 16.0, l.Limit(), "never above max_concurrency")

	// Neutral errors leave it alone.
	require.NoError(t, l.Acquire(ctx, 0))
	l.Release(Neutral, 0)
	assert.Equal(t, 16.0, l.Limit())
}

func TestLimiterBoundsInFlight(t *testing.T) {
	l, _ := testLimiter(t, Provider{MaxConcurrency: 3})
	ctx := context.Background()
	for range 3 {
		require.NoError(t, l.Acquire(ctx, 0))
	}
	// The fourth waits until a release.
	got := make(chan error, 1)
	go func() { got <- l.Acquire(ctx, 0) }()
	select {
	case err := <-got:
		t.Fatalf("acquired beyond the limit: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	l.Release(Success, 0)
	require.NoError(t, <-got)
	assert.Equal(t, 3, l.InFlight())

	// A waiter whose context ends gives up.
	cctx, cancel := context.WithCancel(ctx)
	go func() { got <- l.Acquire(cctx, 0) }()
	cancel()
	assert.ErrorIs(t, <-got, context.Canceled)
}

func TestRetryAfterPausesAcquire(t *testing.T) {
	l, now := testLimiter(t, Provider{MaxConcurrency: 4})
	ctx := context.Background()
	require.NoError(t, l.Acquire(ctx, 0))
	l.Release(Overload, time.Hour)
	// Paused for an hour of the fake clock: a short deadline expires first.
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, l.Acquire(cctx, 0), context.DeadlineExceeded)
	*now = now.Add(time.Hour)
	require.NoError(t, l.Acquire(ctx, 0))
}

// TestRequestRateMeasured checks the request budget by measuring: n
// acquisitions at r per second take at least (n - burst) / r. Only a lower
// bound is asserted, so a slow machine cannot fail it.
func TestRequestRateMeasured(t *testing.T) {
	const rpm = 6000 // 100/s, burst 10
	l, _ := testLimiter(t, Provider{MaxConcurrency: 64, RequestsPerMinute: rpm})
	l.now = time.Now
	ctx := context.Background()
	const n = 60
	start := time.Now()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n / 8 {
				if err := l.Acquire(ctx, 0); err == nil {
					l.Release(Success, 0)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	min := time.Duration(float64(n/8*8-l.requests.Burst()) / (rpm / 60) * float64(time.Second))
	assert.GreaterOrEqual(t, elapsed, min-5*time.Millisecond, "measured %.1f req/s", float64(n)/elapsed.Seconds())
	t.Logf("%d requests in %v: %.1f req/s (limit %d/s)", n, elapsed, float64(n)/elapsed.Seconds(), rpm/60)
}

func TestWorkerShareDividesBudget(t *testing.T) {
	p := Provider{Name: "x", BaseURL: "http://x/v1", RequestsPerMinute: 600, TokensPerMinute: 60000}
	require.NoError(t, p.validate())
	l := NewLimiter(p, 4)
	assert.InDelta(t, 2.5, float64(l.requests.Limit()), 1e-9)
	assert.InDelta(t, 250, float64(l.tokens.Limit()), 1e-9)
}
