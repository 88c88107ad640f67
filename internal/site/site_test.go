package site

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets/taskfile"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/golden"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/internal/site/sitetest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// written builds the fixture stamp and its site in a memory store.
func written(t testing.TB) (*blobtest.Memory, leaderboard.Scores) {
	t.Helper()
	ctx := context.Background()
	store := blobtest.NewMemory()
	s, err := sitetest.Fixture(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(ctx, store, s); err != nil {
		t.Fatal(err)
	}
	return store, s
}

// siteFiles returns the stamp's site files by their path below the site.
func siteFiles(t *testing.T, store blob.Store, s leaderboard.Scores) map[string][]byte {
	t.Helper()
	ctx := context.Background()
	prefix := leaderboard.SiteKey(s.Board, s.Stamp) + "/"
	infos, err := store.List(ctx, prefix)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, in := range infos {
		b, err := blob.GetBytes(ctx, store, in.Key)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimPrefix(in.Key, prefix)] = b
	}
	return out
}

// dump writes the site's files under dir, as a user copying them out of the
// store would.
func dump(t *testing.T, files map[string][]byte, dir string) {
	t.Helper()
	for name, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func runOf(t *testing.T, s leaderboard.Scores, dataset, model string) string {
	t.Helper()
	for _, c := range s.Cells {
		if c.Dataset == dataset && c.Model == model {
			return c.RunID
		}
	}
	t.Fatalf("no cell %s × %s", dataset, model)
	return ""
}

// TestGolden renders the fixture and compares the pages, plots, a data page
// and a download with testdata/golden (go test -run TestGolden -update
// ./internal/site/ rewrites them).
func TestGolden(t *testing.T) {
	store, s := written(t)
	files := siteFiles(t, store, s)
	a := runOf(t, s, "bfcl", "acme/model-a")
	ref := runOf(t, s, "bfcl", "baseline/reference")
	goldens := map[string]string{
		"index.html":                  "index.html",
		"bench-bfcl.html":             "bench-bfcl.html",
		"bench-medrubric.html":        "bench-medrubric.html",
		"run-" + a + ".html":          "run-bfcl-model-a.html",
		"data/run-" + a + "/p0001.js": "run-bfcl-model-a-p0001.js",
		"plots/scores-bfcl.svg":       "scores-bfcl.svg",
		"plots/cost-bfcl.svg":         "cost-bfcl.svg",
		"plots/history-bfcl.svg":      "history-bfcl.svg",
		"downloads/bench-bfcl.csv":    "bench-bfcl.csv",
		"downloads/cells.csv":         "cells.csv",
	}
	var cmp string
	for name := range files {
		if strings.HasPrefix(name, "compare-") && strings.Contains(name, a) && strings.Contains(name, ref) {
			cmp = name
		}
	}
	if cmp == "" {
		t.Fatalf("no compare page of %s and %s", a, ref)
	}
	goldens[cmp] = "compare-bfcl-reference-model-a.html"
	for name, g := range goldens {
		got, ok := files[name]
		if !ok {
			t.Errorf("the site has no %s", name)
			continue
		}
		golden.Check(t, filepath.Join("testdata", "golden", g), string(got), *update,
			"go test -run TestGolden -update ./internal/site/ after checking the change")
	}
}

// TestLayout checks the file set: every page, plot and download, data pages
// of PageSize samples, and nothing outside the stamp's site.
func TestLayout(t *testing.T) {
	store, s := written(t)
	files := siteFiles(t, store, s)
	want := []string{"index.html", "bench-bfcl.html", "bench-medrubric.html", "assets/site.css", "assets/site.js",
		"downloads/cells.csv", "downloads/cells.parquet"}
	for _, b := range []string{"bfcl", "medrubric"} {
		for _, p := range []string{"scores", "cost", "history"} {
			want = append(want, "plots/"+p+"-"+b+".svg")
		}
		for _, d := range []string{"bench", "comparisons"} {
			want = append(want, "downloads/"+d+"-"+b+".csv", "downloads/"+d+"-"+b+".parquet")
		}
	}
	for _, r := range s.Runs {
		want = append(want, "run-"+r.RunID+".html")
		for _, d := range []string{"samples", "metrics"} {
			want = append(want, "downloads/run-"+r.RunID+"-"+d+".csv", "downloads/run-"+r.RunID+"-"+d+".parquet")
		}
	}
	for _, c := range s.Comparisons {
		key := "compare-" + c.RunA + "-" + c.RunB
		want = append(want, key+".html", "downloads/"+key+".csv", "downloads/"+key+".parquet")
	}
	for _, w := range want {
		if _, ok := files[w]; !ok {
			t.Errorf("missing %s", w)
		}
	}
	// bfcl runs have 120 samples: pages of 50, 50 and 20.
	a := runOf(t, s, "bfcl", "acme/model-a")
	for n, size := range map[string]int{"p0001.js": 50, "p0002.js": 50, "p0003.js": 20} {
		b := files["data/run-"+a+"/"+n]
		if got := strings.Count(string(b), `"id":`); got != size {
			t.Errorf("data/run-%s/%s holds %d samples, want %d", a, n, got, size)
		}
	}
	if _, ok := files["data/run-"+a+"/p0004.js"]; ok {
		t.Error("a fourth data page for 120 samples")
	}
	// bfcl's dataset rows are in the store, medrubric's are not: its run
	// pages say which file is missing.
	if !strings.Contains(string(files["data/run-"+a+"/p0001.js"]), `"prompt":"id: bfcl-000\nquestion: What is the weather in city 0?`) {
		t.Error("bfcl samples do not carry their dataset rows")
	}
	if strings.Contains(string(files["run-"+a+".html"]), "No result shards") {
		t.Error("a run with results says it has none")
	}
	m := runOf(t, s, "medrubric", "acme/model-a")
	if page := string(files["run-"+m+".html"]); !strings.Contains(page, "datasets/medrubric/vba9876543210/data/part-00000.parquet") || !strings.Contains(page, "not in the store") {
		t.Error("the medrubric run page does not name its missing dataset file")
	}
	all, err := store.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range all {
		if strings.HasPrefix(in.Key, "leaderboards/") && !strings.HasPrefix(in.Key, leaderboard.SiteKey(s.Board, s.Stamp)+"/") && !strings.HasSuffix(in.Key, "/scores.json") {
			t.Errorf("Write wrote %s outside the site", in.Key)
		}
	}
}

// TestWriteIsIdempotent writes the site twice: the same keys, the same bytes.
func TestWriteIsIdempotent(t *testing.T) {
	store, s := written(t)
	first := siteFiles(t, store, s)
	if err := Write(context.Background(), store, s); err != nil {
		t.Fatal(err)
	}
	second := siteFiles(t, store, s)
	if len(first) != len(second) {
		t.Fatalf("%d files, then %d", len(first), len(second))
	}
	for k, v := range first {
		if !bytes.Equal(v, second[k]) {
			t.Errorf("%s changed on the second write", k)
		}
	}
}

// TestDownloads reads the Parquet downloads back and checks them against
// the Scores.
func TestDownloads(t *testing.T) {
	store, s := written(t)
	ctx := context.Background()
	prefix := leaderboard.SiteKey(s.Board, s.Stamp) + "/downloads/"
	cells, err := pq.ReadAll[CellRow](ctx, store, prefix+"cells.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != len(s.Cells) {
		t.Fatalf("cells.parquet has %d rows, want %d", len(cells), len(s.Cells))
	}
	for i, c := range s.Cells {
		g := cells[i]
		if g.Dataset != c.Dataset || g.Model != c.Model || g.Mean != c.Mean || g.CILow != c.CILow || g.CIHigh != c.CIHigh || g.N != c.N || g.RunID != c.RunID {
			t.Errorf("cells.parquet row %d = %+v, want %+v", i, g, c)
		}
		if g.Baseline != strings.HasPrefix(c.Model, "baseline/") {
			t.Errorf("cells.parquet row %d: baseline %v for %s", i, g.Baseline, c.Model)
		}
	}
	rows, err := pq.ReadAll[BenchRow](ctx, store, prefix+"bench-bfcl.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("bench-bfcl.parquet has %d rows, want 3", len(rows))
	}
	for _, r := range rows {
		if len(r.Categories) != 2 || r.TaskVersion != "bfcl-ast/3" || r.Samples != 120 {
			t.Errorf("bench-bfcl.parquet row %+v: want 2 categories, scorer bfcl-ast/3, 120 samples", r)
		}
	}
	cmps, err := pq.ReadAll[ComparisonRow](ctx, store, prefix+"comparisons-bfcl.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if len(cmps) != 3 {
		t.Errorf("comparisons-bfcl.parquet has %d rows, want 3", len(cmps))
	}
	noisy := runOf(t, s, "bfcl", "baseline/noisy-0.3")
	samples, err := pq.ReadAll[SampleRow](ctx, store, prefix+"run-"+noisy+"-samples.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) != 120 || samples[11].ErrorClass != "infrastructure" || samples[11].Score != nil || samples[10].Score == nil || *samples[10].Score != 1 {
		t.Errorf("run-%s-samples.parquet: %d rows; row 11 %+v (want infrastructure, no score); row 10 %+v (want 1)", noisy, len(samples), samples[11], samples[10])
	}
	csv, _ := blob.GetBytes(ctx, store, prefix+"bench-bfcl.csv")
	if !strings.HasPrefix(string(csv), "model,baseline,metric,mean,ci_low,ci_high,rank_low,rank_high,category:multiple,category:simple,cost_usd,") {
		t.Errorf("bench-bfcl.csv header: %q", strings.SplitN(string(csv), "\n", 2)[0])
	}
}

// TestModelTextIsEscaped: a response holding <script> reaches the data page
// only as JSON-escaped text, and a model name holding markup is escaped in
// the pages and plots. (The browser test checks the page shows it as text.)
func TestModelTextIsEscaped(t *testing.T) {
	ctx := context.Background()
	store := blobtest.NewMemory()
	s, err := sitetest.Fixture(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	s.Models[0].DisplayName = `<b onmouseover="x()">A</b>`
	if err := Write(ctx, store, s); err != nil {
		t.Fatal(err)
	}
	files := siteFiles(t, store, s)
	a := runOf(t, s, "bfcl", "acme/model-a")
	page := string(files["data/run-"+a+"/p0001.js"])
	if strings.Contains(page, "<script") || strings.Contains(page, "<img") {
		t.Errorf("the data page holds raw markup from a response")
	}
	if !strings.Contains(page, `\u003cscript\u003ewindow.__xss=1\u003c/script\u003e`) {
		t.Errorf("the data page lost the response text")
	}
	for name, b := range files {
		if strings.Contains(string(b), `<b onmouseover`) {
			t.Errorf("%s holds the model name's markup unescaped", name)
		}
	}
	if !strings.Contains(string(files["bench-bfcl.html"]), "&lt;b onmouseover=&#34;x()&#34;&gt;A&lt;/b&gt;") {
		t.Error("bench-bfcl.html does not show the escaped model name")
	}
	if !strings.Contains(string(files["plots/scores-bfcl.svg"]), "&lt;b onmouseover=&#34;x()&#34;&gt;A&lt;/b&gt;") {
		t.Error("scores-bfcl.svg does not show the escaped model name")
	}
}

// TestBadInput: names that cannot be keys and corrupt result shards are
// errors naming what is wrong; nothing of the bad stamp is written.
func TestBadInput(t *testing.T) {
	ctx := context.Background()
	store := blobtest.NewMemory()
	s, err := sitetest.Fixture(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		change func(*leaderboard.Scores)
		want   string
	}{
		{"board", func(s *leaderboard.Scores) { s.Board = "../x" }, `board name "../x"`},
		{"stamp", func(s *leaderboard.Scores) { s.Stamp = "latest" }, `stamp "latest"`},
		{"run", func(s *leaderboard.Scores) { s.Runs[0].RunID = "r/../../x" }, `run id "r/../../x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := s
			bad.Runs = append([]leaderboard.Run(nil), s.Runs...)
			tc.change(&bad)
			err := Write(ctx, store, bad)
			if !errors.Is(err, ErrBadScores) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Write: %v, want ErrBadScores naming %s", err, tc.want)
			}
		})
	}
	infos, _ := store.List(ctx, "leaderboards/"+s.Board+"/"+s.Stamp+"/site/")
	if len(infos) != 0 {
		t.Errorf("bad scores wrote %d files", len(infos))
	}
	key := runs.ShardKey(s.Runs[1].RunID, 0)
	if err := blob.PutBytes(ctx, store, key, []byte("not parquet")); err != nil {
		t.Fatal(err)
	}
	err = Write(ctx, store, s)
	if err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), s.Runs[1].RunID) {
		t.Fatalf("Write over a corrupt shard: %v, want an error naming %s", err, key)
	}
}

// TestHistorySkipsUnreadableStamps: an earlier stamp whose scores.json is
// corrupt is left out of the history plots and named on them and on the
// overview; the site is still written.
func TestHistorySkipsUnreadableStamps(t *testing.T) {
	ctx := context.Background()
	store := blobtest.NewMemory()
	s, err := sitetest.Fixture(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	bad := leaderboard.ScoresKey(s.Board, sitetest.EarlierStamps[0])
	if err := blob.PutBytes(ctx, store, bad, []byte("{")); err != nil {
		t.Fatal(err)
	}
	if err := Write(ctx, store, s); err != nil {
		t.Fatal(err)
	}
	files := siteFiles(t, store, s)
	for _, name := range []string{"index.html", "plots/history-bfcl.svg"} {
		if !strings.Contains(string(files[name]), bad) {
			t.Errorf("%s does not name the skipped %s", name, bad)
		}
	}
	if strings.Contains(string(files["plots/history-bfcl.svg"]), stampText(sitetest.EarlierStamps[0])+"</text>") {
		t.Error("the history plot still draws the unreadable stamp")
	}
	if !strings.Contains(string(files["plots/history-bfcl.svg"]), stampText(sitetest.EarlierStamps[1])) {
		t.Error("the history plot lost the readable earlier stamp")
	}
}

// TestEmptyScores: a stamp with no cells (every cell failed) still gets a
// site that says so, and so does a run whose results are gone.
func TestEmptyScores(t *testing.T) {
	ctx := context.Background()
	store := blobtest.NewMemory()
	s := leaderboard.Scores{Board: "empty", Stamp: "20261123T000000Z",
		Benchmarks: []leaderboard.Benchmark{{Dataset: "bfcl", Version: "v1", Headline: "accuracy"}},
		Failed:     []leaderboard.FailedCell{{Dataset: "bfcl", Model: "acme/x", Error: "gateway: unknown model"}}}
	if err := Write(ctx, store, s); err != nil {
		t.Fatal(err)
	}
	files := siteFiles(t, store, s)
	for _, name := range []string{"index.html", "bench-bfcl.html"} {
		if !strings.Contains(string(files[name]), "gateway: unknown model") {
			t.Errorf("%s does not show the failed cell", name)
		}
	}
	if !strings.Contains(string(files["plots/scores-bfcl.svg"]), "no cells") {
		t.Error("the empty scores plot does not say it is empty")
	}
	// A run whose results are gone: its page says so.
	s.Runs = []leaderboard.Run{{RunID: "rgone", Dataset: "bfcl", Version: "v1", Model: "acme/x"}}
	s.Cells = []leaderboard.Cell{{Dataset: "bfcl", Version: "v1", Model: "acme/x", Metric: "accuracy", RunID: "rgone"}}
	if err := Write(ctx, store, s); err != nil {
		t.Fatal(err)
	}
	if page := string(siteFiles(t, store, s)["run-rgone.html"]); !strings.Contains(page, "No result shards are stored under <code>runs/rgone/results/</code>") {
		t.Error("the page of a run without results does not say so")
	}
}

func TestNiceMax(t *testing.T) {
	for _, tc := range []struct{ hi, top, step float64 }{
		{0, 1, 0.25}, {0.063, 0.08, 0.02}, {1, 1, 0.5}, {0.9, 1, 0.5}, {3.7, 4, 1}, {12, 15, 5}, {0.0011, 0.0015, 0.0005}, {-1, 1, 0.25},
	} {
		top, step := niceMax(tc.hi)
		if math.Abs(top-tc.top) > 1e-12 || math.Abs(step-tc.step) > 1e-12 {
			t.Errorf("niceMax(%v) = %v, %v; want %v, %v", tc.hi, top, step, tc.top, tc.step)
		}
	}
}

func TestCleanPath(t *testing.T) {
	for p, want := range map[string]bool{
		"index.html": true, "plots/scores-bfcl.svg": true, "data/run-r1/p0001.js": true,
		"": false, "..": false, "../x": false, "a/../b": false, "./a": false, "a//b": false, "a/": false, "/a": false, `a\b`: false, "a\x00": false,
	} {
		if got := cleanPath(p); got != want {
			t.Errorf("cleanPath(%q) = %v, want %v", p, got, want)
		}
	}
}

// TestRunPageShowsTaskFile: a task-file run's page shows the task file
// stored with its dataset version, escaped and cut at MaxCardTaskBytes; a
// built-in benchmark's run page has no task file.
func TestRunPageShowsTaskFile(t *testing.T) {
	ctx := context.Background()
	store := blobtest.NewMemory()
	s, err := sitetest.Fixture(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	a := runOf(t, s, "bfcl", "acme/model-a")
	var r leaderboard.Run
	for _, run := range s.Runs {
		if run.RunID == a {
			r = run
		}
	}
	head := "name: bfcl\nprompt: \"</code></pre><script>window.__xss=1</script>\"\n"
	raw := head + strings.Repeat("# padding line of the task file\n", taskfile.MaxCardTaskBytes/32+100) + "tail: never shown\n"
	key := taskfile.TaskFileKey(r.Dataset, r.Version)
	if err := store.Put(ctx, key, strings.NewReader(raw), int64(len(raw))); err != nil {
		t.Fatal(err)
	}
	if err := Write(ctx, store, s); err != nil {
		t.Fatal(err)
	}
	files := siteFiles(t, store, s)
	page := string(files["run-"+a+".html"])
	for _, want := range []string{"Task file (<code>" + key + "</code>)", "name: bfcl", "&lt;/code&gt;&lt;/pre&gt;&lt;script&gt;window.__xss=1&lt;/script&gt;", "cut at "} {
		if !strings.Contains(page, want) {
			t.Errorf("run page lacks %q", want)
		}
	}
	if strings.Contains(page, "<script>window.__xss") || strings.Contains(page, "tail: never shown") {
		t.Error("run page shows the task file unescaped or uncut")
	}
	for _, run := range s.Runs {
		if run.Dataset != r.Dataset && strings.Contains(string(files["run-"+run.RunID+".html"]), "Task file") {
			t.Errorf("run %s (%s, no task file) shows a task file", run.RunID, run.Dataset)
		}
	}
}
