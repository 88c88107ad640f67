package toolpref_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/benchline/benchline/activities"
	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/toolpref"
	"github.com/benchline/benchline/internal/app"
	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/gateway"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/workflows"
)

// quiet drops the Temporal test environment's debug log.
var quiet = tlog.NewStructuredLogger(slog.New(slog.DiscardHandler))

// liveStack is what a worker of the dev stack has for a live build: an
// object store, the baseline model server over real HTTP answering from
// the references in that store (app.StoreReferences, as `benchline dev`
// and the demo run it), and a gateway pointing at it.
type liveStack struct {
	store   blob.Store
	server  *baseline.Server
	url     string // the server's /v1
	gateway *gateway.Gateway
}

func newLiveStack(t *testing.T) *liveStack { return newLiveStackWith(t, baseline.Options{}) }

// newLiveStackWith starts the baseline server with opts (its references
// always come from the store).
func newLiveStackWith(t *testing.T, opts baseline.Options) *liveStack {
	t.Helper()
	store := blobtest.NewMemory()
	opts.References = &app.StoreReferences{Store: store}
	srv, err := baseline.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &liveStack{store: store, server: srv, url: hs.URL + "/v1", gateway: newGateway(t, hs.URL+"/v1")}
}

// newGateway is a fresh gateway (an empty in-process cache, as in a new
// worker process) for the baseline provider at url.
func newGateway(t *testing.T, url string) *gateway.Gateway {
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

func (s *liveStack) activities() *activities.Datasets {
	reg := datasets.NewRegistry()
	if err := reg.Register(toolpref.Builder{}); err != nil {
		panic(err)
	}
	return &activities.Datasets{Store: s.store, Builders: reg, Gateway: s.gateway}
}

// build runs the real BuildDataset workflow with the real activities (in
// Temporal's test environment: no server, everything else real).
func (s *liveStack) build(t *testing.T, req datasets.Request) (workflows.BuildDatasetResult, error) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(quiet)
	env := suite.NewTestWorkflowEnvironment()
	env.SetTestTimeout(2 * time.Minute)
	env.RegisterActivity(s.activities())
	env.ExecuteWorkflow(workflows.BuildDataset, workflows.BuildDatasetInput{Dataset: toolpref.Name, Request: req, MaxParallel: 2})
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

func (s *liveStack) rows(t *testing.T, res workflows.BuildDatasetResult) (catalog.Manifest, []schemas.ToolPrefPair) {
	t.Helper()
	ctx := context.Background()
	m, err := catalog.ReadManifest(ctx, s.store, res.Dataset, res.Version)
	if err != nil {
		t.Fatal(err)
	}
	var rows []schemas.ToolPrefPair
	for _, f := range m.Files {
		rs, err := pq.ReadAll[schemas.ToolPrefPair](ctx, s.store, catalog.Dir(m.Name, m.Version)+f.Path)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, rs...)
	}
	return m, rows
}

