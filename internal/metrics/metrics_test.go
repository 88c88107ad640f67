package metrics_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/benchline/benchline/internal/buildinfo"
	"github.com/benchline/benchline/internal/metrics"
	"github.com/benchline/benchline/internal/modelapi"
)

func TestHealthzOnlyOnceReady(t *testing.T) {
	m := metrics.New()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/healthz"); code != http.StatusServiceUnavailable {
		t.Errorf("/healthz before ready: %d, want 503", code)
	}
	m.SetReady(true)
	if code, body := get("/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz when ready: %d %q, want 200 ok", code, body)
	}
	if code, _ := get("/nosuch"); code != http.StatusNotFound {
		t.Errorf("/nosuch: %d, want 404", code)
	}
}

// TestCounters: what each observation adds, read back through the
// exposition format a scrape sees.
func TestCounters(t *testing.T) {
	m := metrics.New()
	u := modelapi.Usage{PromptTokens: 20, CompletionTokens: 3, CostUSD: 0.5, Latency: 30 * time.Millisecond}
	m.ModelCall("openai", "gpt-x", metrics.StatusOK, u)
	m.ModelCall("openai", "gpt-x", metrics.StatusOK, u)
	m.ModelCall("openai", "gpt-x", metrics.StatusCacheHit, u) // no tokens or cost: not paid
	m.ModelCall("openai", "gpt-x", "rate_limit", modelapi.Usage{})
	m.LimiterWait("openai", 2*time.Second)
	m.SandboxRun("python", "run", "ok", time.Second)
	m.SandboxRun("csharp", "compile", "failed", time.Second)
	m.SampleDone("RunShard", "ok")
	m.SampleDone("RunShard", "infrastructure")
	m.ShardDone("RunShard", 3*time.Second, nil)
	m.ShardDone("ScoreShard", time.Second, errors.New("boom"))
	m.WatchLimits(func(emit func(string, float64, int)) { emit("openai", 12.5, 4) })

	want := `
# HELP benchline_model_calls_total Model calls through the gateway (Complete and Reward), by provider, model and status: ok, cache_hit, or the failure's error class.
# TYPE benchline_model_calls_total counter
benchline_model_calls_total{model="gpt-x",provider="openai",status="cache_hit"} 1
benchline_model_calls_total{model="gpt-x",provider="openai",status="ok"} 2
benchline_model_calls_total{model="gpt-x",provider="openai",status="rate_limit"} 1
# HELP benchline_model_tokens_total Tokens of answered model calls not served from cache, by provider, model and kind (prompt, completion).
# TYPE benchline_model_tokens_total counter
benchline_model_tokens_total{kind="completion",model="gpt-x",provider="openai"} 6
benchline_model_tokens_total{kind="prompt",model="gpt-x",provider="openai"} 40
# HELP benchline_model_cost_usd_total Cost in USD of answered model calls not served from cache (the providers file's prices).
# TYPE benchline_model_cost_usd_total counter
benchline_model_cost_usd_total{model="gpt-x",provider="openai"} 1
# HELP benchline_model_cache_hits_total Model calls answered from the response cache (shard segment or process LRU).
# TYPE benchline_model_cache_hits_total counter
benchline_model_cache_hits_total{model="gpt-x",provider="openai"} 1
# HELP benchline_sandbox_runs_total Sandboxed program steps (bubblewrap runs), by language, step (compile, run) and status (ok, failed, timeout, memory, output-limit, sandbox-error).
# TYPE benchline_sandbox_runs_total counter
benchline_sandbox_runs_total{language="csharp",status="failed",step="compile"} 1
benchline_sandbox_runs_total{language="python",status="ok",step="run"} 1
# HELP benchline_samples_total Samples finished by shard activities, by activity (RunShard, ScoreShard) and status: ok, or the row's error class.
# TYPE benchline_samples_total counter
benchline_samples_total{activity="RunShard",status="infrastructure"} 1
benchline_samples_total{activity="RunShard",status="ok"} 1
# HELP benchline_model_concurrency_limit The adaptive (AIMD) concurrency limit of each provider in this process.
# TYPE benchline_model_concurrency_limit gauge
benchline_model_concurrency_limit{provider="openai"} 12.5
# HELP benchline_model_inflight HTTP attempts in flight to each provider from this process.
# TYPE benchline_model_inflight gauge
benchline_model_inflight{provider="openai"} 4
`
	names := []string{"benchline_model_calls_total", "benchline_model_tokens_total", "benchline_model_cost_usd_total",
		"benchline_model_cache_hits_total", "benchline_sandbox_runs_total", "benchline_samples_total",
		"benchline_model_concurrency_limit", "benchline_model_inflight"}
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
	for name, n := range map[string]int{
		"benchline_model_limiter_wait_seconds": 1, "benchline_model_call_seconds": 1,
		"benchline_sandbox_run_seconds": 2, "benchline_shard_duration_seconds": 2,
	} {
		if got, err := testutil.GatherAndCount(m.Registry(), name); err != nil || got != n {
			t.Errorf("%s: %d series (%v), want %d", name, got, err, n)
		}
	}
}

// TestConcurrentObserve: callers racing to create and use the same series
// lose no count (run with -race).
func TestConcurrentObserve(t *testing.T) {
	m := metrics.New()
	const callers, calls = 8, 500
	done := make(chan struct{})
	for c := range callers {
		go func() {
			defer func() { done <- struct{}{} }()
			model := []string{"a", "b"}[c%2]
			for range calls {
				m.LimiterWait("p", time.Millisecond)
				m.ModelCall("p", model, metrics.StatusOK, modelapi.Usage{PromptTokens: 1})
				m.ModelCall("p", model, metrics.StatusCacheHit, modelapi.Usage{})
			}
		}()
	}
	for range callers {
		<-done
	}
	want := `
# HELP benchline_model_cache_hits_total Model calls answered from the response cache (shard segment or process LRU).
# TYPE benchline_model_cache_hits_total counter
benchline_model_cache_hits_total{model="a",provider="p"} 2000
benchline_model_cache_hits_total{model="b",provider="p"} 2000
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "benchline_model_cache_hits_total"); err != nil {
		t.Error(err)
	}
	if n, err := testutil.GatherAndCount(m.Registry(), "benchline_model_limiter_wait_seconds"); err != nil || n != 1 {
		t.Errorf("limiter wait series: %d (%v), want 1", n, err)
	}
}

// TestBuildInfo: the gauge says which build runs, with buildinfo's values.
func TestBuildInfo(t *testing.T) {
	bi := buildinfo.Get()
	want := fmt.Sprintf(`
# HELP benchline_build_info Always 1; its labels say which benchline runs: version, commit, Go version and build date (benchline version --json).
# TYPE benchline_build_info gauge
benchline_build_info{build_date=%q,commit=%q,go_version=%q,version=%q} 1
`, bi.BuildDate, bi.Commit, bi.GoVersion, bi.Version)
	if err := testutil.GatherAndCompare(metrics.New().Registry(), strings.NewReader(want), "benchline_build_info"); err != nil {
		t.Error(err)
	}
}
