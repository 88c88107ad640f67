package site

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/site/sitetest"
	"github.com/chromedp/chromedp"
)

// TestMeasureExplorer times the served explorer in headless chromium
// against a running `benchline leaderboard serve` (the figures of
// docs/PERFORMANCE.md, "Run explorer at a million samples"): how long the
// run page at BENCHLINE_EXPLORER_PAGE takes to show its first samples, and
// a search for BENCHLINE_EXPLORER_SEARCH to show the one sample
// BENCHLINE_EXPLORER_WANT that holds it (comma-separated lists: one
// round per string, the page opened anew each round). It needs that server and a board
// with a large run, so it skips, saying so, when the variables are unset.
func TestMeasureExplorer(t *testing.T) {
	page, q, want := os.Getenv("BENCHLINE_EXPLORER_PAGE"), os.Getenv("BENCHLINE_EXPLORER_SEARCH"), os.Getenv("BENCHLINE_EXPLORER_WANT")
	if page == "" || q == "" || want == "" {
		t.Skip("set BENCHLINE_EXPLORER_PAGE (a served run page), BENCHLINE_EXPLORER_SEARCH and BENCHLINE_EXPLORER_WANT (docs/PERFORMANCE.md)")
	}
	b := sitetest.NewBrowser(t)
	wait := func(what, expr string) time.Duration {
		start := time.Now()
		for time.Since(start) < 2*time.Minute {
			if ok, err := chromedp.Run(b.Context(), chromedp.Evaluate[bool](expr)); err == nil && ok {
				return time.Since(start)
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("%s: timed out", what)
		return 0
	}
	qs, wants := strings.Split(q, ","), strings.Split(want, ",")
	for round := 1; round <= len(qs) && round <= len(wants); round++ {
		q, want := qs[round-1], wants[round-1]
		start := time.Now()
		b.Run(t, "open", chromedp.Navigate(page))
		load := time.Since(start)
		first := load + wait("first samples", `document.querySelectorAll("article.sample").length > 0`)
		var ok bool
		b.Eval(t, fmt.Sprintf(`(() => { const s = document.querySelector("input.search"); s.value = %q; s.dispatchEvent(new KeyboardEvent("keydown", {key: "Enter"})); return true; })()`, q), &ok)
		found := wait("search", fmt.Sprintf(`document.querySelectorAll("article.sample").length === 1 && document.querySelector("article.sample").dataset.id === %q`, want))
		t.Logf("round %d: first samples %v (page load %v), search %q -> %s in %v", round, first.Round(time.Millisecond), load.Round(time.Millisecond), q, want, found.Round(time.Millisecond))
		fmt.Printf("explorer round=%d first_samples_ms=%d search_ms=%d\n", round, first.Milliseconds(), found.Milliseconds())
	}
	b.NoProblems(t, "explorer")
	b.Shot(t, "explorer-measured")
}
