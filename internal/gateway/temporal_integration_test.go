package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/modelapi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startTemporal runs a Temporal dev server from the CLI that `make setup`
// builds and returns a connected client.
func startTemporal(t *testing.T) (client.Client, string) {
	t.Helper()
	home, _ := os.UserHomeDir()
	bin := filepath.Join(home, ".cache", "benchline", "bin", "temporal")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("temporal CLI not found at %s: run `make setup` (or go test -short to skip integration tests)", bin)
	}
	port, httpPort := freePort(t), freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "server", "start-dev", "--headless", "--ip", "127.0.0.1",
		"--port", fmt.Sprint(port), "--http-port", fmt.Sprint(httpPort),
		"--db-filename", filepath.Join(t.TempDir(), "temporal.db"), "--log-level", "error")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	var c client.Client
	hostPort := fmt.Sprintf("127.0.0.1:%d", port)
	require.Eventually(t, func() bool {
		var err error
		c, err = client.Dial(client.Options{HostPort: hostPort, Logger: quietLogger{}})
		if err != nil {
			return false
		}
		if _, err = c.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
			c.Close()
			return false
		}
		return true
	}, 60*time.Second, 200*time.Millisecond, "temporal dev server did not start")
	t.Cleanup(c.Close)
	return c, hostPort
}

type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}

// fanOut runs one Activities.Complete per request on the provider's queue.
func fanOut(ctx workflow.Context, queue string, reqs []modelapi.Request) ([]string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue: queue, StartToCloseTimeout: 5 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, MaximumAttempts: 10},
	})
	var a *Activities
	futures := make([]workflow.Future, len(reqs))
	for i, r := range reqs {
		futures[i] = workflow.ExecuteActivity(ctx, a.Complete, r)
	}
	out := make([]string, len(reqs))
	for i, f := range futures {
		var resp modelapi.Response
		if err := f.Get(ctx, &resp); err != nil {
			var ae *temporal.ApplicationError
			if errors.As(err, &ae) {
				out[i] = "error:" + ae.Type()
				continue
			}
			return nil, err
		}
		out[i] = resp.Text()
	}
	return out, nil
}

// TestTwoWorkersShareProviderRate: two worker processes (each with its own
// gateway and in-process limiter that alone would allow the full rate) poll
// the provider's task queue; together they stay within its request rate,
// which the Temporal server enforces through TaskQueueActivitiesPerSecond.
// The planted API key never reaches workflow history.
func TestTwoWorkersShareProviderRate(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs the Temporal dev server")
	}
	c, _ := startTemporal(t)

	var (
		mu    sync.Mutex
		times []time.Time
	)
	srv, err := baseline.New(baseline.Options{})
	require.NoError(t, err)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/chat/completions" {
			mu.Lock()
			times = append(times, time.Now())
			mu.Unlock()
		}
		srv.ServeHTTP(w, r)
	}))
	defer hs.Close()

	const rpm, n = 300, 50 // 5 requests/s shared by both workers
	const key = "sk-planted-temporal-3c59dc048e8850243be8079a5c74d079"
	prov := Provider{Name: BaselineProvider, BaseURL: hs.URL + "/v1", APIKeyEnv: "BASELINE_KEY", RequestsPerMinute: rpm, MaxConcurrency: 8}
	require.NoError(t, prov.validate())
	queue := TaskQueue(BaselineProvider)
	var perWorker [2]atomic.Int64
	for i := range 2 {
		// Each worker's in-process limiter gets the whole budget, as if it
		// believed it were alone: only the task queue limit holds them.
		p := prov
		p.RequestsPerMinute = 0
		counting := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			perWorker[i].Add(1)
			return http.DefaultTransport.RoundTrip(r)
		})
		g, err := New(Options{Config: &Config{Providers: map[string]*Provider{BaselineProvider: &p}},
			Env: mapEnv(map[string]string{"BASELINE_KEY": key}), Transport: counting})
		require.NoError(t, err)
		opts := WorkerOptions(prov)
		opts.Identity = fmt.Sprintf("worker-%d", i)
		w := worker.New(c, queue, opts)
		w.RegisterActivity(&Activities{Gateway: g})
		if i == 0 {
			w.RegisterWorkflow(fanOut)
		}
		require.NoError(t, w.Start())
		t.Cleanup(w.Stop)
	}
	assert.InDelta(t, 5.0, WorkerOptions(prov).TaskQueueActivitiesPerSecond, 1e-9)

	reqs := make([]modelapi.Request, n)
	for i := range reqs {
		reqs[i] = modelapi.Request{Model: "baseline/echo", Messages: userMsg(fmt.Sprint("sample ", i))}
	}
	reqs = append(reqs, modelapi.Request{Model: "baseline/no-such-model", Messages: userMsg("x")})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "share-rate", TaskQueue: queue}, fanOut, queue, reqs)
	require.NoError(t, err)
	var out []string
	require.NoError(t, run.Get(ctx, &out))
	for i := range n {
		assert.Equal(t, fmt.Sprint("sample ", i), out[i])
	}
	assert.Equal(t, "error:permanent-not-found", out[n], "a permanent error fails its sample without retries")

	mu.Lock()
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	span := times[len(times)-1].Sub(times[0])
	maxPerSec := 0
	for i := range times {
		j := i
		for j < len(times) && times[j].Sub(times[i]) < time.Second {
			j++
		}
		maxPerSec = max(maxPerSec, j-i)
	}
	calls := len(times)
	mu.Unlock()
	rate := float64(calls-1) / span.Seconds()
	t.Logf("%d calls in %v: %.2f calls/s overall, at most %d in any 1 s window (limit %d/s); worker 0: %d, worker 1: %d",
		calls, span, rate, maxPerSec, rpm/60, perWorker[0].Load(), perWorker[1].Load())
	assert.Equal(t, n+1, calls, "one call per activity, the permanent error not retried")
	assert.Positive(t, perWorker[0].Load())
	assert.Positive(t, perWorker[1].Load())
	// Lower bound on the span only (a slow machine cannot fail it): at
	// 5/s, after allowing a burst of one second's budget, 50 calls take
	// at least (50 - 1 - 5) / 5 s. Two unthrottled workers would finish
	// in well under a second.
	minSpan := time.Duration(float64(calls-1-rpm/60) / (rpm / 60.0) * float64(time.Second))
	assert.GreaterOrEqual(t, span, minSpan, "workers together exceeded the provider's rate")

	// The key never enters workflow history.
	iter := c.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, 0)
	var hist strings.Builder
	for iter.HasNext() {
		ev, err := iter.Next()
		require.NoError(t, err)
		b, _ := json.Marshal(ev)
		hist.Write(b)
	}
	assert.NotEmpty(t, hist.String())
	assert.NotContains(t, hist.String(), key)
	assert.NotContains(t, hist.String(), key[12:])
}

