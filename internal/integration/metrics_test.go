package integration

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/wfclient"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/benchline/benchline/datasets"
	dsifevalcode "github.com/benchline/benchline/datasets/ifevalcode"
	"github.com/benchline/benchline/internal/app"
	"github.com/benchline/benchline/internal/devstack"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/workflows"
)

// metricsNamespace is a Temporal namespace of TestWorkerMetrics alone: the
// sandbox queue's name is fixed and, in the default namespace, served by
// the shared stack's worker too, so only in a namespace of its own is the
// `benchline worker` process under test sure to run the sandbox step.
const metricsNamespace = "benchline-metrics-it"

// ensureNamespace registers ns on the test stack's server (once) and waits
// until it is described.
func ensureNamespace(ctx context.Context, t *testing.T, ns string) {
	t.Helper()
	nc, err := client.NewNamespaceClient(client.Options{HostPort: stack.Stack.Config.Temporal.Address})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	err = nc.Register(ctx, &workflowservice.RegisterNamespaceRequest{Namespace: ns, WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour)})
	var exists *serviceerror.NamespaceAlreadyExists
	if err != nil && !errors.As(err, &exists) {
		t.Fatalf("register namespace %s: %v", ns, err)
	}
	for {
		if _, err := nc.Describe(ctx, ns); err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("namespace %s not described before the deadline", ns)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// freeAddr is a free loopback address for a worker's --metrics-addr,
// outside the ephemeral range (devstack.FreePort), where an outgoing
// connection's local port cannot take it before the worker listens.
func freeAddr(t *testing.T) string {
	t.Helper()
	p, err := devstack.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", p)
}

func httpGet(ctx context.Context, url string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// scrape reads /metrics into name → series (labels as `k="v",…`, sorted) → value
// (a histogram's count).
func scrape(ctx context.Context, t *testing.T, addr string) map[string]map[string]float64 {
	t.Helper()
	code, body, err := httpGet(ctx, "http://"+addr+"/metrics")
	if err != nil || code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %v", code, err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	out := map[string]map[string]float64{}
	for name, f := range fams {
		out[name] = map[string]float64{}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			var v float64
			switch {
			case m.Counter != nil:
				v = m.GetCounter().GetValue()
			case m.Gauge != nil:
				v = m.GetGauge().GetValue()
			case m.Histogram != nil:
				v = float64(m.GetHistogram().GetSampleCount())
			}
			out[name][strings.Join(labels, ",")] = v
		}
	}
	return out
}

// TestWorkerMetrics runs `benchline worker --metrics-addr` (both queues,
// JSON logs) in a namespace of its own, checks /healthz answers 200 once it
// polls, evaluates baseline/reference on Python IFEvalCode items (model
// calls to the real baseline server, then each answer's two programs in
// bubblewrap), and scrapes /metrics: the model calls, the tokens, the
// sandbox runs, the samples and shard attempts must be counted, and the
// Temporal SDK's own metrics must be there.
func TestWorkerMetrics(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ensureNamespace(ctx, t, metricsNamespace)
	src, n := pythonItems(t, 1)
	built, err := buildVia(t, dsifevalcode.Name, datasets.Request{Source: src})
	if err != nil {
		t.Fatal(err)
	}

	addr := freeAddr(t)
	const queue = "metrics-it"
	bin := buildBinary(t)
	startProcWorker(t, bin, workerEnv(queue, stack.BaselineURL, "TEMPORAL_NAMESPACE="+metricsNamespace),
		"worker", "--metrics-addr", addr, "--log-format", "json", "--log-level", "info")
	for {
		code, _, err := httpGet(ctx, "http://"+addr+"/healthz")
		if err == nil && code == http.StatusOK {
			break
		}
		if err == nil && code != http.StatusServiceUnavailable {
			t.Fatalf("/healthz: %d, want 503 until the worker polls, then 200", code)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("/healthz never answered 200 (last: %d, %v)", code, err)
		case <-time.After(200 * time.Millisecond):
		}
	}

	cfg := stack.Stack.Config
	cfg.Temporal.Namespace, cfg.Temporal.TaskQueue = metricsNamespace, queue
	c, err := app.Dial(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	seed := int(time.Now().UnixNano() % 1e9) // a fresh run: no answer from an earlier run's cache
	run, plan, err := wfclient.StartEval(ctx, c, cfg, stack.Store, workflows.EvaluateModelInput{
		Request: runs.Request{Dataset: dsifevalcode.Name + "@" + built.Version, Model: "baseline/reference", Seed: &seed}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := wfclient.WaitEval(ctx, c, run, plan.RunID, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Summary; s.Samples != int64(n) || s.InfraFailed != 0 || s.ModelFailed != 0 {
		t.Fatalf("summary: %d samples (want %d), infra %d, model %d", s.Samples, n, s.InfraFailed, s.ModelFailed)
	}

	// The SDK's metrics are flushed into the registry every second.
	time.Sleep(1500 * time.Millisecond)
	m := scrape(ctx, t, addr)
	atLeast := func(name, series string, want float64) {
		t.Helper()
		if got := m[name][series]; got < want {
			t.Errorf("%s{%s} = %v, want at least %v (series: %v)", name, series, got, want, m[name])
		}
	}
	atLeast("benchline_model_calls_total", `model="reference",provider="baseline",status="ok"`, float64(n))
	atLeast("benchline_model_tokens_total", `kind="prompt",model="reference",provider="baseline"`, 1)
	atLeast("benchline_model_concurrency_limit", `provider="baseline"`, 1)
	atLeast("benchline_model_limiter_wait_seconds", `provider="baseline"`, float64(n))
	// Each answer runs its correctness check and its instruction check.
	atLeast("benchline_sandbox_runs_total", `language="python",status="ok",step="run"`, float64(2*n))
	atLeast("benchline_samples_total", `activity="RunShard",status="ok"`, float64(n))
	atLeast("benchline_samples_total", `activity="ScoreShard",status="ok"`, float64(n))
	atLeast("benchline_shard_duration_seconds", `activity="RunShard",outcome="ok"`, 1)
	atLeast("benchline_shard_duration_seconds", `activity="ScoreShard",outcome="ok"`, 1)
	sdk := 0
	for name := range m {
		if strings.HasPrefix(name, "temporal_") {
			sdk++
		}
	}
	if len(m["temporal_activity_execution_latency_seconds"]) == 0 || sdk < 5 {
		t.Errorf("Temporal SDK metrics missing: %d temporal_* families, activity latency %v", sdk, m["temporal_activity_execution_latency_seconds"])
	}
	// The dashboard's Temporal SDK panels query names the SDK really
	// exports (a failure counter appears only after a failure).
	dash, err := os.ReadFile(filepath.Join("..", "..", "deploy", "grafana", "benchline.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range regexp.MustCompile(`\btemporal_[a-z_]+`).FindAllString(string(dash), -1) {
		base := strings.TrimSuffix(name, "_bucket")
		if _, ok := m[base]; !ok && !strings.HasSuffix(base, "_failed_total") {
			t.Errorf("the dashboard queries %s, which the worker did not export", name)
		}
	}
	t.Logf("scraped %d families (%d from the Temporal SDK) after %d samples", len(m), sdk, n)
}
