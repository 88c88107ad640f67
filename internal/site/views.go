package site

import (
	"fmt"
	"html/template"
	"math"
	"sort"
	"strings"

	"github.com/benchline/benchline/internal/leaderboard"
)

// pageData is what every template gets.
type pageData struct {
	Board, Stamp, Title, Heading string
	Created                      string
	Body                         any
}

func (st *site) page(title string, body any) pageData {
	t := st.s.Title
	if t == "" {
		t = st.s.Board
	}
	full := t
	if title != "" {
		full = title + " · " + t
	}
	created := ""
	if !st.s.CreatedAt.IsZero() {
		created = st.s.CreatedAt.UTC().Format("2006-01-02 15:04 UTC")
	}
	return pageData{Board: st.s.Board, Stamp: st.s.Stamp, Title: full, Heading: t, Created: created, Body: body}
}

// benchView is one benchmark's page.
type benchView struct {
	Bench       leaderboard.Benchmark
	Slug        string
	Categories  []string
	Rows        []benchRow
	Comparisons []cmpRow
	Failed      []leaderboard.FailedCell
	Scores      template.HTML // inline SVG, also written to plots/
	Cost        template.HTML
	History     template.HTML
}

// Batch says whether any of the benchmark's runs was evaluated in batch
// mode: the cost plot's caption then says what "(batch)" means.
func (b *benchView) Batch() bool {
	for _, r := range b.Rows {
		if r.HasRun && r.Run.Summary.Batch {
			return true
		}
	}
	return false
}

// benchRow is one model's row of a benchmark table.
type benchRow struct {
	Model, Display string
	Baseline       bool
	Cell           leaderboard.Cell
	HasRun         bool
	Run            leaderboard.Run
	Cats           []catValue
	Tokens         int64
	Errors         string
	ErrorCount     int64
	Agreement      string
	RunPage        string
	TaskVersion    string // the scorer's version behind the cell
}

type catValue struct {
	Has   bool
	Value float64
	N     int
}

// cmpRow is one comparison of a benchmark.
type cmpRow struct {
	leaderboard.Comparison
	Page string
}

func (st *site) buildBenches() {
	byDataset := map[string]*benchView{}
	for _, b := range st.s.Benchmarks {
		v := &benchView{Bench: b, Slug: slug(b.Dataset)}
		byDataset[b.Dataset] = v
		st.benches = append(st.benches, v)
	}
	for _, c := range st.s.Cells {
		v := byDataset[c.Dataset]
		if v == nil { // a cell of a benchmark the board does not list: still shown
			v = &benchView{Bench: leaderboard.Benchmark{Dataset: c.Dataset, Version: c.Version, Headline: c.Metric}, Slug: slug(c.Dataset)}
			byDataset[c.Dataset] = v
			st.benches = append(st.benches, v)
		}
		row := benchRow{Model: c.Model, Display: st.display(c.Model), Baseline: st.isBaseline(c.Model), Cell: c, TaskVersion: v.Bench.TaskVersion}
		if r, ok := st.runs[c.RunID]; ok {
			if r.TaskVersion != "" {
				row.TaskVersion = r.TaskVersion
			}
			row.HasRun, row.Run = true, *r
			row.RunPage = "run-" + r.RunID + ".html"
			row.Tokens = r.Summary.PromptTokens + r.Summary.CompletionTokens
			row.Errors, row.ErrorCount = errorsText(r.Summary.ErrorsByClass)
			row.Agreement = agreementText(r)
		}
		v.Rows = append(v.Rows, row)
	}
	for _, f := range st.s.Failed {
		if v := byDataset[f.Dataset]; v != nil {
			v.Failed = append(v.Failed, f)
		}
	}
	for _, v := range st.benches {
		cats := map[string]bool{}
		for _, r := range v.Rows {
			for _, c := range r.Run.Summary.Categories {
				cats[c.Category] = true
			}
		}
		for c := range cats {
			v.Categories = append(v.Categories, c)
		}
		sort.Strings(v.Categories)
		for i := range v.Rows {
			r := &v.Rows[i]
			for _, name := range v.Categories {
				cv := catValue{}
				for _, c := range r.Run.Summary.Categories {
					if c.Category != name {
						continue
					}
					if m, ok := headlineOf(c.Metrics, r.Cell.Metric); ok && m.N > 0 {
						cv = catValue{Has: true, Value: m.Mean, N: m.N}
					}
				}
				r.Cats = append(r.Cats, cv)
			}
		}
		sort.SliceStable(v.Rows, func(i, j int) bool { return v.Rows[i].Cell.Mean > v.Rows[j].Cell.Mean })
	}
	for _, c := range st.s.Comparisons {
		v := byDataset[c.Dataset]
		if v == nil {
			continue
		}
		row := cmpRow{Comparison: c}
		if st.runs[c.RunA] != nil && st.runs[c.RunB] != nil {
			row.Page = comparePage(c.RunA, c.RunB)
		}
		v.Comparisons = append(v.Comparisons, row)
	}
}

