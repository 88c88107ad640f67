package medrubric_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/benchline/benchline/activities/activitiestest"
	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/medrubric"
	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/schemas"
	scorer "github.com/benchline/benchline/scorers/medrubric"
	"github.com/benchline/benchline/workflows"
)

// newGenStack is what a worker has for a generated build: a store, the
// baseline server over real HTTP (the writers answer from their oracles)
// and a gateway pointing at it.
func newGenStack(t *testing.T) *activitiestest.Live {
	return activitiestest.NewLive(t, medrubric.Builder{}, blobtest.NewMemory(), baseline.Options{})
}

func build(t *testing.T, s *activitiestest.Live, params map[string]string) (workflows.BuildDatasetResult, error) {
	return s.Build(t, datasets.Request{Source: medrubric.Embedded, Params: params})
}

var writers = "baseline/judge-yes,baseline/judge,baseline/judge-noisy-0.2"

func TestGenerateWithBaselineWriters(t *testing.T) {
	s := newGenStack(t)
	params := map[string]string{"writers": writers, "k": "2", "unit_items": "10"}
	res, err := build(t, s, params)
	if err != nil {
		t.Fatal(err)
	}
	// 32 items in 4 units of 10; 39 turns × 3 writers.
	if g := res.Generated; g.Units != 4 || g.Calls != 117 || g.Skipped != 0 {
		t.Fatalf("generation %+v, want 4 units and 117 writer calls", g)
	}
	m, rows := activitiestest.Version[schemas.MedRubricItem](t, s.Store, res)
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
	lines := activitiestest.SourceLines(t, s.Store, m, medrubric.IsGenerated)
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
	calls := s.Server.Stats().Requests
	again, err := build(t, s, params)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Reused || again.Version != res.Version || s.Server.Stats().Requests != calls {
		t.Errorf("rebuild: %+v, %d new calls; want the version reused without calls", again, s.Server.Stats().Requests-calls)
	}
	// k only merges: another k is another version from the same units.
	k1, err := build(t, s, map[string]string{"writers": writers, "k": "1", "unit_items": "10"})
	if err != nil {
		t.Fatal(err)
	}
	if k1.Version == res.Version || s.Server.Stats().Requests != calls {
		t.Errorf("k=1: version %s (k=2: %s), %d new calls; want a new version from the stored units", k1.Version, res.Version, s.Server.Stats().Requests-calls)
	}
	// Another seed asks the writers again.
	seeded, err := build(t, s, map[string]string{"writers": writers, "seed": "1", "unit_items": "10"})
	if err != nil {
		t.Fatal(err)
	}
	if seeded.Version == res.Version || s.Server.Stats().Requests != calls+117 {
		t.Errorf("seed=1: version %s, %d new calls; want a new version and 117 calls", seeded.Version, s.Server.Stats().Requests-calls)
	}
}

// TestGenerateUnusableWriter: a writer whose every reply is broken makes
// the build fail, naming it, rather than publishing rubrics without it.
func TestGenerateUnusableWriter(t *testing.T) {
	s := newGenStack(t)
	_, err := build(t, s, map[string]string{"writers": "baseline/judge,baseline/judge-malformed-1", "k": "1"})
	if err == nil || !strings.Contains(err.Error(), "baseline/judge-malformed-1 gave no usable reply") {
		t.Fatalf("err = %v", err)
	}
}

func TestGenerateResumesFromCache(t *testing.T) {
	s := newGenStack(t)
	ctx := context.Background()
	req := datasets.Request{Source: medrubric.Embedded, Params: map[string]string{"writers": "baseline/judge,baseline/judge-yes", "unit_items": "4"}}
	plan, err := medrubric.Builder{}.Plan(ctx, datasets.Env{Store: s.Store}, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Generate) != 8 || len(plan.Parts) != 0 {
		t.Fatalf("plan: %d units, %d parts", len(plan.Generate), len(plan.Parts))
	}
	first := s.RunUnit(t, plan, plan.Generate[0])
	calls := s.Server.Stats().Requests
	if calls != 8 || first.Usage.Calls != 8 { // 4 single-turn items × 2 writers
		t.Fatalf("first attempt: %+v with %d requests", first, calls)
	}
	if err := s.Store.Delete(ctx, datasets.GeneratedKey(plan.Dataset, plan.Generate[0])); err != nil {
		t.Fatal(err)
	}
	s.Gateway = activitiestest.NewGateway(t, s.URL) // a new worker process
	second := s.RunUnit(t, plan, plan.Generate[0])
	if n := s.Server.Stats().Requests; n != calls || second.Source != first.Source || second.Usage.CacheHits != 8 {
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
