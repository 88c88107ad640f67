package site

import (
	"bytes"
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
