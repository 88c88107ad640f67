package site

import (
	"fmt"

	"github.com/benchline/benchline/internal/aggregate"
)

// pivot is a run's metrics as a table people read: one row per scope
// (overall, then each category), one column per metric, the headline
// first.
type pivot struct {
	Metrics    []string
	Overall    pivotRow
	Categories []pivotRow
}

type pivotRow struct {
	Scope   string
	Samples int64
	Cells   []pivotCell
}

// pivotCell is a metric in a scope. Has is false when no sample of the
// scope has the metric; Why then says so (shown on hover, the cell shows
// "–"), never a mean of zero.
type pivotCell struct {
	Has      bool
	Stat     aggregate.MetricStat
	Why      string
	Headline bool
}

// buildPivot pivots a summary's metrics; headline (when the summary has
// it) comes first, the other metrics in the summary's order.
func buildPivot(sum aggregate.Summary, headline string) pivot {
	var p pivot
	seen := map[string]bool{}
	add := func(name string) {
		if !seen[name] {
			seen[name] = true
			p.Metrics = append(p.Metrics, name)
		}
	}
	if _, ok := headlineOf(sum.Metrics, headline); ok {
		add(headline)
	}
	for _, m := range sum.Metrics {
		add(m.Name)
	}
	for _, c := range sum.Categories {
		for _, m := range c.Metrics {
			add(m.Name)
		}
	}
	row := func(scope string, samples int64, ms []aggregate.MetricStat) pivotRow {
		r := pivotRow{Scope: scope, Samples: samples}
		for _, name := range p.Metrics {
			c := pivotCell{Headline: name == headline}
			m, ok := headlineOf(ms, name)
			switch {
			case !ok:
				c.Why = fmt.Sprintf("no sample in %s has %s", scope, name)
			case m.N == 0:
				c.Why = fmt.Sprintf("no scored sample in %s has %s (n = 0)", scope, name)
			default:
				c.Has, c.Stat = true, m
			}
			r.Cells = append(r.Cells, c)
		}
		return r
	}
	p.Overall = row("overall", sum.Samples, sum.Metrics)
	for _, c := range sum.Categories {
		p.Categories = append(p.Categories, row(c.Category, c.Samples, c.Metrics))
	}
	return p
}

// comparePivot is a compare page's metrics side by side: one row per
// scope (overall, then every category either run has), and per metric A's
// and B's mean [CI] n and the difference of the two means. The paired
// test is the page's statistics section (the headline, overall); the
// difference here is of the scope's means, unpaired.
type comparePivot struct {
	Metrics    []string
	Overall    comparePivotRow
	Categories []comparePivotRow
}

type comparePivotRow struct {
	Scope              string
	SamplesA, SamplesB int64
	Cells              []compareCell
}

// compareCell is one metric in one scope of both runs; HasDiff is false
// unless both have it.
type compareCell struct {
	A, B     pivotCell
	HasDiff  bool
	Diff     float64
	Headline bool
}

// buildComparePivot pivots two runs' summaries on the union of their
// metrics and categories (A's order first).
func buildComparePivot(a, b aggregate.Summary, headline string) comparePivot {
	pa, pb := buildPivot(a, headline), buildPivot(b, headline)
	var p comparePivot
	seen := map[string]bool{}
	for _, m := range append(append([]string{}, pa.Metrics...), pb.Metrics...) {
		if !seen[m] {
			seen[m] = true
			p.Metrics = append(p.Metrics, m)
		}
	}
	// A scope a run does not have is a row of empty cells saying so.
	missing := func(scope string) pivotRow { return pivotRow{Scope: scope} }
	cell := func(r pivotRow, metrics []string, name, scope string) pivotCell {
		for k, m := range metrics {
			if m == name && k < len(r.Cells) {
				return r.Cells[k]
			}
		}
		return pivotCell{Why: fmt.Sprintf("no sample in %s has %s", scope, name)}
	}
	row := func(scope string, ra, rb pivotRow) comparePivotRow {
		r := comparePivotRow{Scope: scope, SamplesA: ra.Samples, SamplesB: rb.Samples}
		for _, name := range p.Metrics {
			c := compareCell{A: cell(ra, pa.Metrics, name, scope), B: cell(rb, pb.Metrics, name, scope), Headline: name == headline}
			if c.HasDiff = c.A.Has && c.B.Has; c.HasDiff {
				c.Diff = c.A.Stat.Mean - c.B.Stat.Mean
			}
			r.Cells = append(r.Cells, c)
		}
		return r
	}
	p.Overall = row("overall", pa.Overall, pb.Overall)
	byScope := func(rows []pivotRow) map[string]pivotRow {
		m := map[string]pivotRow{}
		for _, r := range rows {
			m[r.Scope] = r
		}
		return m
	}
	ca, cb := byScope(pa.Categories), byScope(pb.Categories)
	var scopes []string
	for _, r := range append(append([]pivotRow{}, pa.Categories...), pb.Categories...) {
		if !seen["\x00"+r.Scope] {
			seen["\x00"+r.Scope] = true
			scopes = append(scopes, r.Scope)
		}
	}
	for _, sc := range scopes {
		ra, ok := ca[sc]
		if !ok {
			ra = missing(sc)
		}
		rb, ok := cb[sc]
		if !ok {
			rb = missing(sc)
		}
		p.Categories = append(p.Categories, row(sc, ra, rb))
	}
	return p
}