func comparePage(a, b string) string { return "compare-" + a + "-" + b + ".html" }

func errorsText(m map[string]int64) (string, int64) {
	keys := make([]string, 0, len(m))
	var n int64
	for k, v := range m {
		keys = append(keys, k)
		n += v
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %d", k, m[k]))
	}
	return strings.Join(parts, ", "), n
}

func agreementText(r *leaderboard.Run) string {
	var parts []string
	for _, a := range r.Summary.Agreement {
		alpha := "α n/a"
		if a.Alpha != nil {
			alpha = fmt.Sprintf("α %.3f", *a.Alpha)
		}
		name := a.Set
		if name == "" {
			name = "panel"
		}
		parts = append(parts, fmt.Sprintf("%s: %s (%d/%d unanimous)", name, alpha, a.Unanimous, a.Paired))
	}
	return strings.Join(parts, "; ")
}

// overviewView is index.html's body.
type overviewView struct {
	// Changes is the stamp's changes.json, when the refresh wrote one.
	HasChanges bool
	Changes    leaderboard.Changes
	Benches    []*benchView
	Models     []overviewModel
	Runs       int
	Failed     []leaderboard.FailedCell
	Skipped    []string
}

// overviewModel is one row of the overview table: a model's headline cell
// on every benchmark.
type overviewModel struct {
	Model, Display string
	Baseline       bool
	Info           leaderboard.Model
	Cells          []overviewCell
}

type overviewCell struct {
	Has     bool
	Cell    leaderboard.Cell
	RunPage string
}

func (st *site) overview() overviewView {
	v := overviewView{Benches: st.benches, Runs: len(st.s.Runs), Failed: st.s.Failed, Skipped: st.skipped, HasChanges: st.hasChanges, Changes: st.changes}
	seen := map[string]bool{}
	var names []string
	for _, m := range st.s.Models {
		if !seen[m.Model] {
			seen[m.Model] = true
			names = append(names, m.Model)
		}
	}
	for _, c := range st.s.Cells {
		if !seen[c.Model] {
			seen[c.Model] = true
			names = append(names, c.Model)
		}
	}
	for _, name := range names {
		om := overviewModel{Model: name, Display: st.display(name), Baseline: st.isBaseline(name), Info: st.models[name]}
		for _, b := range st.benches {
			oc := overviewCell{}
			for _, r := range b.Rows {
				if r.Model == name {
					oc = overviewCell{Has: true, Cell: r.Cell, RunPage: r.RunPage}
				}
			}
			om.Cells = append(om.Cells, oc)
		}
		v.Models = append(v.Models, om)
	}
	return v
}

// Formatting helpers shared by the templates, the plots and the downloads.

func num3(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.3f", x)
}

func ciText(lo, hi float64) string { return "[" + num3(lo) + ", " + num3(hi) + "]" }

func usd(x float64) string {
	switch {
	case x == 0:
		return "$0"
	case x < 0.01:
		return fmt.Sprintf("$%.4f", x)
	default:
		return fmt.Sprintf("$%.2f", x)
	}
}

// batchNote explains a "(batch)" cost label: the run was evaluated in batch
// mode (aggregate.Summary.Batch), so its cost is at batch prices.
const batchNote = "at the providers' batch prices"

// costText is a run's cost as the plots show it: usd, then " (batch)" when
// the run was evaluated in batch mode.
func costText(cost float64, batch bool) string {
	if batch {
		return usd(cost) + " (batch)"
	}
	return usd(cost)
}

func ms(x float64) string {
	if x >= 1000 {
		return fmt.Sprintf("%.2f s", x/1000)
	}
	return fmt.Sprintf("%.0f ms", x)
}

func pval(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return fmt.Sprintf("%.3f", p)
}

func rankText(c leaderboard.Cell) string {
	switch {
	case c.RankLow == 0:
		return ""
	case c.RankLow == c.RankHigh:
		return fmt.Sprint(c.RankLow)
	default:
		return fmt.Sprintf("%d–%d", c.RankLow, c.RankHigh)
	}
}
