package site

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"unicode/utf8"

	"github.com/benchline/benchline/datasets/taskfile"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
)

// MaxText caps a response or details text in the sample pages; the full text
// is in the run's result Parquet.
const MaxText = 20000

// runView is a run page.
type runView struct {
	Run       leaderboard.Run
	Page      string
	Display   string
	Baseline  bool
	BenchPage string
	HasPlan   bool
	Plan      runs.Plan
	Params    string
	Headline  string
	Samples   pager
	Pivot     pivot
	// Served is true for a run above MaxStaticSamples: its samples are
	// listed by the served explorer only.
	Served     bool
	ResultKeys []string
	// MissingRows are dataset files the plan names that are not in the
	// store: their samples show no dataset row.
	MissingRows []string
	// TaskFile is the task file of a task-file run's dataset version (cut
	// at taskfile.MaxCardTaskBytes, TaskFileCut says where), TaskFileKey
	// where it is stored; both empty for a built-in benchmark's run.
	TaskFile, TaskFileCut, TaskFileKey string
}

// pager is a paged list whose pages are data/<Key>/pNNNN.js.
type pager struct {
	// API is the served explorer's query for the list (relative to the
	// board), set when the list is served only.
	API   string
	Key   string
	Kind  string // "samples" or "compare"
	Pages int
	Total int
}

// Base is the path prefix of the pager's page files.
func (p pager) Base() string { return "data/" + p.Key + "/p" }

func pageFile(key string, n int) string { return fmt.Sprintf("data/%s/p%04d.js", key, n) }

// sampleJS is one sample as the run page's script sees it.
type sampleJS struct {
	ID      string             `json:"id"`
	Index   int64              `json:"i"`
	Cat     string             `json:"cat"`
	Score   *float64           `json:"score"` // the headline metric; null when not scored
	Metrics map[string]float64 `json:"metrics"`
	Err     string             `json:"err,omitempty"`
	Msg     string             `json:"msg,omitempty"`
	Prompt  string             `json:"prompt,omitempty"` // the dataset row the prompt is built from
	Resp    string             `json:"resp"`
	Details string             `json:"details,omitempty"`
	Tokens  int64              `json:"tokens"`
	Latency float64            `json:"ms"`
}

// brief is what a compare page needs of one sample.
type brief struct {
	index int64
	cat   string
	score *float64
	err   string
}

// runBriefs holds every run's samples by id, for the compare pages.
type runBriefs map[string]map[string]brief

// pageWriter buffers rows and writes a data page every PageSize rows.
type pageWriter[T any] struct {
	out   *output
	key   string
	buf   []T
	pages int
	total int
}

func (w *pageWriter[T]) add(r T) error {
	w.buf = append(w.buf, r)
	w.total++
	if len(w.buf) == PageSize {
		return w.flush()
	}
	return nil
}

func (w *pageWriter[T]) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	w.pages++
	b, err := json.Marshal(w.buf) // escapes <, > and & so no text closes the script
	if err != nil {
		return fmt.Errorf("site: encode %s page %d: %w", w.key, w.pages, err)
	}
	var js bytes.Buffer
	fmt.Fprintf(&js, "benchline.page(%q,%d,", w.key, w.pages)
	js.Write(b)
	js.WriteString(");\n")
	w.buf = w.buf[:0]
	return w.out.put(pageFile(w.key, w.pages), js.Bytes())
}

func clip(s string) string {
	if len(s) <= MaxText {
		return s
	}
	cut := MaxText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n… (cut: %d bytes in all; the whole text is in the run's result Parquet)", len(s))
}

func prettyDetails(s string) string {
	if s == "" {
		return ""
	}
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return clip(s)
	}
	return clip(jsonText(v))
}

