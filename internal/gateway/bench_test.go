package gateway

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/metrics"
	"github.com/benchline/benchline/internal/modelapi"
	openai "github.com/sashabaranov/go-openai"
)

// benchConcurrency is the number of concurrent callers in the CPU benchmarks.
const benchConcurrency = 64

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runConcurrent calls f b.N times from benchConcurrency goroutines and
// reports calls/s and process CPU µs per call (client and the in-process
// server together).
func runConcurrent(b *testing.B, f func(i int) error) {
	b.Helper()
	var next atomic.Int64
	var failed atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, t0 := cpuTime(), time.Now()
	var wg sync.WaitGroup
	for range benchConcurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				if err := f(i); err != nil {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	elapsed, cpu := time.Since(t0), cpuTime()-cpu0
	b.StopTimer()
	if failed.Load() > 0 {
		b.Fatalf("%d calls failed", failed.Load())
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/call")
}

// BenchmarkZeroLatency compares a bare go-openai loop with the gateway
// against the zero-latency baseline server at the same concurrency.
func BenchmarkZeroLatency(b *testing.B) {
	_, url := startBaseline(b, baseline.Options{})
	msgs := make([][]openai.ChatCompletionMessage, 4096)
	for i := range msgs {
		msgs[i] = userMsg(fmt.Sprintf("benchmark question number %d: what is the answer?", i))
	}
	b.Run("bare-go-openai", func(b *testing.B) {
		cfg := openai.DefaultConfig("")
		cfg.BaseURL = url
		cfg.HTTPClient = &http.Client{Transport: newTransport(benchConcurrency)}
		c := openai.NewClientWithConfig(cfg)
		runConcurrent(b, func(i int) error {
			_, err := c.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
				Model: "echo", Messages: msgs[i%len(msgs)], Seed: &i})
			return err
		})
	})
	b.Run("gateway-no-cache", func(b *testing.B) {
		g := newTestGateway(b, url, func(p *Provider) { p.MaxConcurrency = benchConcurrency }, Options{})
		runConcurrent(b, func(i int) error {
			_, err := g.Complete(context.Background(), modelapi.Request{Model: "baseline/echo", Messages: msgs[i%len(msgs)], Seed: &i, NoCache: true})
			return err
		})
	})
	b.Run("gateway-cache-miss", func(b *testing.B) {
		g := newTestGateway(b, url, func(p *Provider) { p.MaxConcurrency = benchConcurrency }, Options{Cache: NewLRU(1<<20, 0)})
		off := int(time.Now().UnixNano()) // fresh keys every run
		runConcurrent(b, func(i int) error {
			seed := off + i
			_, err := g.Complete(context.Background(), modelapi.Request{Model: "baseline/echo", Messages: msgs[i%len(msgs)], Seed: &seed})
			return err
		})
	})
	b.Run("gateway-cache-hit", func(b *testing.B) {
		g := newTestGateway(b, url, func(p *Provider) { p.MaxConcurrency = benchConcurrency }, Options{})
		for i := range msgs {
			if _, err := g.Complete(context.Background(), modelapi.Request{Model: "baseline/echo", Messages: msgs[i]}); err != nil {
				b.Fatal(err)
			}
		}
		runConcurrent(b, func(i int) error {
			_, err := g.Complete(context.Background(), modelapi.Request{Model: "baseline/echo", Messages: msgs[i%len(msgs)]})
			return err
		})
	})
}

// BenchmarkThroughput200ms measures throughput against an endpoint with
// 200 ms latency and a limit of 64 concurrent requests: the ceiling is
// 64/0.2 = 320 calls/s. 256 callers compete for the 64 slots; each
// iteration is 640 calls (2 s at the ceiling).
func BenchmarkThroughput200ms(b *testing.B) {
	_, url := startBaseline(b, baseline.Options{Faults: baseline.Faults{Latency: 200 * time.Millisecond}})
	g := newTestGateway(b, url, func(p *Provider) { p.MaxConcurrency = 64 }, Options{})
	const perIter, callers = 640, 256
	var total time.Duration
	var calls int
	for it := 0; it < b.N; it++ {
		var next atomic.Int64
		var failed atomic.Int64
		t0 := time.Now()
		var wg sync.WaitGroup
		for range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1)) - 1
					if i >= perIter {
						return
					}
					seed := it*perIter + i
					if _, err := g.Complete(context.Background(), modelapi.Request{Model: "baseline/echo", Messages: userMsg(fmt.Sprint("q", i)), Seed: &seed, NoCache: true}); err != nil {
						failed.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		total += time.Since(t0)
		calls += perIter
		if failed.Load() > 0 {
			b.Fatalf("%d calls failed", failed.Load())
		}
	}
	rate := float64(calls) / total.Seconds()
	b.ReportMetric(rate, "calls/s")
	b.ReportMetric(100*rate/320, "%-of-320")
}

