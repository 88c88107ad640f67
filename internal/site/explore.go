package site

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
)

// MaxStaticSamples is the largest run whose samples the static site writes
// into data pages (data/run-<id>/pNNNN.js, PageSize per file) and the
// samples downloads. A larger run's page, and the compare pages of its
// pairs, list no samples when opened from disk: they say so and link the
// served explorer, where `benchline leaderboard serve` answers the sample
// lists from the run's result Parquet and the run's explorer index.
const MaxStaticSamples = 20000

// ChunkSamples is the most samples one text chunk of a run's explorer
// index holds.
const ChunkSamples = 65536

// ChunkBytes caps a text chunk's uncompressed size: a chunk is closed
// before a sample's line would take it past ChunkBytes (a sample whose
// line alone is larger gets a chunk of its own, at most the reply limit
// and its prompt). The served search decompresses at most DecodeSlots
// chunks at once, so its memory is bounded by DecodeSlots × ChunkBytes
// whatever the replies' size, and the refresh holds one chunk's text.
const ChunkBytes = 8 << 20

// maxStatic, chunkSamples and chunkBytes are MaxStaticSamples,
// ChunkSamples and ChunkBytes (tests lower them).
var maxStatic, chunkSamples, chunkBytes = MaxStaticSamples, ChunkSamples, ChunkBytes

// exploreVersion is the layout version of an explorer index; an index of
// another version is rebuilt. Version 2 caps chunks by bytes
// (ChunkBytes) and lists each chunk's samples (ChunkRows).
const exploreVersion = 2

// The explorer index of a run, written once per run (the first refresh
// that shows it; later stamps reuse it) under runs/<id>/explore/:
//
//	rows.parquet     one exploreRow per sample, in result order
//	text-NNNN.zst    one line per sample (at most ChunkSamples lines and
//	                 about ChunkBytes): a sample's every text, lower-cased (zstd)
//	manifest.json    exploreManifest, written last
func exploreKey(runID, name string) string { return runs.Dir(runID) + "explore/" + name }

func chunkKey(runID string, n int) string { return exploreKey(runID, fmt.Sprintf("text-%04d.zst", n)) }

// exploreManifest says what an explorer index holds.
type exploreManifest struct {
	Version  int      `json:"version"`
	RunID    string   `json:"run_id"`
	Headline string   `json:"headline"`
	Files    []string `json:"files"` // the result files, in order; exploreRow.File indexes them
	Rows     []int    `json:"rows"`  // each file's rows
	Samples  int      `json:"samples"`
	Chunks   int      `json:"chunks"`
	// ChunkSamples is the most samples a text chunk holds; ChunkRows
	// how many each holds, in order.
	ChunkSamples int   `json:"chunk_samples"`
	ChunkRows    []int `json:"chunk_rows"`
	// TextBytes is the uncompressed size of the text chunks.
	TextBytes int64 `json:"text_bytes"`
	// Ordered says the samples, in result order, are in sample-index
	// order: sorting by index is then no sort, and needs no rows.
	Ordered bool `json:"ordered"`
}

// exploreRow is what the explorer keeps of a sample to page and sort.
type exploreRow struct {
	File   int32   `parquet:"file"`
	Row    int32   `parquet:"row"` // within its file
	Index  int64   `parquet:"sample_index"`
	Score  float64 `parquet:"score"` // the headline metric; NaN when not scored
	Err    string  `parquet:"error_class,dict"`
	Tokens int64   `parquet:"tokens"`
	MS     float64 `parquet:"latency_ms"`
}

// readManifest reads a run's explorer manifest; found is false when there
// is none, or one of another version or headline (to be rebuilt).
func readManifest(ctx context.Context, store blob.Store, runID, headline string) (exploreManifest, bool, error) {
	var m exploreManifest
	err := blob.GetJSON(ctx, store, exploreKey(runID, "manifest.json"), &m)
	if errors.Is(err, blob.ErrNotFound) {
		return m, false, nil
	}
	if err != nil {
		return m, false, fmt.Errorf("site: run %s: explorer index: %w", runID, err)
	}
	return m, m.Version == exploreVersion && m.RunID == runID && m.Headline == headline, nil
}

