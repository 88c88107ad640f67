package site

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/site/sitetest"
)

// manyModels is the fixture's board with 20 models on bfcl: long names,
// equal means and equal costs (labels that would collide), six baselines.
func manyModels(s leaderboard.Scores) leaderboard.Scores {
	s.Models, s.Runs, s.Comparisons, s.Failed = nil, nil, nil, nil
	var cells []leaderboard.Cell
	for i := range 20 {
		model := fmt.Sprintf("vendor-%02d/a-rather-long-model-name-of-the-%02d-family-instruct", i, i)
		if i%4 == 3 {
			model = fmt.Sprintf("baseline/noisy-0.%d", i)
		}
		mean := 0.5 + 0.01*float64(i%5)
		runID := fmt.Sprintf("r%015d", i)
		s.Models = append(s.Models, leaderboard.Model{Model: model})
		s.Runs = append(s.Runs, leaderboard.Run{RunID: runID, Dataset: "bfcl", Version: "0123456789ab", Model: model, TaskVersion: "bfcl-ast/3",
			Summary: aggregate.Summary{Samples: 100, Scored: 100, CostUSD: 0.25 * float64(i%2),
				Metrics: []aggregate.MetricStat{{Name: "accuracy", N: 100, Mean: mean, CILow: mean - 0.1, CIHigh: mean + 0.1}}}})
		cells = append(cells, leaderboard.Cell{Dataset: "bfcl", Version: "0123456789ab", Model: model, Metric: "accuracy", Mean: mean,
			CILow: mean - 0.1, CIHigh: mean + 0.1, N: 100, RunID: runID, RankLow: 1, RankHigh: 20})
	}
	s.Cells = cells
	s.Benchmarks = s.Benchmarks[:1]
	return s
}

// TestBrowserPlotLabels measures every text of every plot of the fixture
// board and of a board with 20 models (long names, ties in mean and cost),
// in headless chromium: none leaves its plot, none overlaps another.
func TestBrowserPlotLabels(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the browser test starts chromium")
	}
	_, s, h := served(t)
	srv := httptest.NewServer(h)
	defer srv.Close()
	b := sitetest.NewBrowser(t)
	pages := []string{""}
	for _, bm := range s.Benchmarks {
		pages = append(pages, "bench-"+slug(bm.Dataset)+".html")
	}
	if n := sitetest.CheckPlots(t, b, srv.URL+"/demo/", pages); n < 6 {
		t.Errorf("measured %d plots on the fixture board, want at least 6", n)
	}
	b.Shot(t, "plots-fixture")

	ctx := context.Background()
	store := blobtest.NewMemory()
	many := manyModels(s)
	many.Board = "many"
	if err := Write(ctx, store, many); err != nil {
		t.Fatal(err)
	}
	if err := blob.PutJSON(ctx, store, leaderboard.ScoresKey(many.Board, many.Stamp), many); err != nil {
		t.Fatal(err)
	}
	if err := blob.PutBytes(ctx, store, leaderboard.LatestKey(many.Board), []byte(many.Stamp)); err != nil {
		t.Fatal(err)
	}
	srv2 := httptest.NewServer(Handler(store))
	defer srv2.Close()
	if n := sitetest.CheckPlots(t, b, srv2.URL+"/many/", []string{"", "bench-bfcl.html"}); n < 3 {
		t.Errorf("measured %d plots on the 20-model board, want at least 3", n)
	}
	var labels []string
	b.Eval(t, `[...document.querySelectorAll("#cost-bfcl g.point text")].map(t => t.textContent)`, &labels)
	if len(labels) != 20 || !strings.Contains(strings.Join(labels, "|"), "…") {
		t.Errorf("cost labels of 20 models: %q (want 20, long names cut with …)", labels)
	}
	b.Shot(t, "plots-20-models")
}