// sampledLines reads the sampled-reply files a version lists among its sources.
func (s *liveStack) sampledLines(t *testing.T, m catalog.Manifest) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, src := range m.Sources {
		if !toolpref.IsSampled(src.Name) {
			continue
		}
		b, err := blob.GetBytes(context.Background(), s.store, strings.TrimPrefix(src.URI, "store:"))
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

// itemsOnly copies the fixtures without candidates.jsonl, so every sampled
// candidate of a build is a live one.
func itemsOnly(t *testing.T) string {
	return copyFixtures(t, func(dir string) { os.Remove(filepath.Join(dir, toolpref.CandidatesFile)) })
}

func TestLiveSamplingFromBaselines(t *testing.T) {
	s := newLiveStack(t)
	dir := itemsOnly(t)
	params := map[string]string{
		"candidates":  "baseline/noisy-0.3@0.7x4, baseline/reference@0", // count defaults to 1
		"synthetic":   "false",
		"pairs":       "100",
		"per_item":    "0",
		"sample_unit": "3", // 8 items: units of 3, 3 and 2
	}
	res, err := s.build(t, datasets.Request{Source: dir, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	const items, callsPerItem = 8, 5
	if res.Reused || res.Generated.Units != 3 || res.Generated.Outputs != items*callsPerItem || res.Generated.Skipped != 0 {
		t.Fatalf("result %+v: want 3 units and %d sampled replies", res, items*callsPerItem)
	}
	calls := s.server.Stats().Requests
	if calls != items*callsPerItem || res.Generated.Calls != calls || res.Generated.CacheHits != 0 {
		t.Fatalf("the baseline server saw %d requests and the build reports %+v; want %d calls, none from cache", calls, res.Generated, items*callsPerItem)
	}
	m, rows := s.rows(t, res)
	if m.Params["candidates"] != "baseline/noisy-0.3@0.7x4,baseline/reference@0x1" || m.Params["sample_seed"] != "0" {
		t.Errorf("version params %v: want the canonical sampler list and the sample seed", m.Params)
	}
	if _, ok := m.Params["sample_unit"]; ok {
		t.Errorf("sample_unit (a runtime setting) is in the version params %v", m.Params)
	}

	// Every reply of baseline/reference is the ground truth: the baseline
	// server found the references the build wrote for these items.
	lines := s.sampledLines(t, m)
	if len(lines) != items*callsPerItem {
		t.Fatalf("%d sampled lines, want %d", len(lines), items*callsPerItem)
	}
	noisyParseErrors := 0
	for _, l := range lines {
		if l["model"] == "baseline/reference" && (l["parse_error"] != nil || !strings.HasPrefix(l["response"].(string), "<tool_call>")) {
			t.Errorf("baseline/reference on %v: %v", l["id"], l)
		}
		if l["model"] == "baseline/noisy-0.3" && l["parse_error"] != nil {
			noisyParseErrors++
		}
	}

	temps := map[string]float64{"baseline/reference": 0, "baseline/noisy-0.3": 0.7}
	seen := map[string]bool{}
	liveVsLive := 0
	for _, r := range rows {
		for _, side := range []struct {
			src   string
			score float64
			temp  *float64
		}{{r.ChosenSource, r.ChosenScore, r.ChosenTemperature}, {r.RejectedSource, r.RejectedScore, r.RejectedTemperature}} {
			want, ok := temps[side.src]
			if !ok {
				t.Errorf("pair %s: candidate from %q, which is not a configured sampler", r.PairID, side.src)
				continue
			}
			seen[side.src] = true
			if side.temp == nil || *side.temp != want {
				t.Errorf("pair %s: %s temperature %v, want %v", r.PairID, side.src, side.temp, want)
			}
			if side.score < 0 || side.score > 1 {
				t.Errorf("pair %s: score %v outside [0, 1]", r.PairID, side.score)
			}
		}
		if r.ChosenScore <= r.RejectedScore || r.ChosenScore-r.RejectedScore < 0.1-1e-9 {
			t.Errorf("pair %s: chosen %v, rejected %v", r.PairID, r.ChosenScore, r.RejectedScore)
		}
		if r.RejectedSource == "baseline/reference" {
			t.Errorf("pair %s: the reference baseline's reply was rejected", r.PairID)
		}
		if r.ChosenSource == "baseline/reference" && r.RejectedSource == "baseline/noisy-0.3" {
			liveVsLive++
		}
	}
	if len(rows) == 0 || !seen["baseline/reference"] || !seen["baseline/noisy-0.3"] || liveVsLive == 0 {
		t.Fatalf("%d pairs, sources seen %v, %d reference-vs-noisy pairs: want both samplers", len(rows), seen, liveVsLive)
	}
	t.Logf("%d pairs; %d of 32 noisy replies do not decode", len(rows), noisyParseErrors)

	// The same parameters again: the published version is reused, and no
	// model is called.
	again, err := s.build(t, datasets.Request{Source: dir, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Reused || again.Version != res.Version || again.Rows != res.Rows || again.Files != res.Files {
		t.Fatalf("rebuild %+v, want the reuse of %+v", again, res)
	}
	if n := s.server.Stats().Requests; n != calls {
		t.Fatalf("rebuild made %d model calls", n-calls)
	}

	// Other selection parameters make another version from the same
	// sampled replies: still no model call.
	params["pairs"] = "3"
	fewer, err := s.build(t, datasets.Request{Source: dir, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	if fewer.Reused || fewer.Version == res.Version || fewer.Rows != 3 || s.server.Stats().Requests != calls {
		t.Fatalf("pairs=3: %+v after %d new calls; want a new 3-row version and no call", fewer, s.server.Stats().Requests-calls)
	}

	// Another sample seed samples again.
	params["sample_seed"] = "7"
	resampled, err := s.build(t, datasets.Request{Source: dir, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	if resampled.Version == fewer.Version || s.server.Stats().Requests != 2*calls {
		t.Fatalf("sample_seed=7: version %s, %d new calls; want a new version and %d calls", resampled.Version, s.server.Stats().Requests-calls, calls)
	}
}

// TestLiveSamplingUnparseableReplies: baseline/echo answers every item with
// its question: a reply that does not decode is a candidate scoring 0 with
// a reason, never a failed build.
func TestLiveSamplingUnparseableReplies(t *testing.T) {
	s := newLiveStack(t)
	res, err := s.build(t, datasets.Request{Source: itemsOnly(t), Params: map[string]string{
		"candidates": "baseline/echo@0,baseline/reference@0", "synthetic": "false", "pairs": "100", "per_item": "0"}})
	if err != nil {
		t.Fatal(err)
	}
	m, rows := s.rows(t, res)
	if len(rows) != 8 {
		t.Fatalf("%d pairs, want one per item (reference over echo)", len(rows))
	}
	for _, r := range rows {
		if r.ChosenSource != "baseline/reference" || r.ChosenScore != 1 || r.RejectedSource != "baseline/echo" ||
			r.RejectedScore != 0 || r.RejectedError != "ast_decoder:decoder_failed" || r.Intensity != "high" {
			t.Errorf("pair %s: %s %v over %s %v (%s)", r.PairID, r.ChosenSource, r.ChosenScore, r.RejectedSource, r.RejectedScore, r.RejectedError)
		}
	}
	for _, l := range s.sampledLines(t, m) {
		if l["model"] == "baseline/echo" && (l["parse_error"] == nil || l["parse_error"] == "") {
			t.Errorf("echo reply to %v has no parse error: %v", l["id"], l)
		}
	}
}

// TestLiveSamplingUnknownModel: a model the provider does not serve fails
// the build at once (not retried), naming the item and the model.
func TestLiveSamplingUnknownModel(t *testing.T) {
	s := newLiveStack(t)
	_, err := s.build(t, datasets.Request{Source: toolpref.Embedded, Params: map[string]string{"candidates": "baseline/oracle@0"}})
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) {
		t.Fatalf("err = %v, want an application error", err)
	}
	if !appErr.NonRetryable() || appErr.Type() != gateway.ClassNotFound.String() {
		t.Errorf("error type %q (non-retryable %v), want %s", appErr.Type(), appErr.NonRetryable(), gateway.ClassNotFound)
	}
	if msg := appErr.Error(); !strings.Contains(msg, "baseline/oracle") || !strings.Contains(msg, "item ") {
		t.Errorf("error %q does not name the item and the model", msg)
	}
	if n := s.server.Stats().Requests; n > 8 {
		t.Errorf("%d requests for a model that does not exist: the unit was retried", n)
	}
}

// TestLiveSamplingSkipsModelFailures: a request the model rejects for
// itself (here one item's prompt is over the server's context length)
// gives no candidate; the build goes on, counts it, and records the reason.
// A sampler whose every request is refused fails the build instead.
func TestLiveSamplingSkipsModelFailures(t *testing.T) {
	s := newLiveStackWith(t, baseline.Options{MaxContextTokens: 1000})
	// simple_python_0's function description grows to about 2,000 tokens;
	// the other items stay far below 1,000.
	dir := copyFixtures(t, func(dir string) {
		os.Remove(filepath.Join(dir, toolpref.CandidatesFile))
		p := filepath.Join(dir, "BFCL_v4_simple_python.json")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		long := strings.Repeat("Time light needs to cover a distance. ", 220)
		b = []byte(strings.Replace(string(b), `"description": "Time light needs to cover a distance."`, `"description": "`+long+`"`, 1))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	})
	res, err := s.build(t, datasets.Request{Source: dir, Params: map[string]string{"candidates": "baseline/reference@0x2"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Generated.Skipped != 2 || res.Generated.Outputs != 14 || s.server.Stats().Requests != 16 {
		t.Fatalf("generated %+v after %d requests: want simple_python_0's 2 calls skipped (each asked once), 14 replies", res.Generated, s.server.Stats().Requests)
	}
	m, rows := s.rows(t, res)
	for _, r := range rows {
		if r.ItemID == "simple_python_0" && (r.ChosenSource == "baseline/reference" || r.RejectedSource == "baseline/reference") {
			t.Errorf("pair %s has a candidate from a skipped call", r.PairID)
		}
	}
	skipped := 0
	for _, l := range s.sampledLines(t, m) {
		reason, _ := l["skipped"].(string)
		if l["id"] == "simple_python_0" {
			if !strings.HasPrefix(reason, gateway.ClassContextLength.String()) {
				t.Errorf("line %v: want a skip reason of class %s", l, gateway.ClassContextLength)
			}
			skipped++
		} else if reason != "" {
			t.Errorf("line %v skipped", l)
		}
	}
	if skipped != 2 {
		t.Errorf("%d skipped lines for simple_python_0, want 2", skipped)
	}

	// Every request refused: the build fails, naming the sampler and why.
	none := newLiveStackWith(t, baseline.Options{MaxContextTokens: 10})
	_, err = none.build(t, datasets.Request{Source: toolpref.Embedded, Params: map[string]string{"candidates": "baseline/reference@0x2"}})
	if err == nil || !strings.Contains(err.Error(), "baseline/reference at temperature 0 answered none of its 16 requests") ||
		!strings.Contains(err.Error(), gateway.ClassContextLength.String()) {
		t.Fatalf("err = %v, want the sampler that answered nothing and the reason", err)
	}
}

// TestGenerateResumesFromCache: a unit whose activity died after its calls
// were answered (here: its saved summary is deleted) is redone by a new
// worker process (a fresh gateway) without calling the model again: the
// answers come back from the unit's cache segment in the store.
func TestGenerateResumesFromCache(t *testing.T) {
	s := newLiveStack(t)
	ctx := context.Background()
	req := datasets.Request{Source: toolpref.Embedded, Params: map[string]string{"candidates": "baseline/noisy-0.5@1x3"}}
	plan, err := toolpref.Builder{}.Plan(ctx, datasets.Env{Store: s.store}, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Generate) != 1 || len(plan.Parts) != 0 {
		t.Fatalf("plan: %d units, %d parts; want 1 unit and the parts left to Finish", len(plan.Generate), len(plan.Parts))
	}
	run := func(a *activities.Datasets) datasets.Generated {
		t.Helper()
		var suite testsuite.WorkflowTestSuite
		suite.SetLogger(quiet)
		env := suite.NewTestActivityEnvironment()
		env.RegisterActivity(a)
		v, err := env.ExecuteActivity(a.Generate, activities.GenerateInput{Plan: plan, Unit: plan.Generate[0]})
		if err != nil {
			t.Fatal(err)
		}
		var g datasets.Generated
		if err := v.Get(&g); err != nil {
			t.Fatal(err)
		}
		return g
	}
	first := run(s.activities())
	calls := s.server.Stats().Requests
	if first.Outputs != 24 || calls != 24 {
		t.Fatalf("first attempt: %+v with %d requests, want 24", first, calls)
	}
	if err := s.store.Delete(ctx, datasets.GeneratedKey(plan.Dataset, plan.Generate[0])); err != nil {
		t.Fatal(err)
	}
	s.gateway = newGateway(t, s.url) // a new worker process: nothing in memory
	second := run(s.activities())
	if n := s.server.Stats().Requests; n != calls {
		t.Fatalf("the retried unit made %d new model calls, want 0", n-calls)
	}
	if second.Source != first.Source || second.Usage.CacheHits != 24 {
		t.Fatalf("retried unit %+v, want the same output (%s) from 24 cache hits", second, first.Source.SHA256)
	}
	// A unit already done is not redone at all.
	if third := run(s.activities()); third.Source != first.Source || third.Usage != second.Usage {
		t.Fatalf("a done unit was redone: %+v", third)
	}
}