// writeRuns writes every run's page data and collects what the run pages
// and compare pages show.
func (st *site) writeRuns(ctx context.Context, store blob.Store, out *output) error {
	briefs := runBriefs{}
	bench := map[string]*benchView{}
	for _, b := range st.benches {
		bench[b.Bench.Dataset] = b
	}
	for i := range st.s.Runs {
		r := st.s.Runs[i]
		v := &runView{Run: r, Page: "run-" + r.RunID + ".html", Display: st.display(r.Model), Baseline: st.isBaseline(r.Model)}
		if b := bench[r.Dataset]; b != nil {
			v.BenchPage = "bench-" + b.Slug + ".html"
			v.Headline = b.Bench.Headline
		}
		if v.Headline == "" && len(r.Summary.Metrics) > 0 {
			v.Headline = r.Summary.Metrics[0].Name
		}
		v.Pivot = buildPivot(r.Summary, v.Headline)
		plan, found, err := readPlan(ctx, store, r.RunID)
		if err != nil {
			return err
		}
		v.HasPlan, v.Plan = found, plan
		if found {
			v.Params = jsonText(plan.Params)
		}
		raw, isTask, err := taskfile.ReadTask(ctx, store, r.Dataset, r.Version)
		if err != nil {
			return fmt.Errorf("site: run %s: %w", r.RunID, err)
		}
		if isTask {
			v.TaskFileKey = taskfile.TaskFileKey(r.Dataset, r.Version)
			v.TaskFile, v.TaskFileCut = taskfile.CutTask(raw, taskfile.MaxCardTaskBytes)
		}
		keys, err := resultKeys(ctx, store, r.RunID)
		if err != nil {
			return err
		}
		v.ResultKeys = keys
		if r.Summary.Samples > int64(maxStatic) {
			// Too many samples for pages on disk: the served explorer
			// lists them from the result Parquet and this index.
			v.Served = true
			v.Samples = pager{Key: "run-" + r.RunID, Kind: "samples", Total: int(r.Summary.Samples), API: "api/samples?run=" + r.RunID}
			if err := buildExplore(ctx, store, r.RunID, v.Headline, plan, found, keys); err != nil {
				return err
			}
			if err := writeMetrics(out, r.RunID, r.Summary.Rows()); err != nil {
				return err
			}
			st.runPages = append(st.runPages, v)
			continue
		}
		seen, err := st.writeRunSamples(ctx, store, out, v, plan, found)
		if err != nil {
			return err
		}
		if err := writeMetrics(out, r.RunID, r.Summary.Rows()); err != nil {
			return err
		}
		briefs[r.RunID] = seen
		st.runPages = append(st.runPages, v)
	}
	st.briefs = briefs
	return nil
}

