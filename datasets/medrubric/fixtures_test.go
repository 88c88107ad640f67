package medrubric

import (
	"context"
	"fmt"
	"github.com/benchline/benchline/internal/judge"
	"reflect"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/schemas"
	scorer "github.com/benchline/benchline/scorers/medrubric"
)

// TestFixtures checks that every bundled line parses and that the fixtures
// hold what the demo and the baseline judges rely on: at least 30 items
// over 4 domains, English and Chinese, at least 6 multi-turn sessions;
// every turn with 4–10 rubrics covering all four categories, keywords on
// every rubric, and a reference answer that contains every keyword of its
// essential and important rubrics and no keyword of any pitfall.
func TestFixtures(t *testing.T) {
	items, err := FixtureItems()
	if err != nil {
		t.Fatal(err)
	}
	if len(items) < 30 {
		t.Errorf("%d fixture items, want at least 30", len(items))
	}
	domains, languages := map[string]int{}, map[string]int{}
	multi := 0
	for _, it := range items {
		domains[it.Domain]++
		languages[it.Language]++
		if !strings.HasPrefix(it.SourceFile, Embedded+"/") || !strings.HasSuffix(it.SourceFile, "/"+it.Domain+".jsonl") {
			t.Errorf("%s: source %s is not its domain's file", it.ID, it.SourceFile)
		}
		turns, err := Turns(it)
		if err != nil {
			t.Fatal(err)
		}
		if len(turns) > 1 {
			multi++
		}
		for ti, turn := range turns {
			where := fmt.Sprintf("%s turn %d", it.ID, ti+1)
			if n := len(turn.Rubrics); n < 4 || n > 10 {
				t.Errorf("%s: %d rubrics, want 4–10", where, n)
			}
			if strings.TrimSpace(turn.Reference) == "" {
				t.Errorf("%s: no reference answer", where)
			}
			cats := map[scorer.Category]bool{}
			for _, r := range turn.Rubrics {
				cat := scorer.Category(r.Category)
				cats[cat] = true
				if len(r.Keywords) == 0 {
					t.Errorf("%s rubric %s: no keywords", where, r.ID)
				}
				switch cat {
				case scorer.Essential, scorer.Important:
					if !judge.KeywordsMet(turn.Reference, r.Keywords) {
						t.Errorf("%s rubric %s (%s): reference lacks a keyword of %q", where, r.ID, cat, r.Keywords)
					}
				case scorer.Pitfall:
					for _, k := range r.Keywords {
						if judge.ContainsKeyword(turn.Reference, k) {
							t.Errorf("%s rubric %s: reference contains pitfall keyword %q", where, r.ID, k)
						}
					}
				}
			}
			if len(cats) != 4 {
				t.Errorf("%s: categories %v, want all four", where, cats)
			}
		}
	}
	if len(domains) < 4 {
		t.Errorf("domains %v, want at least 4", domains)
	}
	if languages["en"] == 0 || languages["zh"] == 0 {
		t.Errorf("languages %v, want English and Chinese", languages)
	}
	if multi < 6 {
		t.Errorf("%d multi-turn sessions, want at least 6", multi)
	}
	t.Logf("%d items (%d multi-turn), domains %v, languages %v", len(items), multi, domains, languages)
}

// TestFixturesScoreFullMarks judges every reference answer lexically
// (judge.KeywordsMet) and scores it: the reference meets every essential and
// important rubric and trips no pitfall, so its coverage is 1 and, with
// highlights possibly missed, its score is at least the essential and
// important share of the positive weight.
func TestFixturesScoreFullMarks(t *testing.T) {
	items, err := FixtureItems()
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		turns, _ := Turns(it)
		for ti, turn := range turns {
			var judged []scorer.Judged
			for _, r := range turn.Rubrics {
				st := scorer.NotMet
				if judge.KeywordsMet(turn.Reference, r.Keywords) {
					st = scorer.Met
				}
				judged = append(judged, scorer.Judged{ID: r.ID, Category: scorer.Category(r.Category), Weight: r.Weight, Status: st})
			}
			m, err := scorer.Score(judged, scorer.DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			if *m.Coverage != 1 || *m.Accuracy != 1 || *m.RiskInterception != 1 || m.PitfallsMet != 0 || *m.Score < 0.5 {
				t.Errorf("%s turn %d: reference scores %+v", it.ID, ti+1, m.Map())
			}
		}
	}
}

// TestFixturesParquetRoundTrip writes the fixture rows with the schema's
// Parquet tags and reads them back unchanged.
func TestFixturesParquetRoundTrip(t *testing.T) {
	items, err := FixtureItems()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	store := blobtest.NewMemory()
	env := datasets.Env{Store: store}
	if _, err := datasets.WriteRows(ctx, env, "part-00000.parquet", items, nil, func(int64) {}); err != nil {
		t.Fatal(err)
	}
	back, err := pq.ReadAll[schemas.MedRubricItem](ctx, store, "part-00000.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, items) {
		t.Errorf("rows read back differ from the rows written")
	}
}
