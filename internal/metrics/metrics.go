// Package metrics holds benchline's Prometheus metrics and the worker's
// /metrics and /healthz endpoints. Every metric is named benchline_…; the
// Temporal SDK's own metrics (temporal_…) are reported into the same
// registry through SDKHandler.
//
// The parts that measure (the model gateway, the sandbox, the shard
// activities) each define the small interface they call; *Metrics
// implements all of them, and internal/app wires it in. A nil *Metrics is
// never passed: a part without metrics gets a nil interface and skips the
// call.
package metrics

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/benchline/benchline/internal/buildinfo"
	"github.com/benchline/benchline/internal/modelapi"
)

// Metrics is one process's registry and benchline's collectors. Safe for
// concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	calls       *prometheus.CounterVec
	tokens      *prometheus.CounterVec
	cost        *prometheus.CounterVec
	cacheHits   *prometheus.CounterVec
	callSeconds *prometheus.HistogramVec
	limiterWait *prometheus.HistogramVec

	sandboxRuns    *prometheus.CounterVec
	sandboxSeconds *prometheus.HistogramVec

	samples      *prometheus.CounterVec
	shardSeconds *prometheus.HistogramVec

	ready atomic.Bool

	seriesMu sync.RWMutex
	series   map[modelKey]*modelSeries // resolved children of the hot path
	waits    map[string]prometheus.Observer
}

type modelKey struct{ provider, model string }

// modelSeries are one model's counters, resolved once: WithLabelValues
// hashes its labels on every call, which costs more than the counting.
type modelSeries struct {
	ok, hit, hits, prompt, completion, cost prometheus.Counter
	latency                                 prometheus.Observer
}

func (m *Metrics) seriesOf(provider, model string) *modelSeries {
	k := modelKey{provider, model}
	m.seriesMu.RLock()
	s := m.series[k]
	m.seriesMu.RUnlock()
	if s != nil {
		return s
	}
	s = &modelSeries{
		ok:         m.calls.WithLabelValues(provider, model, StatusOK),
		hit:        m.calls.WithLabelValues(provider, model, StatusCacheHit),
		hits:       m.cacheHits.WithLabelValues(provider, model),
		prompt:     m.tokens.WithLabelValues(provider, model, "prompt"),
		completion: m.tokens.WithLabelValues(provider, model, "completion"),
		cost:       m.cost.WithLabelValues(provider, model),
		latency:    m.callSeconds.WithLabelValues(provider),
	}
	m.seriesMu.Lock()
	defer m.seriesMu.Unlock()
	if prev := m.series[k]; prev != nil {
		return prev
	}
	m.series[k] = s
	return s
}

