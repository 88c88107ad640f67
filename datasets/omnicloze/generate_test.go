package omnicloze_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"github.com/benchline/benchline/activities"
	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/omnicloze"
	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/gateway"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/workflows"
)

var quiet = tlog.NewStructuredLogger(slog.New(slog.DiscardHandler))

// genStack is what a worker has for a generated build: a store, the
// baseline server over real HTTP and a gateway pointing at it.
type genStack struct {
	store   blob.Store
	server  *baseline.Server
	url     string
	gateway *gateway.Gateway
}

func newGenStack(t *testing.T) *genStack {
	t.Helper()
	srv, err := baseline.New(baseline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	s := &genStack{store: blobtest.NewMemory(), server: srv, url: hs.URL + "/v1"}
	s.gateway = newGateway(t, s.url)
	return s
}

// newGateway is a fresh gateway (empty in-process cache: a new worker
// process) for the baseline provider at url.
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
	return g
}

func (s *genStack) activities() *activities.Datasets {
	reg := datasets.NewRegistry()
	if err := reg.Register(omnicloze.Builder{}); err != nil {
		panic(err)
	}
	return &activities.Datasets{Store: s.store, Builders: reg, Gateway: s.gateway}
}

// build runs the real BuildDataset workflow with the real activities in
// Temporal's test environment.
func (s *genStack) build(t *testing.T, params map[string]string) (workflows.BuildDatasetResult, error) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(quiet)
	env := suite.NewTestWorkflowEnvironment()
	env.SetTestTimeout(2 * time.Minute)
	env.RegisterActivity(s.activities())
	env.ExecuteWorkflow(workflows.BuildDataset, workflows.BuildDatasetInput{Dataset: omnicloze.Name,
		Request: datasets.Request{Source: omnicloze.Embedded, Params: params}, MaxParallel: 2})
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

// published reads a built version's manifest, card and rows.
func (s *genStack) published(t *testing.T, res workflows.BuildDatasetResult) (catalog.Manifest, string, []schemas.OmniClozeItem) {
	t.Helper()
	ctx := context.Background()
	m, err := catalog.ReadManifest(ctx, s.store, res.Dataset, res.Version)
	if err != nil {
		t.Fatal(err)
	}
	card, err := blob.GetBytes(ctx, s.store, catalog.Dir(m.Name, m.Version)+"README.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []schemas.OmniClozeItem
	for _, f := range m.Files {
		rs, err := pq.ReadAll[schemas.OmniClozeItem](ctx, s.store, catalog.Dir(m.Name, m.Version)+f.Path)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, rs...)
	}
	return m, string(card), rows
}

