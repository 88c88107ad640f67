package site

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/aggregate"
)

// TestPivot: the headline comes first; a metric with no scored sample in a
// scope is an empty cell with a reason, and the page shows "–" with the
// reason on hover, never a mean for n = 0.
func TestPivot(t *testing.T) {
	sum := aggregate.Summary{Samples: 10, Metrics: []aggregate.MetricStat{
		{Name: "score", N: 10, Mean: 0.5, CILow: 0.4, CIHigh: 0.6},
		{Name: "pass", N: 10, Mean: 0.3, CILow: 0.1, CIHigh: 0.5},
	}, Categories: []aggregate.CategoryStats{
		{Category: "easy", Samples: 6, Metrics: []aggregate.MetricStat{{Name: "score", N: 6, Mean: 0.7}, {Name: "pass", N: 0}}},
		{Category: "hard", Samples: 4, Metrics: []aggregate.MetricStat{{Name: "score", N: 4, Mean: 0.2}}},
	}}
	p := buildPivot(sum, "pass")
	if strings.Join(p.Metrics, ",") != "pass,score" {
		t.Fatalf("metrics %v: want the headline first", p.Metrics)
	}
	easy, hard := p.Categories[0], p.Categories[1]
	if easy.Cells[0].Has || !strings.Contains(easy.Cells[0].Why, "n = 0") || !easy.Cells[1].Has {
		t.Fatalf("easy: %+v", easy.Cells)
	}
	if hard.Cells[0].Has || !strings.Contains(hard.Cells[0].Why, "no sample in hard has pass") {
		t.Fatalf("hard: %+v", hard.Cells)
	}
	var buf bytes.Buffer
	for _, r := range p.Categories {
		if err := templates.ExecuteTemplate(&buf, "pivotrow", r); err != nil {
			t.Fatal(err)
		}
	}
	html := buf.String()
	if strings.Contains(html, "n=0") {
		t.Fatalf("a mean for n = 0 is shown: %s", html)
	}
	if !strings.Contains(html, `title="no scored sample in easy has pass (n = 0)"><abbr`) || strings.Count(html, ">–</abbr>") != 2 {
		t.Fatalf("empty cells: %s", html)
	}
}

// TestComparePivot: both runs' metrics side by side on the union of their
// metrics and categories; a scope or metric one run lacks is "–" with the
// reason, and A − B only where both have a mean.
func TestComparePivot(t *testing.T) {
	a := aggregate.Summary{Samples: 10, Metrics: []aggregate.MetricStat{{Name: "score", N: 10, Mean: 0.5}, {Name: "pass", N: 10, Mean: 0.3}},
		Categories: []aggregate.CategoryStats{
			{Category: "easy", Samples: 6, Metrics: []aggregate.MetricStat{{Name: "score", N: 6, Mean: 0.7}, {Name: "pass", N: 0}}},
			{Category: "hard", Samples: 4, Metrics: []aggregate.MetricStat{{Name: "score", N: 4, Mean: 0.2}}},
		}}
	b := aggregate.Summary{Samples: 10, Metrics: []aggregate.MetricStat{{Name: "score", N: 10, Mean: 0.25}, {Name: "extra", N: 10, Mean: 1}},
		Categories: []aggregate.CategoryStats{
			{Category: "easy", Samples: 6, Metrics: []aggregate.MetricStat{{Name: "score", N: 6, Mean: 0.5}}},
			{Category: "new", Samples: 4, Metrics: []aggregate.MetricStat{{Name: "score", N: 4, Mean: 0.1}}},
		}}
	p := buildComparePivot(a, b, "score")
	if strings.Join(p.Metrics, ",") != "score,pass,extra" {
		t.Fatalf("metrics %v", p.Metrics)
	}
	o := p.Overall.Cells
	if !o[0].HasDiff || o[0].Diff != 0.25 || !o[0].Headline || o[1].HasDiff || o[1].B.Has || o[2].A.Has || !o[2].B.Has {
		t.Fatalf("overall: %+v", o)
	}
	var scopes []string
	for _, r := range p.Categories {
		scopes = append(scopes, r.Scope)
	}
	if strings.Join(scopes, ",") != "easy,hard,new" {
		t.Fatalf("scopes %v", scopes)
	}
	easy, hard, fresh := p.Categories[0], p.Categories[1], p.Categories[2]
	if math.Abs(easy.Cells[0].Diff-0.2) > 1e-12 || easy.Cells[1].A.Has || !strings.Contains(easy.Cells[1].A.Why, "n = 0") {
		t.Fatalf("easy: %+v", easy.Cells)
	}
	if hard.SamplesB != 0 || hard.Cells[0].B.Has || !strings.Contains(hard.Cells[0].B.Why, "no sample in hard has score") || hard.Cells[0].HasDiff {
		t.Fatalf("hard: %+v", hard)
	}
	if fresh.SamplesA != 0 || fresh.Cells[0].A.Has || !fresh.Cells[0].B.Has {
		t.Fatalf("new: %+v", fresh)
	}
	var buf bytes.Buffer
	for _, r := range append([]comparePivotRow{p.Overall}, p.Categories...) {
		if err := templates.ExecuteTemplate(&buf, "comparerow", r); err != nil {
			t.Fatal(err)
		}
	}
	html := buf.String()
	if strings.Contains(html, "n=0") || !strings.Contains(html, `class="num diff headline" data-sort="0.25">&#43;0.250</td>`) {
		t.Fatalf("compare rows: %s", html)
	}
}
