package medrubric_test

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

	"github.com/benchline/benchline/activities"
	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/medrubric"
	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/gateway"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/schemas"
	scorer "github.com/benchline/benchline/scorers/medrubric"
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
	if err := reg.Register(medrubric.Builder{}); err != nil {
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
	env.ExecuteWorkflow(workflows.BuildDataset, workflows.BuildDatasetInput{Dataset: medrubric.Name,
		Request: datasets.Request{Source: medrubric.Embedded, Params: params}, MaxParallel: 2})
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

func (s *genStack) rows(t *testing.T, res workflows.BuildDatasetResult) (catalog.Manifest, []schemas.MedRubricItem) {
	t.Helper()
	ctx := context.Background()
	m, err := catalog.ReadManifest(ctx, s.store, res.Dataset, res.Version)
	if err != nil {
		t.Fatal(err)
	}
	var rows []schemas.MedRubricItem
	for _, f := range m.Files {
		rs, err := pq.ReadAll[schemas.MedRubricItem](ctx, s.store, catalog.Dir(m.Name, m.Version)+f.Path)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, rs...)
	}
	return m, rows
}

// writtenLines reads the writers' replies a version lists among its
// sources.
func (s *genStack) writtenLines(t *testing.T, m catalog.Manifest) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, src := range m.Sources {
		if !medrubric.IsGenerated(src.Name) {
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

var writers = "baseline/judge-yes,baseline/judge,baseline/judge-noisy-0.2"

func TestGenerateWithBaselineWriters(t *testing.T) {
	s := newGenStack(t)
	params := map[string]string{"writers": writers, "k": "2", "unit_items": "10"}
	res, err := s.build(t, params)
	if err != nil {
		t.Fatal(err)
	}
	// 32 items in 4 units of 10; 39 turns × 3 writers.
	if g := res.Generated; g.Units != 4 || g.Calls != 117 || g.Skipped != 0 {
		t.Fatalf("generation %+v, want 4 units and 117 writer calls", g)
	}
	m, rows := s.rows(t, res)
	if m.Params["writers"] != "baseline/judge,baseline/judge-noisy-0.2,baseline/judge-yes" || m.Params["k"] != "2" || m.Params["seed"] != "0" {
		t.Errorf("params %v: writers sorted, defaults filled", m.Params)
	}
	if len(rows) < 25 || len(rows) > 32 {
		t.Fatalf("%d items kept, want most of the 32", len(rows))
	}
	fixtures, err := medrubric.FixtureItems()
	if err != nil {
		t.Fatal(err)
	}
	source := 0
	for _, it := range fixtures {
		source += int(it.NumRubrics)
	}
	kept, merged := 0, 0
	for _, r := range rows {
		turns, err := medrubric.Turns(r)
		if err != nil {
			t.Fatal(err)
		}
		ids := map[string]bool{}
		for ti, turn := range turns {
			essential := false
			for _, ru := range turn.Rubrics {
				kept++
				if ids[ru.ID] {
					t.Errorf("%s: rubric id %s repeats", r.ID, ru.ID)
				}
				ids[ru.ID] = true
				if len(ru.ProposedBy) < 2 {
					t.Errorf("%s turn %d: %q kept with writers %v (k = 2)", r.ID, ti+1, ru.Text, ru.ProposedBy)
				}
				if len(ru.ProposedBy) == 3 {
					merged++
				}
				if ru.Weight != scorer.DefaultWeight(scorer.Category(ru.Category)) {
					t.Errorf("%s: weight %v for %s", r.ID, ru.Weight, ru.Category)
				}
				essential = essential || ru.Category == "essential"
			}
			if !essential || turn.User == "" {
				t.Errorf("%s turn %d: no essential rubric", r.ID, ti+1)
			}
		}
	}
	t.Logf("kept %d of 32 items, %d rubrics (the source has %d), %d proposed by all three writers", len(rows), kept, source, merged)
	if kept >= source || merged == 0 {
		t.Errorf("kept %d of %d source rubrics, %d proposed by all three: consensus should drop some and merge some", kept, source, merged)
	}
	// Every call is recorded for audit, with its prompt version and reply,
	// and near-duplicates (reworded texts) were proposed.
	lines := s.writtenLines(t, m)
	reworded := 0
	for _, l := range lines {
		v, _ := l["verdict"].(map[string]any)
		if v["prompt_version"] != medrubric.WriterPromptVersion || v["reply"] == "" || v["judge"] != l["writer"] {
			t.Fatalf("line without its audit record: %v", l)
		}
		if strings.Contains(v["reply"].(string), `"The answer `) {
			reworded++
		}
	}
	if len(lines) != 117 || reworded == 0 {
		t.Errorf("%d lines, %d with reworded rubrics", len(lines), reworded)
	}

	// The same build again is the same version, reused without a call.
	calls := s.server.Stats().Requests
	again, err := s.build(t, params)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Reused || again.Version != res.Version || s.server.Stats().Requests != calls {
		t.Errorf("rebuild: %+v, %d new calls; want the version reused without calls", again, s.server.Stats().Requests-calls)
	}
	// k only merges: another k is another version from the same units.
	k1, err := s.build(t, map[string]string{"writers": writers, "k": "1", "unit_items": "10"})
	if err != nil {
		t.Fatal(err)
	}
	if k1.Version == res.Version || s.server.Stats().Requests != calls {
		t.Errorf("k=1: version %s (k=2: %s), %d new calls; want a new version from the stored units", k1.Version, res.Version, s.server.Stats().Requests-calls)
	}
	// Another seed asks the writers again.
	seeded, err := s.build(t, map[string]string{"writers": writers, "seed": "1", "unit_items": "10"})
	if err != nil {
		t.Fatal(err)
	}
	if seeded.Version == res.Version || s.server.Stats().Requests != calls+117 {
		t.Errorf("seed=1: version %s, %d new calls; want a new version and 117 calls", seeded.Version, s.server.Stats().Requests-calls)
	}
}

// TestGenerateUnusableWriter: a writer whose every reply is broken makes
// the build fail, naming it, rather than publishing rubrics without it.
func TestGenerateUnusableWriter(t *testing.T) {
	s := newGenStack(t)
	_, err := s.build(t, map[string]string{"writers": "baseline/judge,baseline/judge-malformed-1", "k": "1"})
	if err == nil || !strings.Contains(err.Error(), "baseline/judge-malformed-1 gave no usable reply") {
		t.Fatalf("err = %v", err)
	}
}

func TestGenerateResumesFromCache(t *testing.T) {
	s := newGenStack(t)
	ctx := context.Background()
	req := datasets.Request{Source: medrubric.Embedded, Params: map[string]string{"writers": "baseline/judge,baseline/judge-yes", "unit_items": "4"}}
	plan, err := medrubric.Builder{}.Plan(ctx, datasets.Env{Store: s.store}, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Generate) != 8 || len(plan.Parts) != 0 {
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
	if calls != 8 || first.Usage.Calls != 8 { // 4 single-turn items × 2 writers
		t.Fatalf("first attempt: %+v with %d requests", first, calls)
	}
	if err := s.store.Delete(ctx, datasets.GeneratedKey(plan.Dataset, plan.Generate[0])); err != nil {
		t.Fatal(err)
	}
	s.gateway = newGateway(t, s.url) // a new worker process
	second := run(s.activities())
	if n := s.server.Stats().Requests; n != calls || second.Source != first.Source || second.Usage.CacheHits != 8 {
		t.Fatalf("retried unit: %+v after %d new calls; want the same output from the cache", second, n-calls)
	}
}

func TestWriterPrompt(t *testing.T) {
	earlier := []schemas.MedRubricTurn{{User: "first question", Reference: "first answer"}}
	msgs := medrubric.WriterMessages(earlier, "second question", []string{"passage one", "passage two"})
	user := msgs[1].Content
	for _, want := range []string{"User (turn 1):\n<<<\nfirst question", "Assistant (turn 1):\n<<<\nfirst answer", "[1] passage one\n[2] passage two", "second question"} {
		if !strings.Contains(user, want) {
			t.Errorf("writer prompt lacks %q:\n%s", want, user)
		}
	}
	if !strings.Contains(msgs[0].Content, "essential") || !strings.Contains(msgs[0].Content, `{"rubrics"`) {
		t.Errorf("system prompt %q", msgs[0].Content)
	}
}

func TestWriterOracle(t *testing.T) {
	fixtures, err := medrubric.FixtureItems()
	if err != nil {
		t.Fatal(err)
	}
	turns, err := medrubric.Turns(fixtures[0])
	if err != nil {
		t.Fatal(err)
	}
	rubrics := turns[0].Rubrics
	a := medrubric.WriterOracle("cc-01", 1, "x/a", 0, rubrics)
	if a != medrubric.WriterOracle("cc-01", 1, "x/a", 0, rubrics) {
		t.Error("not deterministic")
	}
	if a == medrubric.WriterOracle("cc-01", 1, "x/b", 0, rubrics) && a == medrubric.WriterOracle("cc-01", 1, "x/a", 1, rubrics) {
		t.Error("the same for another writer and another seed")
	}
	if medrubric.WriterOracle("cc-01", 1, "x/a", 0, nil) != "" {
		t.Error("an oracle for a turn without rubrics")
	}
	var r medrubric.WriterReply
	if err := json.Unmarshal([]byte(a), &r); err != nil || r.Validate() != nil || len(r.Rubrics) == 0 {
		t.Fatalf("oracle %s: %v", a, err)
	}
}