// buildExplore writes a run's explorer index unless an earlier refresh
// did. It reads the result files ReadConcurrency at a time, at most
// exploreWindow files ahead of the one it writes; each file's reader hands
// its samples' search lines to the writer through a queue of at most
// partBytes (or one line), and reads a file a bounded batch of rows at a
// time (pq), so its memory is bounded by those windows, not by the run or
// the replies' size.
func buildExplore(ctx context.Context, store blob.Store, runID, headline string, plan runs.Plan, hasPlan bool, keys []string) error {
	if _, ok, err := readManifest(ctx, store, runID, headline); err != nil || ok {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := exploreManifest{Version: exploreVersion, RunID: runID, Headline: headline, Files: keys, ChunkSamples: chunkSamples, Ordered: true}
	last := int64(math.MinInt64)
	rw := pq.NewWriter[exploreRow](ctx, store, exploreKey(runID, "rows.parquet"), pq.Options{})
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return err
	}
	defer enc.Close()
	var text bytes.Buffer
	inChunk := 0
	flush := func() error {
		if inChunk == 0 {
			return nil
		}
		m.TextBytes += int64(text.Len())
		if err := blob.PutBytes(ctx, store, chunkKey(runID, m.Chunks), enc.EncodeAll(text.Bytes(), nil)); err != nil {
			return fmt.Errorf("site: run %s: explorer index: %w", runID, err)
		}
		m.Chunks++
		m.ChunkRows = append(m.ChunkRows, inChunk)
		text.Reset()
		inChunk = 0
		return nil
	}
	add := func(line string) error {
		if inChunk > 0 && text.Len()+len(line)+1 > chunkBytes {
			if err := flush(); err != nil {
				return err
			}
		}
		text.WriteString(line)
		text.WriteByte('\n')
		m.Samples++
		if inChunk++; inChunk == chunkSamples {
			return flush()
		}
		return nil
	}
	parts := make([]*explorePart, len(keys))
	for i := range parts {
		parts[i] = newExplorePart()
	}
	// The readers: ReadConcurrency goroutines, each with a dataset reader
	// kept across files (it keeps its dataset file open while the shards
	// it reads come from it: opening decodes the file's footer). A file
	// is started only while fewer than exploreWindow files are started
	// and not yet written.
	window := make(chan struct{}, exploreWindow)
	next := make(chan int)
	var wg sync.WaitGroup
	for range leaderboard.ReadConcurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pr := &prompts{ctx: ctx, store: store}
			if hasPlan {
				pr.plan = plan
			}
			defer pr.close()
			for i := range next {
				err := readExplorePart(ctx, store, keys[i], int32(i), headline, pr, parts[i])
				if err != nil {
					err = fmt.Errorf("site: run %s: results %s: %w", runID, keys[i], err)
				}
				parts[i].finish(err)
			}
		}()
	}
	go func() {
		defer close(next)
		for i := range keys {
			select {
			case window <- struct{}{}:
			case <-ctx.Done():
			}
			if ctx.Err() == nil {
				select {
				case next <- i:
					continue
				case <-ctx.Done():
				}
			}
			for _, p := range parts[i:] { // never started
				p.finish(ctx.Err())
			}
			return
		}
	}()
	fail := func(err error) error {
		cancel()
		for _, p := range parts {
			p.abandon()
		}
		wg.Wait()
		rw.Abort()
		return err
	}
	for _, p := range parts {
		for {
			lines, done, err := p.take(ctx)
			if err != nil {
				return fail(err)
			}
			for _, line := range lines {
				if err := add(line); err != nil {
					return fail(err)
				}
			}
			if done {
				break
			}
		}
		m.Rows = append(m.Rows, len(p.rows))
		for _, r := range p.rows {
			m.Ordered = m.Ordered && r.Index >= last
			last = r.Index
		}
		if err := rw.Write(p.rows); err != nil {
			return fail(err)
		}
		p.rows = nil
		<-window
	}
	wg.Wait()
	if err := flush(); err != nil {
		rw.Abort()
		return err
	}
	if _, err := rw.Close(); err != nil {
		return err
	}
	return blob.PutJSON(ctx, store, exploreKey(runID, "manifest.json"), m)
}

// exploreWindow is how many result files the index build reads ahead of
// the one it writes; partBytes how many bytes of search lines each holds
// for the writer before its reader waits.
const (
	exploreWindow = 4 * leaderboard.ReadConcurrency
	partBytes     = 1 << 20
)

// explorePart is what the explorer index takes from one result file: its
// rows (kept until the file is written: about 50 bytes a sample) and its
// search lines, passed on through a queue of at most partBytes.
type explorePart struct {
	mu        sync.Mutex
	cond      sync.Cond
	rows      []exploreRow
	lines     []string
	size      int
	done      bool
	abandoned bool
	err       error
}

var errAbandoned = errors.New("site: explorer index build stopped")

func newExplorePart() *explorePart {
	p := &explorePart{}
	p.cond.L = &p.mu
	return p
}

// put queues a line, waiting while the queue holds partBytes.
func (p *explorePart) put(line string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.size > 0 && p.size+len(line) > partBytes && !p.abandoned {
		p.cond.Wait()
	}
	if p.abandoned {
		return errAbandoned
	}
	p.lines = append(p.lines, line)
	p.size += len(line)
	p.cond.Broadcast()
	return nil
}

// finish ends the part (err: its reader failed).
func (p *explorePart) finish(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done, p.err = true, err
	p.cond.Broadcast()
}