// New returns Metrics on a fresh registry, with the Go runtime and process
// collectors.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), series: map[modelKey]*modelSeries{}, waits: map[string]prometheus.Observer{}}
	m.calls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "benchline_model_calls_total",
		Help: "Model calls through the gateway (Complete and Reward), by provider, model and status: ok, cache_hit, or the failure's error class.",
	}, []string{"provider", "model", "status"})
	m.tokens = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "benchline_model_tokens_total",
		Help: "Tokens of answered model calls not served from cache, by provider, model and kind (prompt, completion).",
	}, []string{"provider", "model", "kind"})
	m.cost = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "benchline_model_cost_usd_total",
		Help: "Cost in USD of answered model calls not served from cache (the providers file's prices).",
	}, []string{"provider", "model"})
	m.cacheHits = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "benchline_model_cache_hits_total",
		Help: "Model calls answered from the response cache (shard segment or process LRU).",
	}, []string{"provider", "model"})
	m.callSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "benchline_model_call_seconds",
		Help:    "Latency of the successful HTTP attempt of answered model calls not served from cache.",
		Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
	}, []string{"provider"})
	m.limiterWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "benchline_model_limiter_wait_seconds",
		Help:    "Time an HTTP attempt waited for its provider's limiter (adaptive concurrency, Retry-After pause, request and token rates).",
		Buckets: []float64{.001, .01, .1, .5, 1, 5, 15, 60},
	}, []string{"provider"})
	m.sandboxRuns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "benchline_sandbox_runs_total",
		Help: "Sandboxed program steps (bubblewrap runs), by language, step (compile, run) and status (ok, failed, timeout, memory, output-limit, sandbox-error).",
	}, []string{"language", "step", "status"})
	m.sandboxSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "benchline_sandbox_run_seconds",
		Help:    "Wall time of sandboxed program steps, by language and step.",
		Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"language", "step"})
	m.samples = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "benchline_samples_total",
		Help: "Samples finished by shard activities, by activity (RunShard, ScoreShard) and status: ok, or the row's error class.",
	}, []string{"activity", "status"})
	m.shardSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "benchline_shard_duration_seconds",
		Help:    "Duration of shard activity attempts, by activity and outcome (ok, error).",
		Buckets: prometheus.ExponentialBuckets(0.5, 2, 14), // 0.5 s to about 2.3 h
	}, []string{"activity", "outcome"})
	bi := buildinfo.Get()
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "benchline_build_info",
		Help:        "Always 1; its labels say which benchline runs: version, commit, Go version and build date (benchline version --json).",
		ConstLabels: prometheus.Labels{"version": bi.Version, "commit": bi.Commit, "go_version": bi.GoVersion, "build_date": bi.BuildDate},
	})
	build.Set(1)
	m.reg.MustRegister(build, m.calls, m.tokens, m.cost, m.cacheHits, m.callSeconds, m.limiterWait,
		m.sandboxRuns, m.sandboxSeconds, m.samples, m.shardSeconds,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry is where every metric of the process is registered.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// ModelCall counts one gateway call (gateway.Observer).
func (m *Metrics) ModelCall(provider, model, status string, u modelapi.Usage) {
	switch status {
	case StatusCacheHit:
		s := m.seriesOf(provider, model)
		s.hit.Inc()
		s.hits.Inc()
	case StatusOK:
		s := m.seriesOf(provider, model)
		s.ok.Inc()
		if u.PromptTokens > 0 {
			s.prompt.Add(float64(u.PromptTokens))
		}
		if u.CompletionTokens > 0 {
			s.completion.Add(float64(u.CompletionTokens))
		}
		if u.CostUSD > 0 {
			s.cost.Add(u.CostUSD)
		}
		s.latency.Observe(u.Latency.Seconds())
	default: // failures: rare, and their classes many
		m.calls.WithLabelValues(provider, model, status).Inc()
	}
}

// Statuses of ModelCall besides error classes.
const (
	StatusOK       = "ok"
	StatusCacheHit = "cache_hit"
)

// LimiterWait records one attempt's wait for admission (gateway.Observer).
func (m *Metrics) LimiterWait(provider string, d time.Duration) {
	m.seriesMu.RLock()
	o := m.waits[provider]
	m.seriesMu.RUnlock()
	if o == nil {
		o = m.limiterWait.WithLabelValues(provider)
		m.seriesMu.Lock()
		m.waits[provider] = o
		m.seriesMu.Unlock()
	}
	o.Observe(d.Seconds())
}

// SandboxRun counts one sandboxed step.
func (m *Metrics) SandboxRun(language, step, status string, d time.Duration) {
	if language == "" {
		language = "unknown"
	}
	if step == "" {
		step = "run"
	}
	m.sandboxRuns.WithLabelValues(language, step, status).Inc()
	m.sandboxSeconds.WithLabelValues(language, step).Observe(d.Seconds())
}

// SampleDone counts one finished sample (activities.Observer).
func (m *Metrics) SampleDone(activity, status string) {
	m.samples.WithLabelValues(activity, status).Inc()
}

// ShardDone records one shard activity attempt (activities.Observer).
func (m *Metrics) ShardDone(activity string, d time.Duration, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	m.shardSeconds.WithLabelValues(activity, outcome).Observe(d.Seconds())
}

// LimitSource reports each provider's adaptive concurrency limit and
// requests in flight, read at scrape time.
type LimitSource func(emit func(provider string, limit float64, inflight int))

// WatchLimits exports benchline_model_concurrency_limit and
// benchline_model_inflight from src at every scrape.
func (m *Metrics) WatchLimits(src LimitSource) {
	m.reg.MustRegister(limitCollector{src})
}

var (
	limitDesc = prometheus.NewDesc("benchline_model_concurrency_limit",
		"The adaptive (AIMD) concurrency limit of each provider in this process.", []string{"provider"}, nil)
	inflightDesc = prometheus.NewDesc("benchline_model_inflight",
		"HTTP attempts in flight to each provider from this process.", []string{"provider"}, nil)
)

type limitCollector struct{ src LimitSource }

func (c limitCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- limitDesc
	ch <- inflightDesc
}

func (c limitCollector) Collect(ch chan<- prometheus.Metric) {
	c.src(func(provider string, limit float64, inflight int) {
		ch <- prometheus.MustNewConstMetric(limitDesc, prometheus.GaugeValue, limit, provider)
		ch <- prometheus.MustNewConstMetric(inflightDesc, prometheus.GaugeValue, float64(inflight), provider)
	})
}

// SetReady marks the process ready: /healthz answers 200 from then on.
// The worker calls it once every worker.Start has returned, i.e. once it
// polls its task queues.
func (m *Metrics) SetReady(ready bool) { m.ready.Store(ready) }

// Handler serves GET /metrics (the Prometheus text format) and GET
// /healthz (200 "ok" once SetReady(true), 503 before).
func (m *Metrics) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if !m.ready.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("starting: not polling yet\n"))
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	return mux
}
