// Package site writes a board stamp's static leaderboard site and serves the
// latest stamp of every board.
//
// Write renders, under leaderboard.SiteKey(board, stamp)+"/", a flat tree
// that opens from disk (file://) as well as over HTTP: every link is
// relative, nothing is fetched from the network, and the data the pages
// page through is loaded by <script> tags (browsers refuse fetch() of local
// files):
//
//	index.html                    the overview: every benchmark's headline cells, plots
//	bench-<dataset>.html          one table per benchmark, its plots and comparisons
//	run-<run-id>.html             a run's plan, summary and paged, searchable samples
//	compare-<run-a>-<run-b>.html  two runs on the same dataset: paired statistics, per-sample diff
//	data/<page>/pNNNN.js          pages of samples (or sample pairs), PageSize per file,
//	                              for runs of at most MaxStaticSamples (larger runs'
//	                              lists are answered by Handler's explorer, explorer.go)
//	changes.json                  a copy of the stamp's changes.json
//	plots/*.svg                   scores with CI whiskers, score against cost, history across stamps
//	downloads/*.csv, *.parquet    every table
//	assets/site.css, site.js      the stylesheet and the script (sort, filter, search, paging)
//
// Handler serves the latest stamp of every board (see docs/site.md).
package site

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/runs"
)

// PageSize is the number of samples per data page (and per page shown).
const PageSize = 50

// HistoryStamps caps how many stamps a history plot draws (the newest).
const HistoryStamps = 30

// site is what Write builds before it renders.
type site struct {
	s        leaderboard.Scores
	models   map[string]leaderboard.Model
	runs     map[string]*leaderboard.Run
	benches  []*benchView
	history  []leaderboard.Scores // earlier stamps then this one, oldest first
	skipped  []string             // earlier stamps' scores.json that could not be read
	runPages []*runView
	compares []*compareView
	briefs   runBriefs
	// changes is the stamp's changes.json (hasChanges: found).
	changes    leaderboard.Changes
	hasChanges bool
}

// Write writes every file of the stamp's site under
// leaderboard.SiteKey(s.Board, s.Stamp)+"/". It reads the result Parquet of
// every run in s.Runs (runs/<id>/results/*.parquet) and the scores.json of
// the board's earlier stamps. Every key is a function of the stamp and its
// runs, so writing twice writes the same files; index.html is written last.
func Write(ctx context.Context, store blob.Store, s leaderboard.Scores) error {
	if err := checkScores(s); err != nil {
		return err
	}
	st := &site{s: s, models: map[string]leaderboard.Model{}, runs: map[string]*leaderboard.Run{}}
	for _, m := range s.Models {
		st.models[m.Model] = m
	}
	for i := range s.Runs {
		st.runs[s.Runs[i].RunID] = &s.Runs[i]
	}
	out := &output{ctx: ctx, store: store, prefix: leaderboard.SiteKey(s.Board, s.Stamp) + "/"}
	if err := st.readHistory(ctx, store); err != nil {
		return err
	}
	switch err := blob.GetJSON(ctx, store, leaderboard.ChangesKey(s.Board, s.Stamp), &st.changes); {
	case err == nil:
		st.hasChanges = true
	case !errors.Is(err, blob.ErrNotFound):
		return fmt.Errorf("site: %w", err)
	}
	st.buildBenches()
	if err := st.writeRuns(ctx, store, out); err != nil {
		return err
	}
	if err := st.writeCompares(out); err != nil {
		return err
	}
	if err := st.writePlots(out); err != nil {
		return err
	}
	if err := st.writeDownloads(out); err != nil {
		return err
	}
	if st.hasChanges {
		b, err := json.MarshalIndent(st.changes, "", "  ")
		if err != nil {
			return err
		}
		if err := out.put("changes.json", append(b, '\n')); err != nil {
			return err
		}
	}
	if err := out.put("assets/site.css", mustAsset("site.css")); err != nil {
		return err
	}
	if err := out.put("assets/site.js", mustAsset("site.js")); err != nil {
		return err
	}
	for _, b := range st.benches {
		if err := out.render("bench-"+b.Slug+".html", "bench.html", st.page(b.Bench.Dataset, b)); err != nil {
			return err
		}
	}
	for _, r := range st.runPages {
		if err := out.render(r.Page, "run.html", st.page("run "+r.Run.RunID, r)); err != nil {
			return err
		}
	}
	for _, c := range st.compares {
		if err := out.render(c.Page, "compare.html", st.page("compare", c)); err != nil {
			return err
		}
	}
	return out.render("index.html", "index.html", st.page("", st.overview()))
}

