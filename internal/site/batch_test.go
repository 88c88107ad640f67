package site

import (
	"bytes"
	"context"
	"encoding/csv"
	"strconv"
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/site/sitetest"
)

// between returns the text of s from the first from after start up to and
// including the next to; "" when either is missing.
func between(s, start, to string) string {
	i := strings.Index(s, start)
	if i < 0 {
		return ""
	}
	j := strings.Index(s[i:], to)
	if j < 0 {
		return ""
	}
	return s[i : i+j+len(to)]
}

// TestBatchCostLabel: wherever the site shows a run's cost (the benchmark
// table and its downloads, the cost plot, the run page), a run whose summary says it was
// evaluated in batch mode is labelled "(batch)" with the explanation as a
// tooltip, escaped; an interactive run's cost is not labelled.
func TestBatchCostLabel(t *testing.T) {
	const label = `<span class="batch" title="at the providers&#39; batch prices">(batch)</span>`
	for _, tc := range []struct {
		name  string
		batch map[string]bool // models whose bfcl run is in batch mode
	}{
		{"interactive", map[string]bool{}},
		{"one batch run", map[string]bool{"acme/model-a": true}},
		{"batch run of a baseline at $0", map[string]bool{"baseline/reference": true}},
		{"every run in batch", map[string]bool{"acme/model-a": true, "baseline/reference": true, "baseline/noisy-0.3": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			store := blobtest.NewMemory()
			s, err := sitetest.Fixture(ctx, store)
			if err != nil {
				t.Fatal(err)
			}
			for i := range s.Runs {
				if s.Runs[i].Dataset == "bfcl" {
					s.Runs[i].Summary.Batch = tc.batch[s.Runs[i].Model]
				}
			}
			if err := Write(ctx, store, s); err != nil {
				t.Fatal(err)
			}
			files := siteFiles(t, store, s)
			bench, plot := string(files["bench-bfcl.html"]), string(files["plots/cost-bfcl.svg"])
			for _, r := range s.Runs {
				if r.Dataset != "bfcl" {
					continue
				}
				want := tc.batch[r.Model]
				cost := usd(r.Summary.CostUSD)
				row := between(bench, `data-model="`+r.Model+`"`, "</tr>")
				if got := strings.Contains(row, cost+" "+label); got != want {
					t.Errorf("bench-bfcl.html, %s: cost labelled batch %t, want %t:\n%s", r.Model, got, want, row)
				}
				point := between(plot, `data-model="`+r.Model+`"`, "</g>")
				if got := strings.Contains(point, ", "+cost+" (batch)</text>"); got != want {
					t.Errorf("cost-bfcl.svg, %s: label says batch %t, want %t:\n%s", r.Model, got, want, point)
				}
				if got := strings.Contains(point, "(batch), at the providers&#39; batch prices</title>"); got != want {
					t.Errorf("cost-bfcl.svg, %s: batch tooltip %t, want %t:\n%s", r.Model, got, want, point)
				}
				summary := between(string(files["run-"+r.RunID+".html"]), `<h2 id="summary-h">`, "</p>")
				if got := strings.Contains(summary, "tokens, "+cost+" "+label+";"); got != want {
					t.Errorf("run page of %s: cost labelled batch %t, want %t:\n%s", r.Model, got, want, summary)
				}
				if !want && !strings.Contains(summary, "tokens, "+cost+";") {
					t.Errorf("run page of %s: interactive cost %s not shown plainly:\n%s", r.Model, cost, summary)
				}
			}
			rows, err := pq.ReadAll[BenchRow](ctx, store, leaderboard.SiteKey(s.Board, s.Stamp)+"/downloads/bench-bfcl.parquet")
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				if r.Batch != tc.batch[r.Model] {
					t.Errorf("bench-bfcl.parquet, %s: batch %t, want %t", r.Model, r.Batch, tc.batch[r.Model])
				}
			}
			recs, err := csv.NewReader(bytes.NewReader(files["downloads/bench-bfcl.csv"])).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if h := recs[0]; h[len(h)-1] != "batch" || h[len(h)-2] != "run_id" {
				t.Fatalf("bench-bfcl.csv header %q: want run_id, batch last", h)
			}
			for _, rec := range recs[1:] {
				if got, want := rec[len(rec)-1], strconv.FormatBool(tc.batch[rec[0]]); got != want {
					t.Errorf("bench-bfcl.csv, %s: batch %s, want %s", rec[0], got, want)
				}
			}
			caption := between(bench, `<a href="plots/cost-bfcl.svg">`, "</figcaption>")
			if got, want := strings.Contains(caption, "“(batch)”: at the providers&#39; batch prices"), len(tc.batch) > 0; got != want {
				t.Errorf("cost plot caption explains (batch): %t, want %t: %s", got, want, caption)
			}
		})
	}
}
