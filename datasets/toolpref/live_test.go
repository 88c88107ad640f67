package toolpref_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/benchline/benchline/activities/activitiestest"
	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/datasetstest"
	"github.com/benchline/benchline/datasets/toolpref"
	"github.com/benchline/benchline/internal/app"
	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/gateway"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/workflows"
)

// newLiveStack is what a worker of the dev stack has for a live build: an
// object store, the baseline model server over real HTTP answering from
// the references in that store (app.StoreReferences, as `benchline dev`
// and the demo run it), and a gateway pointing at it.
func newLiveStack(t *testing.T) *activitiestest.Live { return newLiveStackWith(t, baseline.Options{}) }

// newLiveStackWith starts the baseline server with opts (its references
// always come from the store).
func newLiveStackWith(t *testing.T, opts baseline.Options) *activitiestest.Live {
	t.Helper()
	store := blobtest.NewMemory()
	opts.References = &app.StoreReferences{Store: store}
	return activitiestest.NewLive(t, toolpref.Builder{}, store, opts)
}

func rows(t *testing.T, s *activitiestest.Live, res workflows.BuildDatasetResult) (catalog.Manifest, []schemas.ToolPrefPair) {
	return activitiestest.Version[schemas.ToolPrefPair](t, s.Store, res)
}

func sampledLines(t *testing.T, s *activitiestest.Live, m catalog.Manifest) []map[string]any {
	return activitiestest.SourceLines(t, s.Store, m, toolpref.IsSampled)
}