var (
	boardName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]*$`)
	stampForm = regexp.MustCompile(`^[0-9]{8}T[0-9]{6}Z$`)
	runIDForm = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
)

// ErrBadScores is returned (wrapped) when Scores cannot be drawn: a board,
// stamp or run id that cannot be part of a key, a cell naming a run it does
// not carry.
var ErrBadScores = errors.New("site: bad scores")

func checkScores(s leaderboard.Scores) error {
	if !boardName.MatchString(s.Board) {
		return fmt.Errorf("%w: board name %q: want word characters and dashes", ErrBadScores, s.Board)
	}
	if !stampForm.MatchString(s.Stamp) {
		return fmt.Errorf("%w: board %s: stamp %q: want %s", ErrBadScores, s.Board, s.Stamp, leaderboard.StampLayout)
	}
	for _, r := range s.Runs {
		if !runIDForm.MatchString(r.RunID) {
			return fmt.Errorf("%w: board %s: run id %q", ErrBadScores, s.Board, r.RunID)
		}
	}
	for _, c := range s.Cells {
		if c.RunID != "" && !runIDForm.MatchString(c.RunID) {
			return fmt.Errorf("%w: board %s: cell %s/%s: run id %q", ErrBadScores, s.Board, c.Dataset, c.Model, c.RunID)
		}
	}
	return nil
}

// slug makes a dataset name safe as part of a file name.
func slug(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}

// output writes files below a prefix.
type output struct {
	ctx    context.Context
	store  blob.Store
	prefix string
}

func (o *output) put(name string, b []byte) error {
	if err := blob.PutBytes(o.ctx, o.store, o.prefix+name, b); err != nil {
		return fmt.Errorf("site: write %s%s: %w", o.prefix, name, err)
	}
	return nil
}

func (o *output) render(name, tmpl string, data any) error {
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, tmpl, data); err != nil {
		return fmt.Errorf("site: render %s: %w", name, err)
	}
	return o.put(name, buf.Bytes())
}

// readHistory reads the board's earlier stamps' scores.json (the newest
// HistoryStamps-1 before this one). One that cannot be read is skipped and
// named on the history plots, so an old corrupt stamp does not stop every
// later refresh.
func (st *site) readHistory(ctx context.Context, store blob.Store) error {
	all, err := leaderboard.Stamps(ctx, store, st.s.Board)
	if err != nil {
		return fmt.Errorf("site: %w", err)
	}
	var stamps []string
	for _, stamp := range all {
		if stamp < st.s.Stamp {
			stamps = append(stamps, stamp)
		}
	}
	sort.Strings(stamps)
	if len(stamps) > HistoryStamps-1 {
		stamps = stamps[len(stamps)-(HistoryStamps-1):]
	}
	for _, stamp := range stamps {
		key := leaderboard.ScoresKey(st.s.Board, stamp)
		var old leaderboard.Scores
		if err := blob.GetJSON(ctx, store, key, &old); err != nil {
			st.skipped = append(st.skipped, fmt.Sprintf("%s: %v", key, err))
			continue
		}
		old.Stamp = stamp
		st.history = append(st.history, old)
	}
	st.history = append(st.history, st.s)
	return nil
}

// readPlan reads a run's plan.json; found is false when it does not exist.
func readPlan(ctx context.Context, store blob.Store, id string) (p runs.Plan, found bool, err error) {
	err = blob.GetJSON(ctx, store, runs.PlanKey(id), &p)
	if errors.Is(err, blob.ErrNotFound) {
		return p, false, nil
	}
	if err != nil {
		return p, false, fmt.Errorf("site: run %s: %w", id, err)
	}
	return p, true, nil
}

// resultKeys lists a run's result shards in order.
func resultKeys(ctx context.Context, store blob.Store, id string) ([]string, error) {
	prefix := runs.Dir(id) + "results/"
	infos, err := store.List(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("site: run %s: list %s: %w", id, prefix, err)
	}
	var keys []string
	for _, in := range infos {
		if path.Ext(in.Key) == ".parquet" {
			keys = append(keys, in.Key)
		}
	}
	return keys, nil
}

// isBaseline says whether a model is a deterministic baseline.
func (st *site) isBaseline(model string) bool {
	if m, ok := st.models[model]; ok && m.Baseline {
		return true
	}
	for _, r := range st.s.Runs {
		if r.Model == model && r.Summary.Baseline {
			return true
		}
	}
	return strings.HasPrefix(model, "baseline/")
}

func (st *site) display(model string) string {
	if m, ok := st.models[model]; ok && m.DisplayName != "" {
		return m.DisplayName
	}
	return model
}

// headlineOf returns a metric's stat in a summary.
func headlineOf(ms []aggregate.MetricStat, name string) (aggregate.MetricStat, bool) {
	for _, m := range ms {
		if m.Name == name {
			return m, true
		}
	}
	return aggregate.MetricStat{}, false
}

func jsonText(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
