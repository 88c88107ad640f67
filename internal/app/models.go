package app

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/benchline/benchline/internal/wfclient"

	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/config"
	"github.com/benchline/benchline/internal/gateway"
	"github.com/benchline/benchline/internal/metrics"
)

// OpenGateway builds the model gateway from the providers file (or the
// environment alone). baselineURL, when set, points the built-in baseline
// provider at an embedded server.
func OpenGateway(cfg config.Config, baselineURL string, logger *slog.Logger) (*gateway.Gateway, error) {
	return OpenObservedGateway(cfg, baselineURL, logger, nil)
}

// OpenObservedGateway is OpenGateway with every call counted in m (nil:
// none), and each provider's adaptive limit and calls in flight exported.
func OpenObservedGateway(cfg config.Config, baselineURL string, logger *slog.Logger, m *metrics.Metrics) (*gateway.Gateway, error) {
	gcfg, err := wfclient.LoadProviders(cfg, baselineURL)
	if err != nil {
		return nil, err
	}
	opts := gateway.Options{Config: gcfg, Logger: logger, WorkerShare: cfg.Models.WorkerShare, CacheTTL: cfg.Models.CacheTTL}
	if m != nil {
		opts.Observer = m
	}
	g, err := gateway.New(opts)
	if err != nil {
		return nil, err
	}
	if m != nil {
		m.WatchLimits(func(emit func(string, float64, int)) {
			for _, p := range g.Providers() {
				l := g.Limiter(p)
				emit(p, l.Limit(), l.InFlight())
			}
		})
	}
	// Ride out short outages inside a sample; longer ones go back to
	// Temporal, which retries the shard from its last checkpoint.
	return g.WithRetry(gateway.RetryPolicy{MaxAttempts: 6, MaxElapsed: 2 * time.Minute}), nil
}

// StoreReferences serves baseline/reference answers (and the reward
// references of the reward baselines) from the reference
// files the evaluation engine writes to the object store
// (references/<dataset>/<version>/task-<v>.jsonl). A lookup that misses
// waits for a listing of the store that started after the request arrived,
// so references written before a run's first request are always found;
// concurrent misses share one listing.
type StoreReferences struct {
	Store blob.Store
	// Logger gets one warning per references file that cannot be used
	// (it is skipped, and its prompts get no reference); default none.
	Logger *slog.Logger

	once      sync.Once
	mem       *baseline.MemoryReferences
	mu        sync.Mutex      // serializes scans
	loaded    map[string]bool // key → loaded (false: unusable, skipped)
	lastStart time.Time       // when the last scan started
}

var _ baseline.References = (*StoreReferences)(nil)

// Lookup implements baseline.References.
func (r *StoreReferences) Lookup(key string) (baseline.Reference, bool) {
	arrival := time.Now()
	r.once.Do(func() { r.mem, r.loaded = baseline.NewMemoryReferences(), map[string]bool{} })
	if ref, ok := r.mem.Lookup(key); ok {
		return ref, true
	}
	for {
		r.mu.Lock()
		if ref, ok := r.mem.Lookup(key); ok {
			// A listing that ended while this request waited for the lock
			// loaded it: no need to wait for another.
			r.mu.Unlock()
			return ref, true
		}
		if r.lastStart.After(arrival) {
			// A listing that started after this request arrived has finished.
			r.mu.Unlock()
			break
		}
		if wait := scanEvery - time.Since(r.lastStart); wait > 0 {
			// At most one listing per scanEvery: misses without a reference
			// (prompts no dataset knows) must not list the store each time.
			r.mu.Unlock()
			time.Sleep(wait)
			continue
		}
		r.lastStart = time.Now()
		r.scan()
		r.mu.Unlock()
		break
	}
	return r.mem.Lookup(key)
}

// scanEvery bounds how often a miss lists the store.
const scanEvery = 200 * time.Millisecond

// scan loads reference files not loaded yet. Callers hold r.mu.
func (r *StoreReferences) scan() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	infos, err := r.Store.List(ctx, "references/")
	if err != nil {
		r.warn("baseline references: cannot list the store; retrying on the next miss", "err", err)
		return
	}
	for _, info := range infos {
		if _, seen := r.loaded[info.Key]; seen || !strings.HasSuffix(info.Key, ".jsonl") {
			continue
		}
		_, err := loadStoreReferences(ctx, r.Store, info.Key, info.Key, r.mem)
		switch {
		case errors.Is(err, baseline.ErrBadReferences):
			// Its contents will not change: say so once and skip it.
			r.loaded[info.Key] = false
			r.warn("baseline references: file cannot be used; its prompts get no reference", "key", info.Key, "err", err)
		case err != nil:
			r.warn("baseline references: cannot read file; retrying on the next miss", "key", info.Key, "err", err)
		default:
			r.loaded[info.Key] = true
		}
	}
}

func (r *StoreReferences) warn(msg string, args ...any) {
	if r.Logger != nil {
		r.Logger.Warn(msg, args...)
	}
}
