package site

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

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

// ChunkSamples is how many samples one text chunk of a run's explorer
// index holds.
const ChunkSamples = 65536

// maxStatic and chunkSamples are MaxStaticSamples and ChunkSamples (tests
// lower them).
var maxStatic, chunkSamples = MaxStaticSamples, ChunkSamples

// exploreVersion is the layout version of an explorer index; an index of
// another version is rebuilt.
const exploreVersion = 1

// The explorer index of a run, written once per run (the first refresh
// that shows it; later stamps reuse it) under runs/<id>/explore/:
//
//	rows.parquet     one exploreRow per sample, in result order
//	text-NNNN.zst    ChunkSamples lines each: a sample's every text, lower-cased (zstd)
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
	// ChunkSamples is the samples per text chunk (the last may hold fewer).
	ChunkSamples int `json:"chunk_samples"`
	// TextBytes is the uncompressed size of the text chunks.
	TextBytes int64 `json:"text_bytes"`
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
// did. It reads the result files ReadConcurrency at a time, in windows, so
// its memory is bounded by the window, not the run.
func buildExplore(ctx context.Context, store blob.Store, runID, headline string, plan runs.Plan, hasPlan bool, keys []string) error {
	if _, ok, err := readManifest(ctx, store, runID, headline); err != nil || ok {
		return err
	}
	m := exploreManifest{Version: exploreVersion, RunID: runID, Headline: headline, Files: keys, ChunkSamples: chunkSamples}
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
		text.Reset()
		inChunk = 0
		return nil
	}
	// One dataset reader per reading goroutine, kept across files: a
	// reader keeps its dataset file open while the shards it reads come
	// from it (opening decodes the file's footer).
	readers := make(chan *prompts, leaderboard.ReadConcurrency)
	for range leaderboard.ReadConcurrency {
		pr := &prompts{ctx: ctx, store: store}
		if hasPlan {
			pr.plan = plan
		}
		readers <- pr
	}
	defer func() {
		for range leaderboard.ReadConcurrency {
			(<-readers).close()
		}
	}()
	const window = 4 * leaderboard.ReadConcurrency
	for w := 0; w < len(keys); w += window {
		parts := make([]explorePart, min(window, len(keys)-w))
		err := leaderboard.EachParallel(len(parts), func(k int) error {
			var err error
			pr := <-readers
			parts[k], err = readExplorePart(ctx, store, keys[w+k], int32(w+k), headline, pr)
			readers <- pr
			if err != nil {
				return fmt.Errorf("site: run %s: results %s: %w", runID, keys[w+k], err)
			}
			return nil
		})
		if err != nil {
			rw.Abort()
			return err
		}
		for _, p := range parts {
			m.Rows = append(m.Rows, len(p.rows))
			if err := rw.Write(p.rows); err != nil {
				rw.Abort()
				return err
			}
			for _, line := range p.lines {
				text.WriteString(line)
				text.WriteByte('\n')
				m.Samples++
				if inChunk++; inChunk == chunkSamples {
					if err := flush(); err != nil {
						rw.Abort()
						return err
					}
				}
			}
		}
	}
	if err := flush(); err != nil {
		rw.Abort()
		return err
	}
	if _, err := rw.Close(); err != nil {
		return err
	}
	return blob.PutJSON(ctx, store, exploreKey(runID, "manifest.json"), m)
}

// explorePart is what the explorer index takes from one result file.
type explorePart struct {
	rows  []exploreRow
	lines []string
}

func readExplorePart(ctx context.Context, store blob.Store, key string, file int32, headline string, pr *prompts) (explorePart, error) {
	var p explorePart
	var row int32
	err := pq.ReadEach(ctx, store, key, func(rows []schemas.ResultRow) error {
		for _, r := range rows {
			prompt, err := pr.row(r.Shard, r.SampleIndex)
			if err != nil {
				return err
			}
			score := math.NaN()
			if s := headlineScore(r, headline); s != nil {
				score = *s
			}
			p.rows = append(p.rows, exploreRow{File: file, Row: row, Index: r.SampleIndex, Score: score, Err: r.ErrorClass,
				Tokens: r.PromptTokens + r.CompletionTokens, MS: r.LatencyMS})
			p.lines = append(p.lines, searchLine(r, prompt))
			row++
		}
		return nil
	})
	return p, err
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
