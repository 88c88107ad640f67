package gateway

import (
	"context"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// AIMD tuning. The limit grows by AIMDIncrease per window of successes
// (1/limit per success, like TCP congestion avoidance) and is multiplied by
// AIMDDecrease on an overload signal, at most once per AIMDCooldown so one
// burst of 429s from requests already in flight counts as one episode.
const (
	AIMDIncrease = 1.0
	AIMDDecrease = 0.5
	AIMDCooldown = time.Second
)

// Limiter is a provider's admission control in one process: an adaptive
// concurrency limit (AIMD), a pause honouring Retry-After (at most the
// provider's max_retry_after), and request and token rate limits.
type Limiter struct {
	min, max float64
	maxPause time.Duration // the longest pause one Release may set
	requests *rate.Limiter // nil when unlimited
	tokens   *rate.Limiter // nil when unlimited
	now      func() time.Time

	mu          sync.Mutex
	limit       float64
	inflight    int
	pausedUntil time.Time
	lastCut     time.Time
	changed     chan struct{} // closed and replaced on every release or limit change
}

// NewLimiter returns the limiter for p, whose rate limits are divided by
// share (the number of processes sharing the provider's budget; 1 when the
// budget is enforced elsewhere or there is one process).
func NewLimiter(p Provider, share int) *Limiter {
	share = max(share, 1)
	l := &Limiter{
		min: float64(p.MinConcurrency), max: float64(p.MaxConcurrency), limit: float64(p.InitialConcurrency),
		maxPause: p.MaxRetryAfter, now: time.Now, changed: make(chan struct{}),
	}
	if l.maxPause <= 0 {
		l.maxPause = DefaultMaxRetryAfter
	}
	if p.RequestsPerMinute > 0 {
		rps := p.RequestsPerMinute / 60 / float64(share)
		l.requests = rate.NewLimiter(rate.Limit(rps), max(1, int(math.Ceil(rps/10))))
	}
	if p.TokensPerMinute > 0 {
		tps := p.TokensPerMinute / 60 / float64(share)
		// A burst of a few seconds of tokens so one large prompt can pass.
		l.tokens = rate.NewLimiter(rate.Limit(tps), max(1, int(tps*5)))
	}
	return l
}

// Acquire waits for a slot and for the request and token budgets. The
// caller must call Release exactly once after a nil return.
func (l *Limiter) Acquire(ctx context.Context, estTokens int) error {
	if l.requests != nil {
		if err := l.requests.Wait(ctx); err != nil {
			return err
		}
	}
	if l.tokens != nil && estTokens > 0 {
		if err := l.tokens.WaitN(ctx, min(estTokens, l.tokens.Burst())); err != nil {
			return err
		}
	}
	for {
		l.mu.Lock()
		now := l.now()
		if wait := l.pausedUntil.Sub(now); wait > 0 {
			l.mu.Unlock()
			if err := sleep(ctx, wait); err != nil {
				return err
			}
			continue
		}
		if l.inflight < int(l.limit) {
			l.inflight++
			l.mu.Unlock()
			return nil
		}
		ch := l.changed
		l.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Outcome is what a released request observed.
type Outcome int

// Outcomes of a request as the limiter sees them.
const (
	// Success grows the limit.
	Success Outcome = iota
	// Overload (429, 503) cuts the limit and pauses for Retry-After.
	Overload
	// Neutral (other errors) leaves the limit alone.
	Neutral
)

// Release returns a slot and adapts the limit. retryAfter > 0 pauses new
// acquisitions until then, for at most the provider's max_retry_after: one
// call's Retry-After never stops the provider's other callers longer.
func (l *Limiter) Release(o Outcome, retryAfter time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inflight--
	now := l.now()
	switch o {
	case Success:
		l.limit = math.Min(l.max, l.limit+AIMDIncrease/l.limit)
	case Overload:
		if now.Sub(l.lastCut) >= AIMDCooldown {
			l.limit = math.Max(l.min, l.limit*AIMDDecrease)
			l.lastCut = now
		}
	}
	if retryAfter > 0 {
		if until := now.Add(min(retryAfter, l.maxPause)); until.After(l.pausedUntil) {
			l.pausedUntil = until
		}
	}
	close(l.changed)
	l.changed = make(chan struct{})
}

// Limit is the current concurrency limit.
func (l *Limiter) Limit() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.limit
}

// InFlight is the number of acquired slots.
func (l *Limiter) InFlight() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inflight
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