// itemsOnly copies the fixtures without candidates.jsonl, so every sampled
// candidate of a build is a live one.
func itemsOnly(t *testing.T) string {
	return datasetstest.CopyFixtures(t, func(dir string) { os.Remove(filepath.Join(dir, toolpref.CandidatesFile)) })
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
	res, err := s.Build(t, datasets.Request{Source: dir, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	const items, callsPerItem = 8, 5
	if res.Reused || res.Generated.Units != 3 || res.Generated.Outputs != items*callsPerItem || res.Generated.Skipped != 0 {
		t.Fatalf("result %+v: want 3 units and %d sampled replies", res, items*callsPerItem)
	}
	calls := s.Server.Stats().Requests
	if calls != items*callsPerItem || res.Generated.Calls != calls || res.Generated.CacheHits != 0 {
		t.Fatalf("the baseline server saw %d requests and the build reports %+v; want %d calls, none from cache", calls, res.Generated, items*callsPerItem)
	}
	m, rows := rows(t, s, res)
	if m.Params["candidates"] != "baseline/noisy-0.3@0.7x4,baseline/reference@0x1" || m.Params["sample_seed"] != "0" {
		t.Errorf("version params %v: want the canonical sampler list and the sample seed", m.Params)
	}
	if _, ok := m.Params["sample_unit"]; ok {
		t.Errorf("sample_unit (a runtime setting) is in the version params %v", m.Params)
	}

	// Every reply of baseline/reference is the ground truth: the baseline
	// server found the references the build wrote for these items.
	lines := sampledLines(t, s, m)
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
	again, err := s.Build(t, datasets.Request{Source: dir, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Reused || again.Version != res.Version || again.Rows != res.Rows || again.Files != res.Files {
		t.Fatalf("rebuild %+v, want the reuse of %+v", again, res)
	}
	if n := s.Server.Stats().Requests; n != calls {
		t.Fatalf("rebuild made %d model calls", n-calls)
	}

	// Other selection parameters make another version from the same
	// sampled replies: still no model call.
	params["pairs"] = "3"
	fewer, err := s.Build(t, datasets.Request{Source: dir, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	if fewer.Reused || fewer.Version == res.Version || fewer.Rows != 3 || s.Server.Stats().Requests != calls {
		t.Fatalf("pairs=3: %+v after %d new calls; want a new 3-row version and no call", fewer, s.Server.Stats().Requests-calls)
	}

	// Another sample seed samples again.
	params["sample_seed"] = "7"
	resampled, err := s.Build(t, datasets.Request{Source: dir, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	if resampled.Version == fewer.Version || s.Server.Stats().Requests != 2*calls {
		t.Fatalf("sample_seed=7: version %s, %d new calls; want a new version and %d calls", resampled.Version, s.Server.Stats().Requests-calls, calls)
	}
}

// TestLiveSamplingUnparseableReplies: baseline/echo answers every item with
// its question: a reply that does not decode is a candidate scoring 0 with
// a reason, never a failed build.
func TestLiveSamplingUnparseableReplies(t *testing.T) {
	s := newLiveStack(t)
	res, err := s.Build(t, datasets.Request{Source: itemsOnly(t), Params: map[string]string{
		"candidates": "baseline/echo@0,baseline/reference@0", "synthetic": "false", "pairs": "100", "per_item": "0"}})
	if err != nil {
		t.Fatal(err)
	}
	m, rows := rows(t, s, res)
	if len(rows) != 8 {
		t.Fatalf("%d pairs, want one per item (reference over echo)", len(rows))
	}
	for _, r := range rows {
		if r.ChosenSource != "baseline/reference" || r.ChosenScore != 1 || r.RejectedSource != "baseline/echo" ||
			r.RejectedScore != 0 || r.RejectedError != "ast_decoder:decoder_failed" || r.Intensity != "high" {
			t.Errorf("pair %s: %s %v over %s %v (%s)", r.PairID, r.ChosenSource, r.ChosenScore, r.RejectedSource, r.RejectedScore, r.RejectedError)
		}
	}
	for _, l := range sampledLines(t, s, m) {
		if l["model"] == "baseline/echo" && (l["parse_error"] == nil || l["parse_error"] == "") {
			t.Errorf("echo reply to %v has no parse error: %v", l["id"], l)
		}
	}
}

// TestLiveSamplingUnknownModel: a model the provider does not serve fails
// the build at once (not retried), naming the item and the model.
func TestLiveSamplingUnknownModel(t *testing.T) {
	s := newLiveStack(t)
	_, err := s.Build(t, datasets.Request{Source: toolpref.Embedded, Params: map[string]string{"candidates": "baseline/oracle@0"}})
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
	if n := s.Server.Stats().Requests; n > 8 {
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
	dir := datasetstest.CopyFixtures(t, func(dir string) {
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
	res, err := s.Build(t, datasets.Request{Source: dir, Params: map[string]string{"candidates": "baseline/reference@0x2"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Generated.Skipped != 2 || res.Generated.Outputs != 14 || s.Server.Stats().Requests != 16 {
		t.Fatalf("generated %+v after %d requests: want simple_python_0's 2 calls skipped (each asked once), 14 replies", res.Generated, s.Server.Stats().Requests)
	}
	m, rows := rows(t, s, res)
	for _, r := range rows {
		if r.ItemID == "simple_python_0" && (r.ChosenSource == "baseline/reference" || r.RejectedSource == "baseline/reference") {
			t.Errorf("pair %s has a candidate from a skipped call", r.PairID)
		}
	}
	skipped := 0
	for _, l := range sampledLines(t, s, m) {
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
	_, err = none.Build(t, datasets.Request{Source: toolpref.Embedded, Params: map[string]string{"candidates": "baseline/reference@0x2"}})
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
	plan, err := toolpref.Builder{}.Plan(ctx, datasets.Env{Store: s.Store}, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Generate) != 1 || len(plan.Parts) != 0 {
		t.Fatalf("plan: %d units, %d parts; want 1 unit and the parts left to Finish", len(plan.Generate), len(plan.Parts))
	}
	first := s.RunUnit(t, plan, plan.Generate[0])
	calls := s.Server.Stats().Requests
	if first.Outputs != 24 || calls != 24 {
		t.Fatalf("first attempt: %+v with %d requests, want 24", first, calls)
	}
	if err := s.Store.Delete(ctx, datasets.GeneratedKey(plan.Dataset, plan.Generate[0])); err != nil {
		t.Fatal(err)
	}
	s.Gateway = activitiestest.NewGateway(t, s.URL) // a new worker process: nothing in memory
	second := s.RunUnit(t, plan, plan.Generate[0])
	if n := s.Server.Stats().Requests; n != calls {
		t.Fatalf("the retried unit made %d new model calls, want 0", n-calls)
	}
	if second.Source != first.Source || second.Usage.CacheHits != 24 {
		t.Fatalf("retried unit %+v, want the same output (%s) from 24 cache hits", second, first.Source.SHA256)
	}
	// A unit already done is not redone at all.
	if third := s.RunUnit(t, plan, plan.Generate[0]); third.Source != first.Source || third.Usage != second.Usage {
		t.Fatalf("a done unit was redone: %+v", third)
	}
}