// TestBrowserExplorer opens a run page whose samples are served (a run
// above the static limit, lowered for the test): the first page shows,
// a search finds the one sample that holds a string, sorting by score
// reorders, and a compare page lists its per-sample diff.
func TestBrowserExplorer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the browser test starts chromium")
	}
	_, s, h := servedLarge(t)
	srv := httptest.NewServer(h)
	defer srv.Close()
	b := sitetest.NewBrowser(t)
	a := runOf(t, s, "bfcl", "acme/model-a")
	b.Run(t, "open the run", chromedp.Navigate(srv.URL+"/demo/run-"+a+".html"), chromedp.WaitVisible(chromedp.CSS("section.pager")))
	b.WaitJS(t, "the first samples", `document.querySelectorAll("article.sample").length === 50`)
	var first string
	b.Eval(t, `document.querySelector("article.sample").dataset.id`, &first)
	if first != "bfcl-000" {
		t.Errorf("first sample %q", first)
	}
	b.Run(t, "search", chromedp.SendKeys(chromedp.CSS("input.search"), "answer 117 from\n"))
	b.WaitJS(t, "one match", `document.querySelectorAll("article.sample").length === 1 && document.querySelector("article.sample").dataset.id === "bfcl-117"`)
	b.Clear(t, "input.search")
	b.Run(t, "clear the search", chromedp.SendKeys(chromedp.CSS("input.search"), "\n"))
	b.WaitJS(t, "all again", `document.querySelectorAll("article.sample").length === 50`)
	var changed bool
	b.Eval(t, `(() => { const s = document.querySelector("select.sort"); s.value = "score"; return s.dispatchEvent(new Event("change")); })()`, &changed)
	b.WaitJS(t, "lowest first", `document.querySelector("article.sample").dataset.id === "bfcl-007"`)
	var xss any
	b.Eval(t, `window.__xss || null`, &xss)
	if xss != nil {
		t.Errorf("a response ran as script: %v", xss)
	}
	b.NoProblems(t, "run page")
	b.Shot(t, "explorer-run")
	noisy := runOf(t, s, "bfcl", "baseline/noisy-0.3")
	page := ""
	for _, c := range []string{comparePage(a, noisy), comparePage(noisy, a)} {
		if _, err := blob.GetBytes(context.Background(), blobStoreOf(t, h), leaderboard.SiteKey(s.Board, s.Stamp)+"/"+c); err == nil {
			page = c
		}
	}
	b.Run(t, "open the compare page", chromedp.Navigate(srv.URL+"/demo/"+page), chromedp.WaitVisible(chromedp.CSS("section.pager")))
	b.WaitJS(t, "the per-sample diff", `document.querySelectorAll("table.pairs tbody tr").length === 50`)
	b.NoProblems(t, "compare page")
	b.Shot(t, "explorer-compare")
	_ = sitetest.XSS
}

func blobStoreOf(t *testing.T, h any) blob.Store {
	t.Helper()
	return h.(*handler).store
}

// TestBrowserPageScripts: the page checks find what they look for (a
// mean of n=0, overlapping labels, a label off its plot) on a page made to
// have them, and nothing on one without.
func TestBrowserPageScripts(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the browser test starts chromium")
	}
	bad := `<main><table><tr><td>0.000 <small>[0.000, 0.000] n=0</small></td><td>0.5 n=10</td></tr></table>` +
		`<svg class="plot" id="p" width="200" height="100"><text x="10" y="20">first label</text><text x="12" y="22">second</text><text x="190" y="50">off the edge</text></svg></main>`
	good := `<main><table><tr><td>0.500 <small>[0.4, 0.6] n=10</small></td><td>–</td></tr></table>` +
		`<svg class="plot" id="p" width="200" height="100"><text x="10" y="20">one</text><text x="10" y="60">two</text></svg></main>`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path == "/bad" {
			fmt.Fprint(w, "<!doctype html>"+bad)
			return
		}
		fmt.Fprint(w, "<!doctype html>"+good)
	}))
	defer srv.Close()
	b := sitetest.NewBrowser(t)
	for _, tc := range []struct {
		page string
		want []string
	}{
		{"/bad", []string{"a mean of n=0: 0.000 [0.000, 0.000] n=0", `p: "off the edge" leaves the plot`, `p: "first label" overlaps "second"`}},
		{"/good", nil},
	} {
		b.Run(t, "open "+tc.page, chromedp.Navigate(srv.URL+tc.page), chromedp.WaitReady(chromedp.CSS("main")))
		var got []string
		for _, script := range []string{sitetest.MeanOfNothing, sitetest.PlotLabelProblems} {
			var found []string
			b.Eval(t, script, &found)
			got = append(got, found...)
		}
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s: found %q, want %q", tc.page, got, tc.want)
		}
	}
}