// writeRunSamples writes a run's data pages and samples download and
// returns its samples' briefs for the compare pages.
func (st *site) writeRunSamples(ctx context.Context, store blob.Store, out *output, v *runView, plan runs.Plan, found bool) (map[string]brief, error) {
	r := v.Run
	pw := &pageWriter[sampleJS]{out: out, key: "run-" + r.RunID}
	pr := &prompts{ctx: ctx, store: store}
	if found {
		pr.plan = plan
	}
	defer pr.close()
	seen := map[string]brief{}
	var table []SampleRow
	for _, key := range v.ResultKeys {
		err := pq.ReadEach(ctx, store, key, func(rows []schemas.ResultRow) error {
			for _, row := range rows {
				score := headlineScore(row, v.Headline)
				prompt, err := pr.row(row.Shard, row.SampleIndex)
				if err != nil {
					return err
				}
				seen[row.SampleID] = brief{index: row.SampleIndex, cat: row.Category, score: score, err: row.ErrorClass}
				table = append(table, SampleRow{SampleID: row.SampleID, SampleIndex: row.SampleIndex, Category: row.Category, Score: score,
					ErrorClass: row.ErrorClass, PromptTokens: row.PromptTokens, CompletionTokens: row.CompletionTokens, CostUSD: row.CostUSD, LatencyMS: row.LatencyMS})
				if err := pw.add(sampleItem(row, score, prompt)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("site: run %s: results %s: %w", r.RunID, key, err)
		}
	}
	if err := pw.flush(); err != nil {
		return nil, err
	}
	v.Samples = pager{Key: pw.key, Kind: "samples", Pages: pw.pages, Total: pw.total}
	v.MissingRows = pr.missing
	if err := writeSamples(out, r.RunID, table); err != nil {
		return nil, err
	}
	return seen, nil
}

// sampleItem is a result row as the sample lists show it.
func sampleItem(row schemas.ResultRow, score *float64, prompt string) sampleJS {
	return sampleJS{
		ID: row.SampleID, Index: row.SampleIndex, Cat: row.Category, Score: score, Metrics: finite(row.Metrics),
		Err: row.ErrorClass, Msg: clip(row.ErrorMessage), Prompt: prompt, Resp: clip(row.Response), Details: prettyDetails(row.DetailsJSON),
		Tokens: row.PromptTokens + row.CompletionTokens, Latency: row.LatencyMS,
	}
}

// finite drops NaN and infinite metrics, which JSON cannot carry.
func finite(m map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(m))
	for k, v := range m {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out[k] = v
		}
	}
	return out
}

// compareView is a compare page.
type compareView struct {
	Page         string
	Dataset      string
	Version      string
	Metric       string
	BenchPage    string
	A, B         leaderboard.Run
	DisplayA     string
	DisplayB     string
	BaselineA    bool
	BaselineB    bool
	HasStats     bool
	Stats        leaderboard.Comparison
	Both         int     // samples both runs scored
	MeanA, MeanB float64 // over those samples
	ABetter      int
	BBetter      int
	Ties         int
	OnlyA, OnlyB int
	Samples      pager
	// Served is true when a run is above MaxStaticSamples: the per-sample
	// diff is listed by the served explorer only.
	Served bool
	// Pivot is both runs' metrics by scope.
	Pivot comparePivot
}

// pairJS is one sample of a compare page.
type pairJS struct {
	ID    string   `json:"id"`
	Index int64    `json:"i"`
	Cat   string   `json:"cat"`
	A     *float64 `json:"a"`
	B     *float64 `json:"b"`
	D     *float64 `json:"d"` // a - b when both are scored
	ErrA  string   `json:"ea,omitempty"`
	ErrB  string   `json:"eb,omitempty"`
}

// writeCompares writes a compare page's data for every two runs of a
// benchmark's cells on the same dataset version, in the direction of the
// board's comparison when it has one.
func (st *site) writeCompares(out *output) error {
	for _, b := range st.benches {
		var ids []string
		for _, r := range b.Rows {
			if r.HasRun {
				ids = append(ids, r.Run.RunID)
			}
		}
		for i := 0; i < len(ids); i++ {
			for j := i + 1; j < len(ids); j++ {
				a, bb := st.runs[ids[i]], st.runs[ids[j]]
				if a.Dataset != bb.Dataset || a.Version != bb.Version {
					continue
				}
				stats, has := st.comparison(a.RunID, bb.RunID)
				if has && stats.RunA == bb.RunID {
					a, bb = bb, a
				}
				v, err := st.compare(out, b, *a, *bb)
				if err != nil {
					return err
				}
				v.HasStats, v.Stats = has, stats
				st.compares = append(st.compares, v)
			}
		}
		for k := range b.Comparisons { // comparisons of runs the board does not carry have no page
			c := &b.Comparisons[k]
			if c.Page != "" && !st.hasCompare(c.Page) {
				c.Page = ""
			}
		}
	}
	return nil
}

func (st *site) hasCompare(page string) bool {
	for _, c := range st.compares {
		if c.Page == page {
			return true
		}
	}
	return false
}

func (st *site) comparison(a, b string) (leaderboard.Comparison, bool) {
	for _, c := range st.s.Comparisons {
		if (c.RunA == a && c.RunB == b) || (c.RunA == b && c.RunB == a) {
			return c, true
		}
	}
	return leaderboard.Comparison{}, false
}

func (st *site) compare(out *output, b *benchView, a, bb leaderboard.Run) (*compareView, error) {
	v := &compareView{Page: comparePage(a.RunID, bb.RunID), Dataset: a.Dataset, Version: a.Version, Metric: b.Bench.Headline,
		BenchPage: "bench-" + b.Slug + ".html", A: a, B: bb, DisplayA: st.display(a.Model), DisplayB: st.display(bb.Model),
		BaselineA: st.isBaseline(a.Model), BaselineB: st.isBaseline(bb.Model), Pivot: buildComparePivot(a.Summary, bb.Summary, b.Bench.Headline)}
	sa, okA := st.briefs[a.RunID]
	sb, okB := st.briefs[bb.RunID]
	if !okA || !okB {
		// A run above MaxStaticSamples: the counts come from the board's
		// comparison, the per-sample diff from the served explorer.
		v.Served = true
		v.Samples = pager{Key: "compare-" + a.RunID + "-" + bb.RunID, Kind: "compare", Total: int(max(a.Summary.Samples, bb.Summary.Samples)),
			API: "api/compare?a=" + a.RunID + "&b=" + bb.RunID}
		if c, has := st.comparison(a.RunID, bb.RunID); has {
			v.Both, v.MeanA, v.MeanB, v.ABetter, v.BBetter, v.Ties = int(c.N), c.MeanA, c.MeanB, int(c.ABetter), int(c.BBetter), int(c.Ties)
			if c.RunA != a.RunID { // stored the other way round
				v.MeanA, v.MeanB, v.ABetter, v.BBetter = c.MeanB, c.MeanA, int(c.BBetter), int(c.ABetter)
			}
		}
		return v, nil
	}
	ids := make([]string, 0, len(sa)+len(sb))
	for id := range sa {
		ids = append(ids, id)
	}
	for id := range sb {
		if _, ok := sa[id]; !ok {
			ids = append(ids, id)
		}
	}
	idx := func(id string) int64 {
		if x, ok := sa[id]; ok {
			return x.index
		}
		return sb[id].index
	}
	sort.Slice(ids, func(i, j int) bool {
		if idx(ids[i]) != idx(ids[j]) {
			return idx(ids[i]) < idx(ids[j])
		}
		return ids[i] < ids[j]
	})
	pw := &pageWriter[pairJS]{out: out, key: "compare-" + a.RunID + "-" + bb.RunID}
	var table []PairRow
	var sumA, sumB float64
	for _, id := range ids {
		x, okA := sa[id]
		y, okB := sb[id]
		p := pairJS{ID: id, Index: idx(id), ErrA: x.err, ErrB: y.err, A: x.score, B: y.score}
		p.Cat = x.cat
		if !okA {
			p.Cat = y.cat
			v.OnlyB++
		}
		if !okB {
			v.OnlyA++
		}
		if x.score != nil && y.score != nil {
			d := *x.score - *y.score
			p.D = &d
			v.Both++
			sumA += *x.score
			sumB += *y.score
			switch {
			case d > 0:
				v.ABetter++
			case d < 0:
				v.BBetter++
			default:
				v.Ties++
			}
		}
		table = append(table, PairRow{SampleID: p.ID, SampleIndex: p.Index, Category: p.Cat, A: p.A, B: p.B, Diff: p.D, ErrorA: p.ErrA, ErrorB: p.ErrB})
		if err := pw.add(p); err != nil {
			return nil, err
		}
	}
	if err := pw.flush(); err != nil {
		return nil, err
	}
	if err := writePairs(out, pw.key, table); err != nil {
		return nil, err
	}
	if v.Both > 0 {
		v.MeanA, v.MeanB = sumA/float64(v.Both), sumB/float64(v.Both)
	}
	v.Samples = pager{Key: pw.key, Kind: "compare", Pages: pw.pages, Total: pw.total}
	return v, nil
}
