package omnicloze_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchline/benchline/activities/activitiestest"
	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/datasetstest"
	"github.com/benchline/benchline/datasets/omnicloze"
	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/workflows"
)

func newGenStack(t *testing.T) *activitiestest.Live {
	return activitiestest.NewLive(t, omnicloze.Builder{}, blobtest.NewMemory(), baseline.Options{})
}

// build builds the embedded fixtures with params through the real workflow.
func build(t *testing.T, s *activitiestest.Live, params map[string]string) (workflows.BuildDatasetResult, error) {
	t.Helper()
	return s.Build(t, datasets.Request{Source: omnicloze.Embedded, Params: params})
}

// published reads a built version's manifest, card and rows.
func published(t *testing.T, s *activitiestest.Live, res workflows.BuildDatasetResult) (catalog.Manifest, string, []schemas.OmniClozeItem) {
	t.Helper()
	m, rows := activitiestest.Version[schemas.OmniClozeItem](t, s.Store, res)
	card, err := blob.GetBytes(context.Background(), s.Store, catalog.Dir(m.Name, m.Version)+"README.md")
	if err != nil {
		t.Fatal(err)
	}
	return m, string(card), rows
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
	res, err := build(t, s, clean)
	if err != nil {
		t.Fatal(err)
	}
	if g := res.Generated; g.Units != 3 || g.Calls != captions || g.Outputs != captions || g.Skipped != 0 {
		t.Fatalf("generation %+v, want 3 units and %d writer calls, every item kept", g, captions)
	}
	m, card, rows := published(t, s, res)
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
	lines := activitiestest.SourceLines(t, s.Store, m, omnicloze.IsGenerated)
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
	if err := omnicloze.Benchmark.Demo.Describe(context.Background(), benchmark.DescribeEnv{Store: s.Store, Out: &out}, m); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"music      audio-visual  3      15", "city_life  audio         4      17", "27 captions, 27 items kept, rejected: none (6 hand-written items besides)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the demo's description lacks %q:\n%s", want, out.String())
		}
	}

	calls := s.Server.Stats().Requests
	again, err := build(t, s, clean)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Reused || again.Version != res.Version || s.Server.Stats().Requests != calls {
		t.Errorf("rebuild: %+v, %d new calls; want the version reused without calls", again, s.Server.Stats().Requests-calls)
	}

	t.Run("a noisy writer's items are rejected by reason", func(t *testing.T) {
		res, err := build(t, s, map[string]string{"writer": "baseline/judge-noisy-0.05"})
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
		m, card, rows := published(t, s, res)
		if int64(len(rows)) != st[omnicloze.StatKept]+handWritten || m.Stats[omnicloze.StatRejectedPrefix+omnicloze.RejectAnswerKey] != st[omnicloze.StatRejectedPrefix+omnicloze.RejectAnswerKey] ||
			!strings.Contains(card, "| rejected: answer_key |") {
			t.Errorf("%d rows, manifest stats %v, card:\n%s", len(rows), m.Stats, card)
		}
		t.Logf("judge-noisy-0.05 writer: %v", st)
	})
	t.Run("a writer that marks every option correct", func(t *testing.T) {
		res, err := build(t, s, map[string]string{"writer": "baseline/judge-yes"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Stats[omnicloze.StatKept] != 0 || res.Stats[omnicloze.StatRejectedPrefix+omnicloze.RejectAnswerKey] != captions || res.Rows != handWritten {
			t.Errorf("stats %v, %d rows", res.Stats, res.Rows)
		}
	})
	t.Run("a writer whose replies break", func(t *testing.T) {
		res, err := build(t, s, map[string]string{"writer": "baseline/judge-malformed-0.5"})
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
		calls := s.Server.Stats().Requests
		seeded, err := build(t, s, map[string]string{"writer": "baseline/judge", "seed": "1"})
		if err != nil {
			t.Fatal(err)
		}
		if seeded.Version == res.Version || s.Server.Stats().Requests != calls+captions {
			t.Errorf("seed=1: version %s, %d new calls", seeded.Version, s.Server.Stats().Requests-calls)
		}
	})
}

// TestGenerateNoItemKept: a build whose writer has every item rejected and
// whose source has no hand-written items fails, saying why.
func TestGenerateNoItemKept(t *testing.T) {
	s := newGenStack(t)
	dir := datasetstest.CopyFixtures(t, func(dir string) { removeFile(t, dir, omnicloze.ItemsFile) })
	_, err := s.Build(t, datasets.Request{Source: dir, Params: map[string]string{"writer": "baseline/judge-yes"}})
	if err == nil || !strings.Contains(err.Error(), "no item kept") || !strings.Contains(err.Error(), "answer_key 27") {
		t.Fatalf("err = %v", err)
	}
}

// TestGenerateResumesFromCache: a unit retried on a new worker after its
// summary was lost pays for no call again (the unit's cache segment).
func TestGenerateResumesFromCache(t *testing.T) {
	s := newGenStack(t)
	ctx := context.Background()
	req := datasets.Request{Source: omnicloze.Embedded, Params: map[string]string{"writer": "baseline/judge", "unit_items": "4"}}
	plan, err := omnicloze.Builder{}.Plan(ctx, datasets.Env{Store: s.Store}, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Generate) != 7 || len(plan.Parts) != 0 {
		t.Fatalf("plan: %d units, %d parts", len(plan.Generate), len(plan.Parts))
	}
	first := s.RunUnit(t, plan, plan.Generate[0])
	calls := s.Server.Stats().Requests
	if calls != 4 || first.Usage.Calls != 4 || first.Outputs != 4 {
		t.Fatalf("first attempt: %+v with %d requests", first, calls)
	}
	if err := s.Store.Delete(ctx, datasets.GeneratedKey(plan.Dataset, plan.Generate[0])); err != nil {
		t.Fatal(err)
	}
	s.Gateway = activitiestest.NewGateway(t, s.URL) // a new worker process
	second := s.RunUnit(t, plan, plan.Generate[0])
	if n := s.Server.Stats().Requests; n != calls || second.Source != first.Source || second.Usage.CacheHits != 4 {
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
