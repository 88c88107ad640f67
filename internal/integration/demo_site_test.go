package integration

import (
	"bytes"
	"context"
	"net/http/httptest"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/devstack"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/site"
	"github.com/benchline/benchline/internal/site/sitetest"
)

// TestDemoBoardInBrowser runs the demo's work on the test stack (the code
// `make demo` runs after start-up) and opens every page of the board it
// writes, served as `benchline leaderboard serve` serves it, in headless
// chromium: on no page does a table cell show a mean over n = 0, a plot
// label leave its plot or overlap another, or the console log an error.
func TestDemoBoardInBrowser(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := devstack.Demo(ctx, &out, stack, t.TempDir()); err != nil {
		t.Fatalf("demo: %v\n%s", err, lastLines(out.String(), 40))
	}
	stamp, err := blob.GetBytes(ctx, stack.Store, leaderboard.LatestKey(devstack.DemoBoard))
	if err != nil {
		t.Fatal(err)
	}
	prefix := leaderboard.SiteKey(devstack.DemoBoard, string(stamp)) + "/"
	infos, err := stack.Store.List(ctx, prefix)
	if err != nil {
		t.Fatal(err)
	}
	var pages []string
	runs, compares := 0, 0
	for _, in := range infos {
		name := strings.TrimPrefix(in.Key, prefix)
		if strings.Contains(name, "/") || path.Ext(name) != ".html" {
			continue
		}
		switch {
		case strings.HasPrefix(name, "run-"):
			runs++
		case strings.HasPrefix(name, "compare-"):
			compares++
		}
		if name == "index.html" {
			name = ""
		}
		pages = append(pages, name)
	}
	var s leaderboard.Scores
	if err := blob.GetJSON(ctx, stack.Store, leaderboard.ScoresKey(devstack.DemoBoard, string(stamp)), &s); err != nil {
		t.Fatal(err)
	}
	if runs != len(s.Runs) || runs < 12 || compares == 0 {
		t.Fatalf("the demo board's site has %d run pages (scores.json: %d runs) and %d compare pages", runs, len(s.Runs), compares)
	}
	// The suites written for other tools are on the board with their
	// cells (TestDemoSuites checks their scores).
	for _, ds := range []string{"demo-shop-math", "promptfooconfig"} {
		if !slices.ContainsFunc(s.Benchmarks, func(b leaderboard.Benchmark) bool { return b.Dataset == ds }) ||
			!slices.ContainsFunc(s.Cells, func(c leaderboard.Cell) bool { return c.Dataset == ds }) {
			t.Errorf("the demo board has no benchmark %s with cells", ds)
		}
	}
	srv := httptest.NewServer(site.Handler(stack.Store))
	defer srv.Close()
	b := sitetest.NewBrowser(t)
	n := sitetest.CheckPlots(t, b, srv.URL+"/"+devstack.DemoBoard+"/", pages, sitetest.MeanOfNothing)
	if n < 2*len(s.Benchmarks) {
		t.Errorf("measured %d plots on %d pages of the demo board, want at least %d", n, len(pages), 2*len(s.Benchmarks))
	}
	t.Logf("demo board, stamp %s: %d pages (%d run pages, %d compare pages), %d plots measured", stamp, len(pages), runs, compares, n)
}

// lastLines is the end of a long output.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
