// Package activitiestest holds test helpers that need the engine: the
// baseline model server over real HTTP, a gateway to it, and Live, which
// builds a dataset with the real BuildDataset workflow and activities in
// Temporal's test environment. Builder unit tests use datasets/datasetstest
// instead, which links none of it.
package activitiestest

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/benchline/benchline/activities"
	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/gateway"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/workflows"
)

// quiet drops the Temporal test environment's debug log.
var quiet = tlog.NewStructuredLogger(slog.New(slog.DiscardHandler))

// Live is what a worker of the dev stack has for a build whose builder
// calls models (a datasets.Generator): an object store, the baseline model
// server over real HTTP and a gateway pointing at it. Build runs the real
// BuildDataset workflow with the real activities in Temporal's test
// environment (no server, everything else real).
type Live struct {
	Builder datasets.Builder
	Store   blob.Store
	Server  *baseline.Server
	URL     string // the server's /v1
	// Gateway is what Activities gives the workers; replace it with
	// NewGateway(t, URL) to stand for a new worker process (nothing cached
	// in memory).
	Gateway *gateway.Gateway
}

// NewLive starts the baseline server with opts (e.g. references read from
// store) and returns a Live that builds with b into store.
func NewLive(t testing.TB, b datasets.Builder, store blob.Store, opts baseline.Options) *Live {
	t.Helper()
	srv, url := ServeBaseline(t, opts)
	return &Live{Builder: b, Store: store, Server: srv, URL: url, Gateway: NewGateway(t, url)}
}

// ServeBaseline starts the baseline model server with opts over real HTTP
// until the test ends, and returns it and its /v1 URL.
func ServeBaseline(t testing.TB, opts baseline.Options) (*baseline.Server, string) {
	t.Helper()
	srv, err := baseline.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return srv, hs.URL + "/v1"
}

// NewGateway is a fresh gateway (an empty in-process cache, as in a new
// worker process) for the baseline provider at url, retrying in the call
// as shard activities do.
func NewGateway(t testing.TB, url string) *gateway.Gateway {
	t.Helper()
	cfg, err := gateway.LoadConfig(nil, gateway.WithBaselineURL(url, nil))
	if err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New(gateway.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return g.WithRetry(gateway.RetryPolicy{MaxAttempts: 3, MaxElapsed: 10 * time.Second})
}

// Activities are the dataset activities of a worker with l's store and
// gateway and the one builder.
func (l *Live) Activities() *activities.Datasets {
	reg := benchmark.MustRegistry(benchmark.Benchmark{Builder: l.Builder, Description: "the builder under test"})
	return &activities.Datasets{Store: l.Store, Benchmarks: reg, Gateway: l.Gateway}
}

// Build runs the BuildDataset workflow for req; the error is the
// workflow's.
func (l *Live) Build(t testing.TB, req datasets.Request) (workflows.BuildDatasetResult, error) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(quiet)
	env := suite.NewTestWorkflowEnvironment()
	env.SetTestTimeout(2 * time.Minute)
	// The test environment runs the activities in the workflow's process;
	// on a loaded machine (tests of several packages at once on two cores)
	// a workflow task can wait over the default 1 s for the CPU, which the
	// deadlock detector (TMPRL1101) takes for a workflow that never yields.
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	env.RegisterActivity(l.Activities())
	env.ExecuteWorkflow(workflows.BuildDataset, workflows.BuildDatasetInput{Dataset: l.Builder.Name(), Request: req, MaxParallel: 2})
	if !env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	var res workflows.BuildDatasetResult
	if err := env.GetWorkflowError(); err != nil {
		return res, err
	}
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	return res, nil
}

// RunUnit runs the Generate activity for unit u of plan, as a worker
// would, and returns its summary.
func (l *Live) RunUnit(t testing.TB, plan datasets.Plan, u datasets.Part) datasets.Generated {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(quiet)
	env := suite.NewTestActivityEnvironment()
	a := l.Activities()
	env.RegisterActivity(a)
	v, err := env.ExecuteActivity(a.Generate, activities.GenerateInput{Plan: plan, Unit: u})
	if err != nil {
		t.Fatal(err)
	}
	var g datasets.Generated
	if err := v.Get(&g); err != nil {
		t.Fatal(err)
	}
	return g
}

// Version reads a built version's manifest and every row of its files.
func Version[T any](t testing.TB, store blob.Store, res workflows.BuildDatasetResult) (catalog.Manifest, []T) {
	t.Helper()
	ctx := context.Background()
	m, err := catalog.ReadManifest(ctx, store, res.Dataset, res.Version)
	if err != nil {
		t.Fatal(err)
	}
	var rows []T
	for _, f := range m.Files {
		rs, err := pq.ReadAll[T](ctx, store, catalog.Dir(m.Name, m.Version)+f.Path)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, rs...)
	}
	return m, rows
}

// SourceLines reads the JSON lines of a version's sources whose names
// match (e.g. the files generation units wrote).
func SourceLines(t testing.TB, store blob.Store, m catalog.Manifest, match func(name string) bool) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, src := range m.Sources {
		if !match(src.Name) {
			continue
		}
		b, err := blob.GetBytes(context.Background(), store, strings.TrimPrefix(src.URI, "store:"))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var v map[string]any
			if err := json.Unmarshal([]byte(l), &v); err != nil {
				t.Fatalf("%s: %v", src.Name, err)
			}
			out = append(out, v)
		}
	}
	return out
}
