package site

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/benchline/benchline/internal/site/sitetest"
)

// TestBrowser opens the served site in headless chromium: the tables and
// plots show the numbers of scores.json, a column sorts by keyboard, the
// filter hides rows, a run page pages and searches its samples and shows a
// <script> response as text, a compare page shows the per-sample diff, and
// no page logs a console error.
func TestBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the browser test starts chromium")
	}
	_, s, h := served(t)
	srv := httptest.NewServer(h)
	defer srv.Close()
	res, err := http.Get(srv.URL + "/demo/scores.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc ScoresDoc
	if err := json.NewDecoder(res.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	b := sitetest.NewBrowser(t)

	// The overview: a table cell and a plot point per scores.json cell.
	b.Run(t, "open the overview", chromedp.Navigate(srv.URL+"/demo/"), chromedp.WaitVisible(chromedp.CSS("#overview")))
	var table map[string]map[string]string
	b.Eval(t, `Object.fromEntries([...document.querySelectorAll("#overview tbody tr")].map(r => [r.dataset.model,
		Object.fromEntries([...r.querySelectorAll("td[data-dataset]")].map(c => [c.dataset.dataset, c.textContent]))]))`, &table)
	var points map[string]string
	b.Eval(t, `Object.fromEntries([...document.querySelectorAll("svg.plot g.point")].map(g => [g.closest("svg").id + "|" + g.dataset.model, g.textContent]))`, &points)
	for _, c := range doc.Cells {
		want := num3(c.Mean) + " " + ciText(c.CILow, c.CIHigh)
		if got := table[c.Model][c.Dataset]; !strings.Contains(got, want) || !strings.Contains(got, fmt.Sprintf("n=%d", c.N)) {
			t.Errorf("overview %s × %s shows %q, want %q and n=%d", c.Dataset, c.Model, got, want, c.N)
		}
		if got := points["scores-"+c.Dataset+"|"+c.Model]; !strings.Contains(got, want) {
			t.Errorf("plot scores-%s, %s shows %q, want %q", c.Dataset, c.Model, got, want)
		}
	}
	var baselines []string
	b.Eval(t, `[...document.querySelectorAll("#overview tr.baseline")].filter(r => r.querySelector(".tag").textContent === "baseline").map(r => r.dataset.model)`, &baselines)
	if strings.Join(baselines, ",") != "baseline/reference,baseline/noisy-0.3" {
		t.Errorf("rows marked baseline: %v", baselines)
	}
	b.Shot(t, "01-overview")

	// A benchmark page: every column, sorted by the headline (keyboard),
	// then filtered.
	b.Run(t, "open bfcl", chromedp.Click(chromedp.CSS(`a[href="bench-bfcl.html"]`)), chromedp.WaitVisible(chromedp.CSS("#bench")))
	var heads []string
	b.Eval(t, `[...document.querySelectorAll("#bench thead th")].map(th => th.textContent)`, &heads)
	wantHeads := "Model accuracy Rank multiple simple Cost Tokens Latency p50 / p90 Samples Errors Judge agreement Dataset / scorer"
	if strings.Join(heads, " ") != wantHeads {
		t.Errorf("bfcl columns %q, want %q", strings.Join(heads, " "), wantHeads)
	}
	var bfcl []struct {
		model string
		mean  float64
	}
	for _, c := range doc.Cells {
		if c.Dataset == "bfcl" {
			bfcl = append(bfcl, struct {
				model string
				mean  float64
			}{c.Model, c.Mean})
		}
	}
	sort.Slice(bfcl, func(i, j int) bool { return bfcl[i].mean < bfcl[j].mean })
	var ascending []string
	for _, c := range bfcl {
		ascending = append(ascending, c.model)
	}
	// The first press sorts descending, the second ascending.
	// The cost and history plots of bfcl show each model's mean too.
	var plotTexts map[string]string
	b.Eval(t, `Object.fromEntries([...document.querySelectorAll("#cost-bfcl g.point, #history-bfcl g.series")].map(g => [g.closest("svg").id + "|" + g.dataset.model, g.textContent]))`, &plotTexts)
	for _, c := range doc.Cells {
		if c.Dataset != "bfcl" {
			continue
		}
		for _, id := range []string{"cost-bfcl", "history-bfcl"} {
			if got := plotTexts[id+"|"+c.Model]; !strings.Contains(got, num3(c.Mean)) {
				t.Errorf("plot %s, %s shows %q, want %s", id, c.Model, got, num3(c.Mean))
			}
		}
	}
	b.Run(t, "sort by keyboard", chromedp.Focus(chromedp.CSS(`#bench thead th:nth-child(2) button`)), chromedp.KeyEvent(kb.Enter),
		chromedp.Focus(chromedp.CSS(`#bench thead th:nth-child(2) button`)), chromedp.KeyEvent(kb.Enter))
	var order []string
	var sortState string
	b.Eval(t, `[...document.querySelectorAll("#bench tbody tr")].map(r => r.dataset.model)`, &order)
	b.Eval(t, `document.querySelector("#bench thead th:nth-child(2)").getAttribute("aria-sort")`, &sortState)
	if strings.Join(order, ",") != strings.Join(ascending, ",") || sortState != "ascending" {
		t.Errorf("after sorting ascending: %v (aria-sort %s), want %v", order, sortState, ascending)
	}
	b.Run(t, "sort by cost", chromedp.Click(chromedp.CSS(`#bench thead th:nth-child(6) button`)))
	b.Eval(t, `[...document.querySelectorAll("#bench tbody tr")].map(r => r.dataset.model)`, &order)
	if order[0] != "acme/model-a" { // the only run that cost anything, first when descending
		t.Errorf("sorted by cost, descending: %v", order)
	}
	b.Shot(t, "02-bench-sorted")
	b.Run(t, "filter", chromedp.SendKeys(chromedp.CSS(`input.filter[data-table="bench"]`), "noisy"))
	var visible []string
	var visible2 int
	b.Eval(t, `[...document.querySelectorAll("#bench tbody tr")].filter(r => !r.hidden).map(r => r.dataset.model)`, &visible)
	if strings.Join(visible, ",") != "baseline/noisy-0.3" {
		t.Errorf("filtered by \"noisy\": %v", visible)
	}
	b.Shot(t, "03-bench-filtered")
	b.Run(t, "clear the filter", chromedp.SendKeys(chromedp.CSS(`input.filter[data-table="bench"]`), strings.Repeat(kb.Backspace, len("noisy"))))
	b.Eval(t, `[...document.querySelectorAll("#bench tbody tr")].filter(r => !r.hidden).length`, &visible2)
	if visible2 != 3 {
		t.Errorf("with the filter cleared %d rows show, want 3", visible2)
	}
	b.NoProblems(t, "overview and bfcl")

	// A run page: 120 samples in pages of 50; search; a <script> response
	// shown as text.
	a := runOf(t, s, "bfcl", "acme/model-a")
	b.Run(t, "open a run", chromedp.Click(chromedp.CSS(fmt.Sprintf(`#bench a[href="run-%s.html"]`, a))), chromedp.WaitVisible(chromedp.CSS("#metrics")))
	b.WaitJS(t, "the first page of samples", `document.querySelectorAll(".items article.sample").length === 50`)
	var status string
	b.Eval(t, `document.querySelector(".pager .status").textContent`, &status)
	if status != "Showing 1–50 of 120." {
		t.Errorf("run page status %q", status)
	}
	b.Run(t, "next page", chromedp.Click(chromedp.CSS(".pager button.next")))
	b.WaitJS(t, "page 2", `document.querySelector(".items article.sample").dataset.id === "bfcl-050"`)
	b.Run(t, "last page", chromedp.Click(chromedp.CSS(".pager button.next")))
	b.WaitJS(t, "page 3 of 20", `document.querySelectorAll(".items article.sample").length === 20 && document.querySelector(".pager button.next").disabled`)
	b.Shot(t, "04-run-page3")
	b.Run(t, "search an id", chromedp.SendKeys(chromedp.CSS("input.search"), "bfcl-042"), chromedp.KeyEvent(kb.Enter))
	b.WaitJS(t, "one match", `document.querySelector(".pager .status").textContent.startsWith("1 of 120 match")`)
	var ids []string
	b.Eval(t, `[...document.querySelectorAll(".items article.sample")].map(a => a.dataset.id)`, &ids)
	if strings.Join(ids, ",") != "bfcl-042" {
		t.Errorf("search bfcl-042 shows %v", ids)
	}
	var prompt string
	b.Eval(t, `document.querySelector(".items .prompt").textContent`, &prompt)
	if !strings.Contains(prompt, "question: What is the weather in city 42?") {
		t.Errorf("sample bfcl-042 shows the dataset row %q", prompt)
	}
	b.Clear(t, "input.search")
	b.Run(t, "search an error class", chromedp.SendKeys(chromedp.CSS("input.search"), "unparseable"), chromedp.KeyEvent(kb.Enter))
	b.WaitJS(t, "12 unparseable", `document.querySelector(".pager .status").textContent.startsWith("12 of 120 match")`)
	b.Clear(t, "input.search")
	b.Run(t, "search the script", chromedp.SendKeys(chromedp.CSS("input.search"), "__xss"), chromedp.KeyEvent(kb.Enter))
	b.WaitJS(t, "the script sample", `document.querySelector(".pager .status").textContent.startsWith("1 of 120 match")`)
	var xss struct {
		Text    string `json:"text"`
		Scripts int    `json:"scripts"`
		Ran     any    `json:"ran"`
	}
	b.Eval(t, `({text: document.querySelector(".items .resp").textContent, scripts: document.querySelectorAll(".items script, .items img").length, ran: window.__xss === undefined ? null : window.__xss})`, &xss)
	if xss.Text != sitetest.XSS || xss.Scripts != 0 || xss.Ran != nil {
		t.Errorf("the <script> response: text %q, %d elements, ran %v; want it shown as text", xss.Text, xss.Scripts, xss.Ran)
	}
	b.Shot(t, "05-run-search-script")
	b.NoProblems(t, "run page")

	// A compare page: the paired statistics and the per-sample diff.
	ref := runOf(t, s, "bfcl", "baseline/reference")
	b.Run(t, "back to bfcl", chromedp.Navigate(srv.URL+"/demo/bench-bfcl.html"), chromedp.WaitVisible(chromedp.CSS("#comparisons")))
	var link string
	b.Eval(t, fmt.Sprintf(`[...document.querySelectorAll("#comparisons a")].map(a => a.getAttribute("href")).find(h => h.includes(%q) && h.includes(%q))`, a, ref), &link)
	if link == "" {
		t.Fatal("no compare link for model-a and the reference")
	}
	b.Run(t, "open compare", chromedp.Click(chromedp.CSS(fmt.Sprintf(`#comparisons a[href=%q]`, link))), chromedp.WaitVisible(chromedp.CSS("#paired")))
	b.WaitJS(t, "the diff rows", `document.querySelectorAll(".items tbody tr").length === 50`)
	var rows [][]string
	b.Eval(t, `[...document.querySelectorAll(".items tbody tr")].map(r => [...r.children].map(c => c.textContent))`, &rows)
	nonzero := 0
	for _, r := range rows {
		var x, y, d float64
		fmt.Sscan(strings.Fields(r[2])[0], &x)
		fmt.Sscan(strings.Fields(r[3])[0], &y)
		fmt.Sscan(strings.TrimPrefix(r[4], "+"), &d)
		if math.Abs((x-y)-d) > 1e-9 {
			t.Errorf("compare row %v: A − B is not the diff", r)
		}
		if d != 0 {
			nonzero++
		}
	}
	if nonzero == 0 {
		t.Error("the compare page shows no difference between model-a and the reference")
	}
	var paired string
	b.Eval(t, `document.querySelector("#paired").textContent`, &paired)
	if !strings.Contains(paired, "120") || !strings.Contains(paired, "paired-bootstrap") || !strings.Contains(paired, "holm") {
		t.Errorf("paired statistics: %q", paired)
	}
	b.Run(t, "search the diff", chromedp.SendKeys(chromedp.CSS("input.search"), "bfcl-003"), chromedp.KeyEvent(kb.Enter))
	b.WaitJS(t, "one pair", `document.querySelectorAll(".items tbody tr").length === 1`)
	b.Shot(t, "06-compare")
	b.NoProblems(t, "compare page")

	// On a phone: the page does not scroll sideways (tables scroll in their
	// own box).
	b.Run(t, "phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile))
	for i, page := range []string{"index.html", "bench-bfcl.html", "run-" + a + ".html", link} {
		b.Run(t, "phone "+page, chromedp.Navigate(srv.URL+"/demo/"+page), chromedp.WaitVisible(chromedp.CSS("main")))
		var widths []int
		b.Eval(t, `[document.documentElement.scrollWidth, window.innerWidth]`, &widths)
		if widths[0] > widths[1] {
			t.Errorf("on a 390 px screen %s is %d px wide", page, widths[0])
		}
		b.Shot(t, fmt.Sprintf("07-phone-%d", i+1))
	}
	b.NoProblems(t, "phone")
}

// TestBrowserFromDisk opens the site copied out of the store with file://:
// the overview table renders and a run page pages its samples, whose data
// come by <script> tags.
func TestBrowserFromDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the browser test starts chromium")
	}
	store, s := written(t)
	dir := t.TempDir()
	dump(t, siteFiles(t, store, s), dir)
	b := sitetest.NewBrowser(t)
	b.Run(t, "open index.html from disk", chromedp.Navigate("file://"+filepath.Join(dir, "index.html")), chromedp.WaitVisible(chromedp.CSS("#overview")))
	var cells int
	b.Eval(t, `document.querySelectorAll("#overview td[data-dataset]").length`, &cells)
	if cells != len(s.Cells) {
		t.Errorf("from disk the overview shows %d cells, want %d", cells, len(s.Cells))
	}
	a := runOf(t, s, "bfcl", "acme/model-a")
	b.Run(t, "open a run from disk", chromedp.Navigate("file://"+filepath.Join(dir, "run-"+a+".html")), chromedp.WaitVisible(chromedp.CSS("#metrics")))
	b.WaitJS(t, "samples from disk", `document.querySelectorAll(".items article.sample").length === 50`)
	b.Run(t, "search from disk", chromedp.SendKeys(chromedp.CSS("input.search"), "bfcl-119"), chromedp.KeyEvent(kb.Enter))
	b.WaitJS(t, "the last sample", `document.querySelector(".items article.sample") && document.querySelector(".items article.sample").dataset.id === "bfcl-119"`)
	b.Shot(t, "08-disk-run")
	b.NoProblems(t, "file://")
}