// abandon wakes a reader waiting in put: the build stopped.
func (p *explorePart) abandon() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.abandoned = true
	p.cond.Broadcast()
}

// take returns the queued lines, waiting for some; done says the part has
// no more.
func (p *explorePart) take(ctx context.Context) (lines []string, done bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.lines) == 0 && !p.done {
		p.cond.Wait()
	}
	if p.err != nil {
		return nil, true, p.err
	}
	lines, p.lines, p.size = p.lines, nil, 0
	p.cond.Broadcast()
	return lines, p.done, ctx.Err()
}

func readExplorePart(ctx context.Context, store blob.Store, key string, file int32, headline string, pr *prompts, p *explorePart) error {
	var row int32
	var rows []exploreRow
	err := pq.ReadEach(ctx, store, key, func(rs []schemas.ResultRow) error {
		for _, r := range rs {
			prompt, err := pr.row(r.Shard, r.SampleIndex)
			if err != nil {
				return err
			}
			score := math.NaN()
			if s := headlineScore(r, headline); s != nil {
				score = *s
			}
			rows = append(rows, exploreRow{File: file, Row: row, Index: r.SampleIndex, Score: score, Err: r.ErrorClass,
				Tokens: r.PromptTokens + r.CompletionTokens, MS: r.LatencyMS})
			if err := p.put(searchLine(r, prompt)); err != nil {
				return err
			}
			row++
		}
		return nil
	})
	p.mu.Lock()
	p.rows = rows
	p.mu.Unlock()
	return err
}

// headlineScore is a result row's headline value; nil when the row is not
// scored or has no finite value.
func headlineScore(r schemas.ResultRow, headline string) *float64 {
	if !schemas.Scored(r.ErrorClass) {
		return nil
	}
	if x, ok := r.Metrics[headline]; ok && !math.IsNaN(x) && !math.IsInf(x, 0) {
		return &x
	}
	return nil
}

// searchLine is every text of a sample, lower-cased, on one line: what the
// explorer's search looks in (the static pages' search looks in the same
// texts).
var lineBreaks = strings.NewReplacer("\n", " ", "\r", " ")

func searchLine(r schemas.ResultRow, prompt string) string {
	s := strings.Join([]string{r.SampleID, r.Category, prompt, r.Response, r.ErrorClass, r.ErrorMessage, r.DetailsJSON}, "\t")
	return lineBreaks.Replace(strings.ToLower(s))
}

// ExplorerIndex writes the explorer index of a run above
// MaxStaticSamples unless an earlier refresh did. A refresh calls it
// before its comparisons, which then pair the runs on the index's scores
// (IndexedSamples) instead of reading every result again; Write finds it
// done.
func ExplorerIndex(ctx context.Context, store blob.Store, r leaderboard.Run, headline string) error {
	if r.Summary.Samples <= int64(maxStatic) {
		return nil
	}
	plan, found, err := readPlan(ctx, store, r.RunID)
	if err != nil {
		return err
	}
	keys, err := resultKeys(ctx, store, r.RunID)
	if err != nil {
		return err
	}
	return buildExplore(ctx, store, r.RunID, headline, plan, found, keys)
}

// scoreRow is what IndexedSamples reads of an explorer index's rows
// (Parquet projection).
type scoreRow struct {
	Index int64   `parquet:"sample_index"`
	Score float64 `parquet:"score"`
	Err   string  `parquet:"error_class,dict"`
}

// IndexedSamples returns a run's samples of headline from its explorer
// index: each scored sample's index in the dataset version and its
// headline value, without ids (leaderboard.Samples pairs them by index).
// ok is false, and the caller reads the results with
// leaderboard.LoadSamples, when the run has no index for headline, when a
// scored sample has no finite headline value (LoadSamples says which and
// why), or when two samples share an index (results written without
// their positions).
func IndexedSamples(ctx context.Context, store blob.Store, runID, model, headline string) (s leaderboard.Samples, ok bool, err error) {
	m, found, err := readManifest(ctx, store, runID, headline)
	if err != nil || !found {
		return s, false, err
	}
	s = leaderboard.Samples{RunID: runID, Model: model, Indexes: make([]int64, 0, m.Samples), Values: make([]float64, 0, m.Samples)}
	odd := false
	err = pq.ReadEach(ctx, store, exploreKey(runID, "rows.parquet"), func(rows []scoreRow) error {
		for _, r := range rows {
			switch {
			case !schemas.Scored(r.Err):
			case math.IsNaN(r.Score):
				odd = true
			default:
				s.Indexes = append(s.Indexes, r.Index)
				s.Values = append(s.Values, r.Score)
			}
		}
		return nil
	})
	if err != nil {
		return s, false, fmt.Errorf("site: run %s: explorer index: %w", runID, err)
	}
	if odd || !leaderboard.UniqueIndexes(s.Indexes) {
		return leaderboard.Samples{}, false, nil
	}
	return s, true, nil
}
