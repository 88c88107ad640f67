package site

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"sort"
	"strconv"
	"strings"
)

// The plots are SVG drawn here, with presentation attributes only (no
// inline styles, no scripts), so they pass a strict Content-Security-Policy
// and read the same inline in a page and opened as plots/*.svg.

var palette = []string{"#1f5fa8", "#c0392b", "#1e8449", "#8e44ad", "#b9770e", "#117a8b", "#6e2c00", "#2e4053"}

const (
	plotW      = 720
	labelW     = 230
	valueW     = 170
	rowH       = 30
	plotTop    = 44
	plotBottom = 44
)

func esc(s string) string { return html.EscapeString(s) }

// svgDoc wraps a plot's body with its title (also the accessible name).
func svgDoc(id, title string, w, h int, body string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="plot" id="%s" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-labelledby="%s-title" font-family="system-ui, sans-serif" font-size="13">`, esc(id), w, h, w, h, esc(id))
	fmt.Fprintf(&b, `<title id="%s-title">%s</title>`, esc(id), esc(title))
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`, w, h)
	fmt.Fprintf(&b, `<text x="12" y="22" font-size="15" font-weight="bold" fill="#111111">%s</text>`, esc(fit(title, float64(w-24), 16.5)))
	b.WriteString(body)
	b.WriteString("</svg>\n")
	return b.String()
}

// scale maps [lo, hi] onto [a, b].
type scale struct{ lo, hi, a, b float64 }

func (s scale) at(x float64) float64 {
	if s.hi == s.lo {
		return (s.a + s.b) / 2
	}
	return s.a + (x-s.lo)/(s.hi-s.lo)*(s.b-s.a)
}

// domain is [0, 1] widened to hold every value.
func domain(vals []float64) (float64, float64) {
	lo, hi := 0.0, 1.0
	for _, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	return lo, hi
}

// niceMax rounds hi up to a multiple of a step of 1, 2 or 5 times a power of
// ten, about four steps in all; 0 gives [0, 1].
func niceMax(hi float64) (top, step float64) {
	if hi <= 0 || math.IsNaN(hi) || math.IsInf(hi, 0) {
		return 1, 0.25
	}
	raw := hi / 4
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if step = m * p; step >= raw {
			break
		}
	}
	step, _ = strconv.ParseFloat(strconv.FormatFloat(step, 'g', 6, 64), 64) // 0.30000000000000004 → 0.3
	return math.Ceil(hi/step-1e-9) * step, step
}

func ticks(lo, hi float64, n int) []float64 {
	out := make([]float64, 0, n+1)
	for i := 0; i <= n; i++ {
		out = append(out, lo+(hi-lo)*float64(i)/float64(n))
	}
	return out
}

func tickText(x float64) string {
	s := fmt.Sprintf("%.2f", x)
	if strings.HasSuffix(s, ".00") {
		return s[:len(s)-3]
	}
	return s
}

// textWidth is a generous estimate of a text's width in px at a font size
// (the plots cannot measure text): capitals and wide letters count 0.8 em,
// others 0.6 em, so that no label drawn within its budget leaves the plot
// or runs into another (the browser test measures them).
func textWidth(s string, size float64) float64 {
	var w float64
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z', r == 'm', r == 'w', r == '@', r == '%', r > 0x2e7f:
			w += 0.8
		default:
			w += 0.6
		}
	}
	return w * size
}

// fit cuts s with "…" so that it is at most px wide at size.
func fit(s string, px, size float64) string {
	if textWidth(s, size) <= px {
		return s
	}
	r := []rune(s)
	for len(r) > 0 && textWidth(string(r)+"…", size) > px {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}

// spread places labels wanted at ys (any order) at least gap apart within
// [lo, hi], each as near its wish as it can be, keeping their order; it
// returns the placed ys in the input's order.
func spread(ys []float64, gap, lo, hi float64) []float64 {
	idx := make([]int, len(ys))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return ys[idx[a]] < ys[idx[b]] })
	out := make([]float64, len(ys))
	prev := lo - gap
	for _, i := range idx {
		out[i] = math.Max(ys[i], prev+gap)
		prev = out[i]
	}
	next := hi + gap
	for k := len(idx) - 1; k >= 0; k-- {
		i := idx[k]
		out[i] = math.Min(out[i], next-gap)
		next = out[i]
	}
	return out
}

func (st *site) modelLabel(model string) string {
	l := st.display(model)
	if st.isBaseline(model) {
		l += " (baseline)"
	}
	return l
}