// BenchmarkClientOverhead isolates client CPU: go-openai and the gateway
// over an in-memory transport that returns a canned reply, so neither the
// server nor the network adds noise. The difference is the gateway's cost.
func BenchmarkClientOverhead(b *testing.B) {
	const reply = `{"id":"x","object":"chat.completion","model":"echo","choices":[{"index":0,"message":{"role":"assistant","content":"benchmark answer"},"finish_reason":"stop"}],"usage":{"prompt_tokens":20,"completion_tokens":3,"total_tokens":23}}`
	canned := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(reply)), Request: r}, nil
	})
	msgs := userMsg("benchmark question: what is the answer to this question?")
	b.Run("bare-go-openai", func(b *testing.B) {
		cfg := openai.DefaultConfig("")
		cfg.BaseURL = "http://canned/v1"
		cfg.HTTPClient = &http.Client{Transport: canned}
		c := openai.NewClientWithConfig(cfg)
		runConcurrent(b, func(i int) error {
			_, err := c.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{Model: "echo", Messages: msgs, Seed: &i})
			return err
		})
	})
	b.Run("gateway-no-cache", func(b *testing.B) {
		g := newTestGateway(b, "http://canned/v1", func(p *Provider) { p.MaxConcurrency = benchConcurrency }, Options{Transport: canned})
		runConcurrent(b, func(i int) error {
			_, err := g.Complete(context.Background(), modelapi.Request{Model: "baseline/echo", Messages: msgs, Seed: &i, NoCache: true})
			return err
		})
	})
	b.Run("gateway-cache-miss", func(b *testing.B) {
		g := newTestGateway(b, "http://canned/v1", func(p *Provider) { p.MaxConcurrency = benchConcurrency }, Options{Transport: canned, Cache: NewLRU(1<<20, 0)})
		off := int(time.Now().UnixNano())
		runConcurrent(b, func(i int) error {
			seed := off + i
			_, err := g.Complete(context.Background(), modelapi.Request{Model: "baseline/echo", Messages: msgs, Seed: &seed})
			return err
		})
	})
}

// BenchmarkMetricsOverhead measures what the metrics observer adds to a
// call: the canned transport of BenchmarkClientOverhead, with no observer
// and with metrics.Metrics, on a cache miss (limiter wait, call, tokens,
// cost, latency observed) and on a cache hit (one counter pair).
func BenchmarkMetricsOverhead(b *testing.B) {
	const reply = `{"id":"x","object":"chat.completion","model":"echo","choices":[{"index":0,"message":{"role":"assistant","content":"benchmark answer"},"finish_reason":"stop"}],"usage":{"prompt_tokens":20,"completion_tokens":3,"total_tokens":23}}`
	canned := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(reply)), Request: r}, nil
	})
	msgs := userMsg("benchmark question: what is the answer to this question?")
	for _, withMetrics := range []bool{false, true} {
		name := "no-metrics"
		opts := Options{Transport: canned}
		if withMetrics {
			name = "metrics"
			opts.Observer = metrics.New()
		}
		b.Run(name+"/no-cache", func(b *testing.B) {
			g := newTestGateway(b, "http://canned/v1", func(p *Provider) { p.MaxConcurrency = benchConcurrency }, opts)
			runConcurrent(b, func(i int) error {
				_, err := g.Complete(context.Background(), modelapi.Request{Model: "baseline/echo", Messages: msgs, Seed: &i, NoCache: true})
				return err
			})
		})
		b.Run(name+"/cache-hit", func(b *testing.B) {
			g := newTestGateway(b, "http://canned/v1", func(p *Provider) { p.MaxConcurrency = benchConcurrency }, opts)
			if _, err := g.Complete(context.Background(), modelapi.Request{Model: "baseline/echo", Messages: msgs}); err != nil {
				b.Fatal(err)
			}
			runConcurrent(b, func(int) error {
				_, err := g.Complete(context.Background(), modelapi.Request{Model: "baseline/echo", Messages: msgs})
				return err
			})
		})
	}
}
