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