// TestHelperActivityWorker is not a test: TestKillWorkerMidRun runs the
// test binary with BENCHLINE_GATEWAY_HELPER set to get a worker process it
// can kill -9.
func TestHelperActivityWorker(t *testing.T) {
	hostPort := os.Getenv("BENCHLINE_GATEWAY_HELPER")
	if hostPort == "" {
		t.Skip("helper process for TestKillWorkerMidRun")
	}
	c, err := client.Dial(client.Options{HostPort: hostPort, Logger: quietLogger{}})
	require.NoError(t, err)
	p := &Provider{BaseURL: os.Getenv("BENCHLINE_GATEWAY_HELPER_URL"), MaxConcurrency: 4}
	g, err := New(Options{Config: &Config{Providers: map[string]*Provider{BaselineProvider: p}}})
	require.NoError(t, err)
	opts := WorkerOptions(*p)
	w := worker.New(c, TaskQueue(BaselineProvider), opts)
	w.RegisterActivity(&Activities{Gateway: g})
	require.NoError(t, w.Run(worker.InterruptCh()))
}

// TestKillWorkerMidRun kills -9 a worker process in the middle of a run and
// starts another: every sample finishes once, and the model calls exceed
// the samples only by the calls the dead worker had in flight (at most
// its max_concurrency), well under 1%.
func TestKillWorkerMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs the Temporal dev server")
	}
	c, hostPort := startTemporal(t)
	srv, url := startBaseline(t, baseline.Options{Faults: baseline.Faults{Latency: 5 * time.Millisecond}})
	const samples = 600
	startHelper := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperActivityWorker$")
		cmd.Env = append(os.Environ(), "BENCHLINE_GATEWAY_HELPER="+hostPort, "BENCHLINE_GATEWAY_HELPER_URL="+url)
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	wf := worker.New(c, "kill-test-workflows", worker.Options{})
	wf.RegisterWorkflow(fanOut)
	require.NoError(t, wf.Start())
	t.Cleanup(wf.Stop)

	first := startHelper()
	reqs := make([]modelapi.Request, samples)
	for i := range reqs {
		reqs[i] = modelapi.Request{Model: "baseline/echo", Messages: userMsg(fmt.Sprint("sample ", i))}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "kill-worker", TaskQueue: "kill-test-workflows"},
		fanOut, TaskQueue(BaselineProvider), reqs)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return srv.Stats().Answered >= samples/3 }, 2*time.Minute, 5*time.Millisecond)
	require.NoError(t, first.Process.Kill()) // SIGKILL: no graceful shutdown
	_ = first.Wait()
	killedAt := srv.Stats()
	startHelper()

	var out []string
	require.NoError(t, run.Get(ctx, &out))
	for i := range samples {
		require.Equal(t, fmt.Sprint("sample ", i), out[i])
	}
	st := srv.Stats()
	extra := st.Requests - samples
	t.Logf("killed after %d answered calls; finished with %d model calls for %d samples (+%d, %.2f%%)",
		killedAt.Answered, st.Requests, samples, extra, 100*float64(extra)/samples)
	assert.LessOrEqual(t, float64(st.Requests), 1.01*samples, "at most 1% more model calls than samples")
}