// writtenLines reads the writer's replies a version lists among its
// sources.
func (s *genStack) writtenLines(t *testing.T, m catalog.Manifest) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, src := range m.Sources {
		if !omnicloze.IsGenerated(src.Name) {
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

const captions, handWritten = 27, 6

// TestGenerateWithBaselineWriters builds through the real workflow with
// baseline writers: the clean cloze maker's items all pass; a noisy
// writer's flipped "correct" flags are rejected, counted by reason in the
// build result and the dataset card; a writer biased to "correct" has
// every item rejected, leaving the hand-written ones; a malformed writer's
// broken replies are counted as unparseable. A rebuild reuses the version
// without a call; another seed asks again.
func TestGenerateWithBaselineWriters(t *testing.T) {
	s := newGenStack(t)
	clean := map[string]string{"writer": "baseline/judge", "unit_items": "10"}
	res, err := s.build(t, clean)
	if err != nil {
		t.Fatal(err)
	}
	if g := res.Generated; g.Units != 3 || g.Calls != captions || g.Outputs != captions || g.Skipped != 0 {
		t.Fatalf("generation %+v, want 3 units and %d writer calls, every item kept", g, captions)
	}
	m, card, rows := s.published(t, res)
	if len(rows) != captions+handWritten || res.Stats[omnicloze.StatKept] != captions || m.Stats[omnicloze.StatHandWritten] != handWritten {
		t.Fatalf("%d rows, stats %v / %v", len(rows), res.Stats, m.Stats)
	}
	if m.Params["writer"] != "baseline/judge" || m.Params["blanks"] != "5" || m.Params["distractors"] != "3" || m.Params["seed"] != "0" {
		t.Errorf("params %v: defaults filled", m.Params)
	}
	for _, r := range rows[handWritten:] {
		if r.Origin != "baseline/judge" || r.NumBlanks != 5 || !strings.HasSuffix(r.SourceFile, omnicloze.CaptionsFile) {
			t.Errorf("%s: origin %s, %d blanks, from %s", r.ID, r.Origin, r.NumBlanks, r.SourceFile)
		}
	}
	lines := s.writtenLines(t, m)
	for _, l := range lines {
		v, _ := l["verdict"].(map[string]any)
		if v["prompt_version"] != omnicloze.WriterPromptVersion || v["reply"] == "" || v["judge"] != l["writer"] {
			t.Fatalf("line without its audit record: %v", l)
		}
	}
	if len(lines) != captions || !strings.Contains(card, "| written and kept | 27 |") || !strings.Contains(card, "| rejected: wrong_key | 0 |") {
		t.Errorf("%d lines; card:\n%s", len(lines), card)
	}

	var out bytes.Buffer
	if err := omnicloze.Benchmark.Demo.Describe(context.Background(), benchmark.DescribeEnv{Store: s.store, Out: &out}, m); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"music      audio-visual  3      15", "city_life  audio         4      17", "27 captions, 27 items kept, rejected: none (6 hand-written items besides)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the demo's description lacks %q:\n%s", want, out.String())
		}
	}

	calls := s.server.Stats().Requests
	again, err := s.build(t, clean)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Reused || again.Version != res.Version || s.server.Stats().Requests != calls {
		t.Errorf("rebuild: %+v, %d new calls; want the version reused without calls", again, s.server.Stats().Requests-calls)
	}

	t.Run("a noisy writer's items are rejected by reason", func(t *testing.T) {
		res, err := s.build(t, map[string]string{"writer": "baseline/judge-noisy-0.05"})
		if err != nil {
			t.Fatal(err)
		}
		st := res.Stats
		rejected := int64(0)
		for _, r := range omnicloze.RejectReasons {
			rejected += st[omnicloze.StatRejectedPrefix+r]
		}
		if st[omnicloze.StatRejectedPrefix+omnicloze.RejectAnswerKey] == 0 || st[omnicloze.StatKept] == 0 || st[omnicloze.StatKept]+rejected != captions {
			t.Fatalf("stats %v: want some items rejected for their answer key, some kept, every caption counted", st)
		}
		m, card, rows := s.published(t, res)
		if int64(len(rows)) != st[omnicloze.StatKept]+handWritten || m.Stats[omnicloze.StatRejectedPrefix+omnicloze.RejectAnswerKey] != st[omnicloze.StatRejectedPrefix+omnicloze.RejectAnswerKey] ||
			!strings.Contains(card, "| rejected: answer_key |") {
			t.Errorf("%d rows, manifest stats %v, card:\n%s", len(rows), m.Stats, card)
		}
		t.Logf("judge-noisy-0.05 writer: %v", st)
	})
	t.Run("a writer that marks every option correct", func(t *testing.T) {
		res, err := s.build(t, map[string]string{"writer": "baseline/judge-yes"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Stats[omnicloze.StatKept] != 0 || res.Stats[omnicloze.StatRejectedPrefix+omnicloze.RejectAnswerKey] != captions || res.Rows != handWritten {
			t.Errorf("stats %v, %d rows", res.Stats, res.Rows)
		}
	})
	t.Run("a writer whose replies break", func(t *testing.T) {
		res, err := s.build(t, map[string]string{"writer": "baseline/judge-malformed-0.5"})
		if err != nil {
			t.Fatal(err)
		}
		bad := res.Stats[omnicloze.StatRejectedPrefix+omnicloze.RejectUnparseable]
		if bad == 0 || bad == captions || res.Stats[omnicloze.StatKept]+bad != captions {
			t.Errorf("stats %v", res.Stats)
		}
		t.Logf("judge-malformed-0.5 writer: %d unparseable, %d kept", bad, res.Stats[omnicloze.StatKept])
	})
	t.Run("another seed asks again", func(t *testing.T) {
		calls := s.server.Stats().Requests
		seeded, err := s.build(t, map[string]string{"writer": "baseline/judge", "seed": "1"})
		if err != nil {
			t.Fatal(err)
		}
		if seeded.Version == res.Version || s.server.Stats().Requests != calls+captions {
			t.Errorf("seed=1: version %s, %d new calls", seeded.Version, s.server.Stats().Requests-calls)
		}
	})
}

// TestGenerateNoItemKept: a build whose writer has every item rejected and
// whose source has no hand-written items fails, saying why.
func TestGenerateNoItemKept(t *testing.T) {
	s := newGenStack(t)
	dir := copyFixtures(t, func(dir string) { removeFile(t, dir, omnicloze.ItemsFile) })
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(quiet)
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterActivity(s.activities())
	env.ExecuteWorkflow(workflows.BuildDataset, workflows.BuildDatasetInput{Dataset: omnicloze.Name,
		Request: datasets.Request{Source: dir, Params: map[string]string{"writer": "baseline/judge-yes"}}})
	if err := env.GetWorkflowError(); err == nil || !strings.Contains(err.Error(), "no item kept") || !strings.Contains(err.Error(), "answer_key 27") {
		t.Fatalf("err = %v", err)
	}
}

// TestGenerateResumesFromCache: a unit retried on a new worker after its
// summary was lost pays for no call again (the unit's cache segment).
func TestGenerateResumesFromCache(t *testing.T) {
	s := newGenStack(t)
	ctx := context.Background()
	req := datasets.Request{Source: omnicloze.Embedded, Params: map[string]string{"writer": "baseline/judge", "unit_items": "4"}}
	plan, err := omnicloze.Builder{}.Plan(ctx, datasets.Env{Store: s.store}, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Generate) != 7 || len(plan.Parts) != 0 {
		t.Fatalf("plan: %d units, %d parts", len(plan.Generate), len(plan.Parts))
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
	if calls != 4 || first.Usage.Calls != 4 || first.Outputs != 4 {
		t.Fatalf("first attempt: %+v with %d requests", first, calls)
	}
	if err := s.store.Delete(ctx, datasets.GeneratedKey(plan.Dataset, plan.Generate[0])); err != nil {
		t.Fatal(err)
	}
	s.gateway = newGateway(t, s.url) // a new worker process
	second := run(s.activities())
	if n := s.server.Stats().Requests; n != calls || second.Source != first.Source || second.Usage.CacheHits != 4 {
		t.Fatalf("retried unit: %+v after %d new calls; want the same output from the cache", second, n-calls)
	}
}

func TestWriterPrompt(t *testing.T) {
	captions, _ := fixtures(t)
	msgs := omnicloze.WriterMessages(captions[0], 4, 2)
	if !strings.Contains(msgs[0].Content, "replace 4 of its informative words") || !strings.Contains(msgs[0].Content, "2 distractors") ||
		!strings.Contains(msgs[1].Content, captions[0].Text) || !strings.Contains(msgs[1].Content, "Domain: music / live_performance") {
		t.Errorf("writer prompt:\n%s\n%s", msgs[0].Content, msgs[1].Content)
	}
}

func removeFile(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}