// scoresPlot draws a benchmark's headline means with their CI whiskers, one
// row per model; baselines are hollow and dashed.
func (st *site) scoresPlot(b *benchView) string {
	h := plotTop + rowH*max(len(b.Rows), 1) + plotBottom
	var vals []float64
	for _, r := range b.Rows {
		vals = append(vals, r.Cell.Mean, r.Cell.CILow, r.Cell.CIHigh)
	}
	lo, hi := domain(vals)
	x := scale{lo, hi, labelW, plotW - valueW}
	var body strings.Builder
	axisY := plotTop + rowH*max(len(b.Rows), 1)
	for _, t := range ticks(lo, hi, 5) {
		fmt.Fprintf(&body, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#dddddd"/>`, x.at(t), plotTop-6, x.at(t), axisY)
		fmt.Fprintf(&body, `<text x="%.1f" y="%d" text-anchor="middle" fill="#333333">%s</text>`, x.at(t), axisY+16, tickText(t))
	}
	fmt.Fprintf(&body, `<text x="%.1f" y="%d" text-anchor="middle" fill="#333333">%s (mean, 95%% CI)</text>`, x.at((lo+hi)/2), axisY+34, esc(b.Bench.Headline))
	if len(b.Rows) == 0 {
		fmt.Fprintf(&body, `<text x="%d" y="%d" fill="#333333">no cells</text>`, labelW, plotTop+20)
	}
	for i, r := range b.Rows {
		y := float64(plotTop + rowH*i + rowH/2)
		c := r.Cell
		color, dash, fill := palette[0], "", palette[0]
		if r.Baseline {
			color, dash, fill = "#555555", ` stroke-dasharray="4 3"`, "#ffffff"
		}
		fmt.Fprintf(&body, `<g class="point" data-model="%s" data-mean="%s" data-ci-low="%s" data-ci-high="%s">`, esc(r.Model), num3(c.Mean), num3(c.CILow), num3(c.CIHigh))
		fmt.Fprintf(&body, `<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle" fill="#111111">%s</text>`, labelW-10, y, esc(fit(st.modelLabel(r.Model), labelW-14, 13)))
		fmt.Fprintf(&body, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"%s/>`, x.at(c.CILow), y, x.at(c.CIHigh), y, color, dash)
		for _, e := range []float64{c.CILow, c.CIHigh} {
			fmt.Fprintf(&body, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"/>`, x.at(e), y-6, x.at(e), y+6, color)
		}
		fmt.Fprintf(&body, `<circle cx="%.1f" cy="%.1f" r="5" fill="%s" stroke="%s" stroke-width="2"/>`, x.at(c.Mean), y, fill, color)
		fmt.Fprintf(&body, `<text x="%d" y="%.1f" dominant-baseline="middle" fill="#111111">%s %s</text>`, plotW-valueW+10, y, num3(c.Mean), ciText(c.CILow, c.CIHigh))
		body.WriteString("</g>")
	}
	return svgDoc("scores-"+b.Slug, b.Bench.Dataset+": "+b.Bench.Headline+" by model", plotW, h+12, body.String())
}

// costPlot draws each model's headline mean against its run's cost. The
// labels stand in a column right of the plot, each at its point's height
// where the others leave room, joined to its point by a thin line.
func (st *site) costPlot(b *benchView) string {
	const w, left, right, top, bottom, gap = 720, 70, 250, 52, 56, 17
	h := max(380, top+bottom+gap*len(b.Rows)+10)
	var ys []float64
	maxCost := 0.0
	for _, r := range b.Rows {
		ys = append(ys, r.Cell.Mean)
		maxCost = math.Max(maxCost, r.Run.Summary.CostUSD)
	}
	ylo, yhi := domain(ys)
	xhi, step := niceMax(maxCost * 1.05)
	x := scale{0, xhi, left, w - right}
	y := scale{ylo, yhi, float64(h - bottom), top}
	var body strings.Builder
	for k := 0; float64(k)*step <= xhi*(1+1e-9); k++ {
		t := math.Round(float64(k)*step*1e9) / 1e9 // 3 × 0.1 is 0.30000000000000004
		// The first label starts at the axis (clear of the y axis's
		// labels), the last ends at the plot's edge (clear of the labels'
		// column).
		anchor := "middle"
		switch {
		case k == 0:
			anchor = "start"
		case float64(k+1)*step > xhi*(1+1e-9):
			anchor = "end"
		}
		fmt.Fprintf(&body, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#dddddd"/>`, x.at(t), top, x.at(t), h-bottom)
		fmt.Fprintf(&body, `<text x="%.1f" y="%d" text-anchor="%s" fill="#333333">$%s</text>`, x.at(t), h-bottom+18, anchor, strconv.FormatFloat(t, 'f', -1, 64))
	}
	for _, t := range ticks(ylo, yhi, 4) {
		fmt.Fprintf(&body, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#dddddd"/>`, left, y.at(t), w-right, y.at(t))
		fmt.Fprintf(&body, `<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle" fill="#333333">%s</text>`, left-6, y.at(t), tickText(t))
	}
	fmt.Fprintf(&body, `<text x="%.1f" y="%d" text-anchor="middle" fill="#333333">cost of the run (USD)</text>`, x.at(xhi/2), h-14)
	fmt.Fprintf(&body, `<text x="14" y="%.1f" text-anchor="middle" fill="#333333" transform="rotate(-90 14 %.1f)">%s</text>`, y.at((ylo+yhi)/2), y.at((ylo+yhi)/2), esc(fit(b.Bench.Headline, float64(h-top-bottom), 13)))
	if maxCost == 0 && len(b.Rows) > 0 {
		// Above the plot, under the title: clear of every point and label.
		fmt.Fprintf(&body, `<text x="%d" y="%d" font-size="11" fill="#555555">every run cost $0 (baselines, cached or unpriced answers)</text>`, left, top-12)
	}
	want := make([]float64, len(b.Rows))
	for i, r := range b.Rows {
		want[i] = y.at(r.Cell.Mean)
	}
	at := spread(want, gap, top+6, float64(h-bottom-10))
	lx := float64(w - right + 16)
	for i, r := range b.Rows {
		cx, cy := x.at(r.Run.Summary.CostUSD), y.at(r.Cell.Mean)
		color, fill := palette[i%len(palette)], palette[i%len(palette)]
		if r.Baseline {
			color, fill = "#555555", "#ffffff"
		}
		batch := r.Run.Summary.Batch
		nums := ": " + num3(r.Cell.Mean) + ", " + costText(r.Run.Summary.CostUSD, batch) // always shown whole; the name is cut
		label := fit(st.modelLabel(r.Model), right-24-textWidth(nums, 13), 13) + nums
		fmt.Fprintf(&body, `<g class="point" data-model="%s" data-mean="%s" data-cost="%s">`, esc(r.Model), num3(r.Cell.Mean), usd(r.Run.Summary.CostUSD))
		if batch { // the point's tooltip
			fmt.Fprintf(&body, `<title>%s: %s, %s</title>`, esc(st.modelLabel(r.Model)), esc(costText(r.Run.Summary.CostUSD, batch)), esc(batchNote))
		}
		fmt.Fprintf(&body, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1" stroke-opacity="0.5"/>`, cx+6, cy, lx-4, at[i], color)
		fmt.Fprintf(&body, `<circle cx="%.1f" cy="%.1f" r="6" fill="%s" stroke="%s" stroke-width="2"/>`, cx, cy, fill, color)
		fmt.Fprintf(&body, `<text x="%.1f" y="%.1f" dominant-baseline="middle" fill="#111111">%s</text>`, lx, at[i], esc(label))
		body.WriteString("</g>")
	}
	return svgDoc("cost-"+b.Slug, b.Bench.Dataset+": "+b.Bench.Headline+" against cost", w, h, body.String())
}

// historyPlot draws each model's headline mean on this benchmark across the
// board's stamps, oldest left.
func (st *site) historyPlot(b *benchView) string {
	const w, left, right, top, bottom = 720, 70, 200, 44, 70
	stamps := st.history
	type pt struct {
		i    int
		mean float64
	}
	series := map[string][]pt{}
	var order []string
	var ys []float64
	for i, s := range stamps {
		for _, c := range s.Cells {
			if c.Dataset != b.Bench.Dataset {
				continue
			}
			if _, ok := series[c.Model]; !ok {
				order = append(order, c.Model)
			}
			series[c.Model] = append(series[c.Model], pt{i, c.Mean})
			ys = append(ys, c.Mean)
		}
	}
	h := max(320, top+bottom+18*len(order)+40) + 14*len(st.skipped)
	ylo, yhi := domain(ys)
	x := scale{0, float64(max(len(stamps)-1, 1)), left + 90, w - right}
	if len(stamps) == 1 {
		x = scale{0, 0, left + 90, w - right}
	}
	y := scale{ylo, yhi, float64(h - bottom - 14*len(st.skipped)), top}
	var body strings.Builder
	for _, t := range ticks(ylo, yhi, 4) {
		fmt.Fprintf(&body, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#dddddd"/>`, left, y.at(t), w-right, y.at(t))
		fmt.Fprintf(&body, `<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle" fill="#333333">%s</text>`, left-6, y.at(t), tickText(t))
	}
	// Each stamp's date and time, on two lines; when the stamps stand
	// closer than a label is wide, every k-th one, ending with the last.
	axisY := h - bottom - 14*len(st.skipped)
	every := 1
	if len(stamps) > 1 {
		every = int(math.Ceil(86 / ((x.b - x.a) / float64(len(stamps)-1))))
	}
	for i, s := range stamps {
		if (len(stamps)-1-i)%every != 0 {
			continue
		}
		t := stampText(s.Stamp)
		date, clock, _ := strings.Cut(t, " ")
		fmt.Fprintf(&body, `<text class="stamp" x="%.1f" y="%d" text-anchor="middle" fill="#333333"><tspan x="%.1f">%s</tspan><tspan x="%.1f" dy="15">%s</tspan></text>`,
			x.at(float64(i)), axisY+18, x.at(float64(i)), esc(date), x.at(float64(i)), esc(clock))
	}
	fmt.Fprintf(&body, `<text x="14" y="%.1f" text-anchor="middle" fill="#333333" transform="rotate(-90 14 %.1f)">%s</text>`, y.at((ylo+yhi)/2), y.at((ylo+yhi)/2), esc(b.Bench.Headline))
	for k, m := range order {
		pts := series[m]
		color, dash, fill := palette[k%len(palette)], "", palette[k%len(palette)]
		if st.isBaseline(m) {
			color, dash, fill = "#555555", ` stroke-dasharray="4 3"`, "#ffffff"
		}
		fmt.Fprintf(&body, `<g class="series" data-model="%s">`, esc(m))
		if len(pts) > 1 {
			var p []string
			for _, q := range pts {
				p = append(p, fmt.Sprintf("%.1f,%.1f", x.at(float64(q.i)), y.at(q.mean)))
			}
			fmt.Fprintf(&body, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`, strings.Join(p, " "), color, dash)
		}
		for _, q := range pts {
			fmt.Fprintf(&body, `<circle cx="%.1f" cy="%.1f" r="4" fill="%s" stroke="%s" stroke-width="2"><title>%s %s: %s</title></circle>`,
				x.at(float64(q.i)), y.at(q.mean), fill, color, esc(st.modelLabel(m)), esc(stampText(stamps[q.i].Stamp)), num3(q.mean))
		}
		last := pts[len(pts)-1]
		fmt.Fprintf(&body, `<text x="%d" y="%d" fill="%s">%s %s</text>`, w-right+10, top+6+18*k, color, esc(fit(st.modelLabel(m), right-20-textWidth(" 0.000", 13), 13)), num3(last.mean))
		body.WriteString("</g>")
	}
	for i, sk := range st.skipped {
		fmt.Fprintf(&body, `<text x="%d" y="%d" fill="#a93226" font-size="11">%s</text>`, 12, h-8-14*(len(st.skipped)-1-i), esc(fit("skipped "+sk, w-24, 11)))
	}
	return svgDoc("history-"+b.Slug, b.Bench.Dataset+": "+b.Bench.Headline+" across stamps", w, h, body.String())
}

func stampText(stamp string) string {
	if len(stamp) != 16 {
		return stamp
	}
	return stamp[:4] + "-" + stamp[4:6] + "-" + stamp[6:8] + " " + stamp[9:11] + ":" + stamp[11:13]
}

// writePlots draws every benchmark's plots into the pages and plots/.
func (st *site) writePlots(out *output) error {
	for _, b := range st.benches {
		for _, p := range []struct {
			name string
			svg  string
			dst  *template.HTML
		}{
			{"scores-" + b.Slug + ".svg", st.scoresPlot(b), &b.Scores},
			{"cost-" + b.Slug + ".svg", st.costPlot(b), &b.Cost},
			{"history-" + b.Slug + ".svg", st.historyPlot(b), &b.History},
		} {
			// Every text in the SVG went through esc: it is safe inline.
			*p.dst = template.HTML(p.svg)
			if err := out.put("plots/"+p.name, []byte(p.svg)); err != nil {
				return err
			}
		}
	}
	return nil
}
