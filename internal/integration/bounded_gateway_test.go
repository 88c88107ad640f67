package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/bfcl"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/internal/wfclient"
	"github.com/benchline/benchline/workflows"
)

// The model gateway's cases of issue 33 ("the edges, round 3") on the real
// stack: a `benchline worker` process calls a model endpoint on loopback
// named in a providers file, as a deployment would.

// gatewayEdge is a worker serving its own task queue with a providers
// file, and a two-item BFCL version to evaluate.
type gatewayEdge struct {
	queue   string
	dataset string
}

// startGatewayEdge writes providers (a providers file's text), starts a
// worker with it and the environment extra, and builds the dataset.
func startGatewayEdge(t *testing.T, queue, providers string, extra ...string) gatewayEdge {
	h := &badHarness{parent: t, dir: t.TempDir()}
	file := filepath.Join(t.TempDir(), "providers.yaml")
	if err := os.WriteFile(file, []byte(providers), 0o600); err != nil {
		t.Fatal(err)
	}
	env := workerEnv(queue, stack.BaselineURL, append([]string{"BENCHLINE_PROVIDERS=" + file}, extra...)...)
	startProcWorker(t, h.binary(t), env, "worker", "--queues", "main")
	q, a := bfclLines(t, 2)
	res, err := buildVia(t, bfcl.Name, datasets.Request{Source: bfclDir(t, strings.Join(q, ""), a)})
	if err != nil {
		t.Fatal(err)
	}
	return gatewayEdge{queue: queue, dataset: bfcl.Name + "@" + res.Version}
}

// start starts a run of model on the edge's worker; it is terminated
// when the test ends if it is still running.
func (e gatewayEdge) start(ctx context.Context, t *testing.T, model string, seed int) (client.WorkflowRun, runs.Plan, error) {
	cfg := stack.Stack.Config
	cfg.Temporal.TaskQueue = e.queue
	run, plan, err := wfclient.StartEval(ctx, stack.Client, cfg, stack.Store, workflows.EvaluateModelInput{
		Request: runs.Request{Dataset: e.dataset, Model: model, Seed: &seed}})
	if err == nil {
		terminateOnCleanup(t, wfclient.EvalWorkflowID(plan.RunID))
	}
	return run, plan, err
}

// eval runs model on the edge's worker and waits for it until ctx ends.
func (e gatewayEdge) eval(ctx context.Context, t *testing.T, model string, seed int) (runs.Plan, error) {
	run, plan, err := e.start(ctx, t, model, seed)
	if err != nil {
		return plan, err
	}
	_, err = wfclient.WaitEval(ctx, stack.Client, run, plan.RunID, time.Hour, nil)
	return plan, err
}

// chatAnswer is a well-formed chat completion (a wrong answer to BFCL).
var chatAnswer = chatBody(contentMsg("[nothing()]"))

// TestGatewayRedirectKeepsTheKey: the provider answers every call with a
// 307 to another host (by name) on another port. The run must stop at
// once as permanent-redirect, naming the provider and the target's origin
// (not its query), and the other host must get no request: it used to get
// the key on every call, and its answers were scored.
func TestGatewayRedirectKeepsTheKey(t *testing.T) {
	const key = "sk-bounded-gateway-0123456789abcdef"
	var mu sync.Mutex
	var leaked []string // Authorization headers the other host got
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		leaked = append(leaked, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(chatAnswer)
	}))
	t.Cleanup(other.Close)
	ou, _ := url.Parse(other.URL)
	target := "http://localhost:" + ou.Port()
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target+r.URL.Path+"?sig=query-secret", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(provider.Close)
	e := startGatewayEdge(t, "bounded-gateway-redirect",
		"providers:\n  faraway:\n    base_url: "+provider.URL+"/v1\n    api_key_env: BENCHLINE_TEST_FARAWAY_KEY\n",
		"BENCHLINE_TEST_FARAWAY_KEY="+key)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, err := e.eval(ctx, t, "faraway/m", 3301)
	switch {
	case ctx.Err() != nil:
		t.Errorf("no answer within the deadline: %v", err)
	case err == nil:
		t.Errorf("the run finished: it scored answers from %s", target)
	default:
		t.Logf("the run's error: %v", err)
		for _, want := range []string{"permanent-redirect", `provider \"faraway\"|provider "faraway"`, target} {
			if !containsAny(err.Error(), strings.Split(want, "|")) {
				t.Errorf("the run's error does not name %q: %v", want, err)
			}
		}
		for _, never := range []string{"query-secret", key} {
			if strings.Contains(err.Error(), never) {
				t.Errorf("the run's error holds %q: %v", never, err)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(leaked) > 0 {
		t.Errorf("the other host got %d requests (Authorization: %q)", len(leaked), leaked[0])
	}
}

// TestGatewayRetryAfterDoesNotStallOtherRuns: one model of a provider
// answers 429 with Retry-After: 100000 (27 h 46 m) to every call. A second
// run, of another model of the same provider on the same worker, started
// once the first has had its 429, must finish: it used to make no request
// at all, the provider paused in that worker for the whole Retry-After.
// The provider's max_retry_after is 2s, so the case is quick; the deadline
// only stops a hang.
func TestGatewayRetryAfterDoesNotStallOtherRuns(t *testing.T) {
	var limited, healthy atomic.Int32
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Model string }
		_ = json.NewDecoder(r.Body).Decode(&body)
		w.Header().Set("Content-Type", "application/json")
		if body.Model == "limited" {
			limited.Add(1)
			w.Header().Set("Retry-After", "100000")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"error":{"message":"Rate limit reached","type":"requests"}}`))
			return
		}
		healthy.Add(1)
		_, _ = w.Write(chatAnswer)
	}))
	t.Cleanup(provider.Close)
	e := startGatewayEdge(t, "bounded-gateway-retry-after",
		"providers:\n  busy:\n    base_url: "+provider.URL+"/v1\n    max_retry_after: 2s\n")

	// The first run is not waited for; it is terminated when the test
	// ends.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, _, err := e.start(ctx, t, "busy/limited", 3302); err != nil {
		t.Fatal(err)
	}
	for limited.Load() == 0 {
		select {
		case <-ctx.Done():
			t.Fatal("the first run made no call")
		case <-time.After(100 * time.Millisecond):
		}
	}
	plan, err := e.eval(ctx, t, "busy/healthy", 3303)
	if err != nil {
		t.Fatalf("the second run did not finish (%d calls of it reached the provider): %v", healthy.Load(), err)
	}
	_, rows := resultRows(ctx, t, plan.RunID)
	if int64(len(rows)) != plan.Samples {
		t.Errorf("%d result rows for %d samples", len(rows), plan.Samples)
	}
	for _, r := range rows {
		if r.ErrorClass != "" {
			t.Errorf("sample %s of the healthy run failed: %s: %s", r.SampleID, r.ErrorClass, r.ErrorMessage)
		}
	}
}
