package site

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"
	"golang.org/x/sync/singleflight"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
)

// The served explorer answers the sample lists of runs above
// MaxStaticSamples (and of any other run of the board's latest stamp)
// from the run's result Parquet and its explorer index (explore.go):
//
//	GET /<board>/api/samples?run=<id>&offset=&limit=&sort=&q=
//	GET /<board>/api/compare?a=<id>&b=<id>&offset=&limit=&sort=&q=
//
// See docs/site.md for the contract.

// Limits of the explorer.
const (
	// ExplorerRuns is how many runs' indexes the server keeps in memory
	// (least recently used dropped first); about 50 bytes a sample plus
	// the compressed texts.
	ExplorerRuns = 4
	// MaxPageItems caps limit.
	MaxPageItems = 200
	// MaxQuery caps a search string, in bytes.
	MaxQuery = 500
	// ExplorerRequests is how many explorer requests (api/samples,
	// api/compare) are answered at once; another waits up to ExplorerWait
	// for its turn, then is answered 503 with a Retry-After.
	ExplorerRequests = 4
	// DecodeSlots is how many text chunks all searches decompress at once
	// (each at most ChunkBytes, or one sample's texts).
	DecodeSlots = 4
	// ExplorerCacheBytes caps the compressed text chunks kept in memory
	// (all runs); chunks past it are fetched again by each search.
	ExplorerCacheBytes = 256 << 20
)

// ExplorerWait is how long an explorer request waits for one of the
// ExplorerRequests turns before it is answered 503.
const ExplorerWait = 5 * time.Second

// ListDoc is the answer of the explorer's list routes.
type ListDoc struct {
	// Total is the list's length; Matched how many match q (Total when q
	// is empty); Offset the first item's position among those.
	Total   int `json:"total"`
	Matched int `json:"matched"`
	Offset  int `json:"offset"`
	// Items are sample items (as the static data pages hold) or pair
	// items.
	Items any `json:"items"`
}

type explorer struct {
	store blob.Store
	mu    sync.Mutex
	runs  map[string]*runIndex
	pairs map[string]*pairIndex

	turns  chan struct{} // ExplorerRequests
	wait   time.Duration // ExplorerWait (tests shorten it)
	cached atomic.Int64  // bytes of compressed chunks kept (ExplorerCacheBytes)
}

func newExplorer(store blob.Store) *explorer {
	return &explorer{store: store, runs: map[string]*runIndex{}, pairs: map[string]*pairIndex{},
		turns: make(chan struct{}, ExplorerRequests), wait: ExplorerWait}
}

// errBusy is the answer of an explorer request that found no turn within
// ExplorerWait.
var errBusy = errors.New("site: the explorer is answering as many requests as it may at once")

// turn waits up to ExplorerWait for one of the ExplorerRequests turns;
// call the returned func when done.
func (e *explorer) turn(ctx context.Context) (func(), error) {
	t := time.NewTimer(e.wait)
	defer t.Stop()
	select {
	case e.turns <- struct{}{}:
		return func() { <-e.turns }, nil
	case <-t.C:
		return nil, fmt.Errorf("%w (%d, site.ExplorerRequests): try again shortly", errBusy, ExplorerRequests)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// keep reserves n bytes of the chunk cache; false when it is full.
func (e *explorer) keep(n int) bool {
	if e.cached.Add(int64(n)) > ExplorerCacheBytes {
		e.cached.Add(-int64(n))
		return false
	}
	return true
}

// decodeSlots bound the text chunks decompressed at once, all runs.
var decodeSlots = make(chan struct{}, DecodeSlots)

// runIndex is a run's explorer index in memory.
type runIndex struct {
	id      string
	m       exploreManifest
	plan    runs.Plan
	hasPlan bool
	starts  []int   // first ordinal of each file
	first   []int32 // first ordinal of each text chunk
	e       *explorer

	used time.Time // under explorer.mu

	prefetchOnce sync.Once
	rowsOnce     sync.Once
	rows         []exploreRow
	rowsErr      error

	mu       sync.Mutex
	chunks   [][]byte // compressed, kept while the cache has room
	kept     int64    // their bytes
	dropped  bool     // no longer among the explorer's runs: keeps no chunks
	fetches  singleflight.Group
	queries  singleflight.Group // one search per query at a time
	orders   map[string][]int32
	searches map[string][]int32 // the last few queries' matches, in ordinal order
}

// run returns a run's index, loading its manifest and plan the first time.
func (e *explorer) run(ctx context.Context, id string) (*runIndex, error) {
	e.mu.Lock()
	if ri, ok := e.runs[id]; ok {
		ri.used = time.Now()
		e.mu.Unlock()
		return ri, nil
	}
	e.mu.Unlock()
	var m exploreManifest
	if err := blob.GetJSON(ctx, e.store, exploreKey(id, "manifest.json"), &m); err != nil {
		return nil, fmt.Errorf("run %s: explorer index: %w", id, err)
	}
	if m.Version != exploreVersion || len(m.Rows) != len(m.Files) || len(m.ChunkRows) != m.Chunks {
		return nil, fmt.Errorf("run %s: explorer index version %d: want %d (a refresh rebuilds it)", id, m.Version, exploreVersion)
	}
	ri := &runIndex{id: id, m: m, e: e, orders: map[string][]int32{}, searches: map[string][]int32{}, used: time.Now()}
	n := 0
	for _, r := range m.ChunkRows {
		ri.first = append(ri.first, int32(n))
		n += r
	}
	if n != m.Samples {
		return nil, fmt.Errorf("run %s: explorer index: its chunks hold %d samples, its manifest says %d (a refresh rebuilds it)", id, n, m.Samples)
	}
	plan, found, err := readPlan(ctx, e.store, id)
	if err != nil {
		return nil, err
	}
	ri.plan, ri.hasPlan = plan, found
	n = 0
	for _, r := range m.Rows {
		ri.starts = append(ri.starts, n)
		n += r
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if old, ok := e.runs[id]; ok {
		return old, nil
	}
	if len(e.runs) >= ExplorerRuns {
		var oldest string
		for k, r := range e.runs {
			if oldest == "" || r.used.Before(e.runs[oldest].used) {
				oldest = k
			}
		}
		e.cached.Add(-e.runs[oldest].dropChunks())
		delete(e.runs, oldest)
		for k := range e.pairs {
			if strings.Contains(k, oldest) {
				delete(e.pairs, k)
			}
		}
	}
	e.runs[id] = ri
	return ri, nil
}

// loadRows reads rows.parquet once.
func (ri *runIndex) loadRows(store blob.Store) ([]exploreRow, error) {
	ri.rowsOnce.Do(func() {
		// Not the request's context: a cancelled request must not leave
		// the index half loaded for the next one.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		ri.rows, ri.rowsErr = pq.ReadAll[exploreRow](ctx, store, exploreKey(ri.id, "rows.parquet"))
		if ri.rowsErr == nil && len(ri.rows) != ri.m.Samples {
			ri.rowsErr = fmt.Errorf("run %s: explorer index has %d rows, manifest says %d", ri.id, len(ri.rows), ri.m.Samples)
		}
	})
	return ri.rows, ri.rowsErr
}

// locate maps an ordinal to its result file and row.
func (ri *runIndex) locate(ord int) (file, row int) {
	f := sort.Search(len(ri.starts), func(i int) bool { return ri.starts[i] > ord }) - 1
	return f, ord - ri.starts[f]
}

// order returns the ordinals sorted by key ("index", "score",
// "score-desc", "tokens-desc", "ms-desc"); empty values last.
func (ri *runIndex) order(store blob.Store, key string) ([]int32, error) {
	ri.mu.Lock()
	o, ok := ri.orders[key]
	ri.mu.Unlock()
	if ok {
		return o, nil
	}
	if key == "index" && ri.m.Ordered { // result order is index order
		o = make([]int32, ri.m.Samples)
		for i := range o {
			o[i] = int32(i)
		}
		ri.mu.Lock()
		ri.orders[key] = o
		ri.mu.Unlock()
		return o, nil
	}
	rows, err := ri.loadRows(store)
	if err != nil {
		return nil, err
	}
	o = make([]int32, len(rows))
	for i := range o {
		o[i] = int32(i)
	}
	var less func(a, b exploreRow) bool
	switch key {
	case "index":
		less = func(a, b exploreRow) bool { return a.Index < b.Index }
	case "score", "score-desc":
		desc := key == "score-desc"
		less = func(a, b exploreRow) bool {
			if math.IsNaN(a.Score) || math.IsNaN(b.Score) {
				return !math.IsNaN(a.Score) && math.IsNaN(b.Score)
			}
			if desc {
				return a.Score > b.Score
			}
			return a.Score < b.Score
		}
	case "tokens-desc":
		less = func(a, b exploreRow) bool { return a.Tokens > b.Tokens }
	case "ms-desc":
		less = func(a, b exploreRow) bool { return a.MS > b.MS }
	default:
		return nil, fmt.Errorf("%w: sort %q", errBadQuery, key)
	}
	sort.SliceStable(o, func(i, j int) bool { return less(rows[o[i]], rows[o[j]]) })
	ri.mu.Lock()
	ri.orders[key] = o
	ri.mu.Unlock()
	return o, nil
}

var errBadQuery = errors.New("bad query")

// search returns the ordinals of the samples whose texts hold q (lower
// case), in ordinal order. Identical searches at once share one scan.
// Each chunk is decompressed and scanned in one of the DecodeSlots, into a
// buffer of its size (ChunkBytes, or one sample's texts): however many
// search, the texts in memory are those of DecodeSlots chunks.
func (ri *runIndex) search(ctx context.Context, store blob.Store, q string) ([]int32, error) {
	ri.mu.Lock()
	if got, ok := ri.searches[q]; ok {
		ri.mu.Unlock()
		return got, nil
	}
	ri.mu.Unlock()
	got := ri.queries.DoChan(q, func() (any, error) {
		all, err := ri.scan(ctx, store, q)
		if err != nil {
			return nil, err
		}
		ri.mu.Lock()
		if len(ri.searches) >= 8 {
			clear(ri.searches)
		}
		ri.searches[q] = all
		ri.mu.Unlock()
		return all, nil
	})
	select {
	case r := <-got:
		if r.Err != nil {
			if ctx.Err() == nil && errors.Is(r.Err, context.Canceled) {
				return ri.search(ctx, store, q) // the request that scanned went away
			}
			return nil, r.Err
		}
		return r.Val.([]int32), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (ri *runIndex) scan(ctx context.Context, store blob.Store, q string) ([]int32, error) {
	found := make([][]int32, ri.m.Chunks)
	needle := []byte(q)
	err := leaderboard.EachParallel(ri.m.Chunks, func(c int) error {
		select {
		case decodeSlots <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		defer func() { <-decodeSlots }()
		z, err := ri.chunk(ctx, store, c)
		if err != nil {
			return err
		}
		buf := textBufs.Get().(*[]byte)
		data, err := decoder.DecodeAll(z, (*buf)[:0])
		if err != nil {
			textBufs.Put(buf)
			return fmt.Errorf("run %s: explorer text %d: %w", ri.id, c, err)
		}
		found[c] = scanLines(data, needle, ri.first[c])
		if cap(data) <= 2*ChunkBytes { // a larger one (one sample's texts) is not kept
			*buf = data[:0]
			textBufs.Put(buf)
		}
		return ctx.Err()
	})
	if err != nil {
		return nil, err
	}
	var all []int32
	for _, f := range found {
		all = append(all, f...)
	}
	return all, nil
}

// chunk returns text chunk c compressed, fetching it when it is not kept.
// A chunk is fetched once however many ask for it at once (a search typed
// while the first page's prefetch runs waits for the same fetch); it is
// kept while the explorer's chunk cache has room (ExplorerCacheBytes).
func (ri *runIndex) chunk(ctx context.Context, store blob.Store, c int) ([]byte, error) {
	ri.mu.Lock()
	if ri.chunks == nil && !ri.dropped {
		ri.chunks = make([][]byte, ri.m.Chunks)
	}
	var z []byte
	if ri.chunks != nil {
		z = ri.chunks[c]
	}
	ri.mu.Unlock()
	if z != nil {
		return z, nil
	}
	got := ri.fetches.DoChan(strconv.Itoa(c), func() (any, error) {
		// Not the caller's context: the others waiting share the fetch.
		fctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		b, err := blob.GetBytes(fctx, store, chunkKey(ri.id, c))
		if err != nil {
			return nil, fmt.Errorf("run %s: explorer text %d: %w", ri.id, c, err)
		}
		if ri.e != nil && ri.e.keep(len(b)) {
			ri.mu.Lock()
			if !ri.dropped { // a dropped run keeps nothing
				ri.chunks[c] = b
				ri.kept += int64(len(b))
			} else {
				ri.e.cached.Add(-int64(len(b)))
			}
			ri.mu.Unlock()
		}
		return b, nil
	})
	select {
	case r := <-got:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.([]byte), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// dropChunks forgets the kept chunks and returns their bytes.
func (ri *runIndex) dropChunks() int64 {
	ri.mu.Lock()
	defer ri.mu.Unlock()
	n := ri.kept
	ri.chunks, ri.kept, ri.dropped = nil, 0, true
	return n
}

// prefetch loads what search and sorting need (the text chunks while the
// chunk cache has room, then rows.parquet), in the background of a run's
// first page, once. The chunks come first: a search needs them all, and
// is what a reader waits for longest.
func (ri *runIndex) prefetch(store blob.Store) {
	ri.prefetchOnce.Do(func() {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_ = leaderboard.EachParallel(ri.m.Chunks, func(c int) error {
				if ri.e != nil && ri.e.cached.Load() >= ExplorerCacheBytes {
					return nil
				}
				_, err := ri.chunk(ctx, store, c)
				return err
			})
			_, _ = ri.loadRows(store)
		}()
	})
}

// textBufs are the buffers text chunks are decompressed into.
var textBufs = sync.Pool{New: func() any { b := make([]byte, 0, ChunkBytes+64<<10); return &b }}

// decoder decompresses the text chunks (safe for concurrent DecodeAll); a
// chunk larger than maxChunkText is refused.
var decoder, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxChunkText))

// maxChunkText is the largest text chunk a search decompresses: ChunkBytes,
// or one sample's texts (a reply is at most 1 MiB by default), with room.
const maxChunkText = 64 << 20

// scanLines returns first+k for every line k of data that holds needle.
func scanLines(data, needle []byte, first int32) []int32 {
	var out []int32
	line, lineStart, pos := int32(0), 0, 0
	for pos < len(data) {
		i := bytes.Index(data[pos:], needle)
		if i < 0 {
			break
		}
		at := pos + i
		line += int32(bytes.Count(data[lineStart:at], []byte{'\n'}))
		out = append(out, first+line)
		nl := bytes.IndexByte(data[at:], '\n')
		if nl < 0 {
			break
		}
		lineStart = at + nl + 1
		line++
		pos = lineStart
	}
	return out
}

// items reads the result rows of the given ordinals (grouped by file, one
// range read per file, a bounded batch of rows at a time) and calls each
// with every wanted row as it is read (k: its position in ords; calls of
// different files may run at once): only what each keeps of a row stays
// in memory.
func (ri *runIndex) items(ctx context.Context, store blob.Store, ords []int32, each func(k int, r schemas.ResultRow)) error {
	byFile := map[int]map[int][]int{} // file -> row -> positions in ords
	for k, o := range ords {
		f, r := ri.locate(int(o))
		if byFile[f] == nil {
			byFile[f] = map[int][]int{}
		}
		byFile[f][r] = append(byFile[f][r], k)
	}
	files := make([]int, 0, len(byFile))
	for f := range byFile {
		files = append(files, f)
	}
	return leaderboard.EachParallel(len(files), func(i int) error {
		f := files[i]
		want := byFile[f]
		lo, hi := -1, -1
		for r := range want {
			if lo < 0 || r < lo {
				lo = r
			}
			hi = max(hi, r)
		}
		at := lo
		err := pq.ReadRange(ctx, store, ri.m.Files[f], int64(lo), int64(hi-lo+1), func(rs []schemas.ResultRow) error {
			for _, r := range rs {
				for _, k := range want[at] {
					each(k, r)
				}
				at++
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("run %s: %s: %w", ri.id, ri.m.Files[f], err)
		}
		return nil
	})
}

// prompts reads the dataset rows behind sample items.
func (ri *runIndex) prompts(ctx context.Context, store blob.Store, items []sampleJS, at []struct {
	shard int32
	index int64
}) error {
	p := &prompts{ctx: ctx, store: store}
	if ri.hasPlan {
		p.plan = ri.plan
	}
	defer p.close()
	for k := range items {
		t, err := p.row(at[k].shard, at[k].index)
		if err != nil {
			return err
		}
		items[k].Prompt = t
	}
	return nil
}

// query is a parsed list request.
type query struct {
	offset, limit int
	sort, q       string
}

func parseQuery(v url.Values) (query, error) {
	q := query{limit: PageSize, sort: v.Get("sort"), q: strings.ToLower(strings.TrimSpace(v.Get("q")))}
	if q.sort == "" {
		q.sort = "index"
	}
	if len(q.q) > MaxQuery {
		return q, fmt.Errorf("%w: q is %d bytes (at most %d)", errBadQuery, len(q.q), MaxQuery)
	}
	for name, dst := range map[string]*int{"offset": &q.offset, "limit": &q.limit} {
		if s := v.Get(name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return q, fmt.Errorf("%w: %s %q", errBadQuery, name, s)
			}
			*dst = n
		}
	}
	q.limit = min(max(q.limit, 1), MaxPageItems)
	return q, nil
}

// samples answers GET /<board>/api/samples.
func (e *explorer) samples(ctx context.Context, id string, q query) (ListDoc, error) {
	ri, err := e.run(ctx, id)
	if err != nil {
		return ListDoc{}, err
	}
	doc := ListDoc{Total: ri.m.Samples, Offset: q.offset}
	var page []int32
	if q.q == "" && q.sort == "index" {
		// Result order: no index needed, only the page's rows.
		doc.Matched = ri.m.Samples
		for o := q.offset; o < min(q.offset+q.limit, ri.m.Samples); o++ {
			page = append(page, int32(o))
		}
		ri.prefetch(e.store) // warm the index for sorting and search
	} else {
		var hits []int32
		var serr error
		done := make(chan struct{})
		go func() { // the search and the sort's index load at once
			defer close(done)
			if q.q != "" {
				hits, serr = ri.search(ctx, e.store, q.q)
			}
		}()
		list, err := ri.order(e.store, q.sort)
		<-done
		if err != nil {
			return doc, err
		}
		if serr != nil {
			return doc, serr
		}
		switch {
		case q.q != "" && q.sort == "index" && ri.m.Ordered:
			list = hits // in ordinal order, which is index order
		case q.q != "":
			list = filterOrder(list, hits, ri.m.Samples)
		}
		doc.Matched = len(list)
		if q.offset < len(list) {
			page = list[q.offset:min(q.offset+q.limit, len(list))]
		}
	}
	items := make([]sampleJS, len(page))
	at := make([]struct {
		shard int32
		index int64
	}, len(page))
	err = ri.items(ctx, e.store, page, func(k int, r schemas.ResultRow) {
		items[k] = sampleItem(r, headlineScore(r, ri.m.Headline), "")
		at[k].shard, at[k].index = r.Shard, r.SampleIndex
	})
	if err != nil {
		return doc, err
	}
	if err := ri.prompts(ctx, e.store, items, at); err != nil {
		return doc, err
	}
	doc.Items = items
	return doc, nil
}

// filterOrder keeps the ordinals of order that are among hits (sorted).
func filterOrder(order, hits []int32, n int) []int32 {
	if len(hits) == 0 {
		return nil
	}
	in := make([]bool, n)
	for _, h := range hits {
		in[h] = true
	}
	out := make([]int32, 0, len(hits))
	for _, o := range order {
		if in[o] {
			out = append(out, o)
		}
	}
	return out
}

// pairIndex is the join of two runs' samples by sample index.
type pairIndex struct {
	a, b   *runIndex
	pairs  []pairRef // in sample-index order
	posA   []int32   // A's ordinal -> position in pairs
	posB   []int32
	orders map[string][]int32
	mu     sync.Mutex
}

type pairRef struct {
	a, b int32 // ordinals; -1 when the run lacks the sample
	d    float64
}

func (e *explorer) pair(ctx context.Context, a, b string) (*pairIndex, error) {
	ra, err := e.run(ctx, a)
	if err != nil {
		return nil, err
	}
	rb, err := e.run(ctx, b)
	if err != nil {
		return nil, err
	}
	key := a + "/" + b
	e.mu.Lock()
	p, ok := e.pairs[key]
	e.mu.Unlock()
	if ok {
		return p, nil
	}
	rowsA, err := ra.loadRows(e.store)
	if err != nil {
		return nil, err
	}
	rowsB, err := rb.loadRows(e.store)
	if err != nil {
		return nil, err
	}
	p = &pairIndex{a: ra, b: rb, orders: map[string][]int32{}, posA: make([]int32, len(rowsA)), posB: make([]int32, len(rowsB))}
	oa, _ := ra.order(e.store, "index")
	ob, _ := rb.order(e.store, "index")
	i, j := 0, 0
	for i < len(oa) || j < len(ob) {
		ref := pairRef{a: -1, b: -1, d: math.NaN()}
		switch {
		case j >= len(ob) || (i < len(oa) && rowsA[oa[i]].Index < rowsB[ob[j]].Index):
			ref.a = oa[i]
			i++
		case i >= len(oa) || rowsB[ob[j]].Index < rowsA[oa[i]].Index:
			ref.b = ob[j]
			j++
		default:
			ref.a, ref.b = oa[i], ob[j]
			i++
			j++
			if x, y := rowsA[ref.a].Score, rowsB[ref.b].Score; !math.IsNaN(x) && !math.IsNaN(y) {
				ref.d = x - y
			}
		}
		if ref.a >= 0 {
			p.posA[ref.a] = int32(len(p.pairs))
		}
		if ref.b >= 0 {
			p.posB[ref.b] = int32(len(p.pairs))
		}
		p.pairs = append(p.pairs, ref)
	}
	e.mu.Lock()
	e.pairs[key] = p
	e.mu.Unlock()
	return p, nil
}

// order returns the pair positions sorted by key ("index", "diff",
// "diff-desc"); pairs without a diff last.
func (p *pairIndex) order(key string) ([]int32, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if o, ok := p.orders[key]; ok {
		return o, nil
	}
	o := make([]int32, len(p.pairs))
	for i := range o {
		o[i] = int32(i)
	}
	switch key {
	case "index":
	case "diff", "diff-desc":
		desc := key == "diff-desc"
		sort.SliceStable(o, func(i, j int) bool {
			x, y := p.pairs[o[i]].d, p.pairs[o[j]].d
			if math.IsNaN(x) || math.IsNaN(y) {
				return !math.IsNaN(x) && math.IsNaN(y)
			}
			if desc {
				return x > y
			}
			return x < y
		})
	default:
		return nil, fmt.Errorf("%w: sort %q", errBadQuery, key)
	}
	p.orders[key] = o
	return o, nil
}

// compare answers GET /<board>/api/compare.
func (e *explorer) compare(ctx context.Context, a, b string, q query) (ListDoc, error) {
	p, err := e.pair(ctx, a, b)
	if err != nil {
		return ListDoc{}, err
	}
	list, err := p.order(q.sort)
	if err != nil {
		return ListDoc{}, err
	}
	doc := ListDoc{Total: len(p.pairs), Offset: q.offset}
	if q.q != "" {
		hitsA, err := p.a.search(ctx, e.store, q.q)
		if err != nil {
			return doc, err
		}
		hitsB, err := p.b.search(ctx, e.store, q.q)
		if err != nil {
			return doc, err
		}
		var hits []int32
		for _, h := range hitsA {
			hits = append(hits, p.posA[h])
		}
		for _, h := range hitsB {
			hits = append(hits, p.posB[h])
		}
		list = filterOrder(list, hits, len(p.pairs))
	}
	doc.Matched = len(list)
	var page []int32
	if q.offset < len(list) {
		page = list[q.offset:min(q.offset+q.limit, len(list))]
	}
	var fromA, fromB []int32
	for _, k := range page {
		if r := p.pairs[k]; r.a >= 0 {
			fromA = append(fromA, r.a)
		} else {
			fromB = append(fromB, r.b)
		}
	}
	type head struct {
		id, cat string
		index   int64
	}
	rowsA, rowsB := make([]head, len(fromA)), make([]head, len(fromB))
	err = p.a.items(ctx, e.store, fromA, func(k int, r schemas.ResultRow) { rowsA[k] = head{r.SampleID, r.Category, r.SampleIndex} })
	if err != nil {
		return doc, err
	}
	err = p.b.items(ctx, e.store, fromB, func(k int, r schemas.ResultRow) { rowsB[k] = head{r.SampleID, r.Category, r.SampleIndex} })
	if err != nil {
		return doc, err
	}
	items := make([]pairJS, 0, len(page))
	rA, rB := p.a.rows, p.b.rows
	for _, k := range page {
		r := p.pairs[k]
		var row head
		if r.a >= 0 {
			row, rowsA = rowsA[0], rowsA[1:]
		} else {
			row, rowsB = rowsB[0], rowsB[1:]
		}
		it := pairJS{ID: row.id, Index: row.index, Cat: row.cat}
		if r.a >= 0 {
			it.A, it.ErrA = score(rA[r.a].Score), rA[r.a].Err
		}
		if r.b >= 0 {
			it.B, it.ErrB = score(rB[r.b].Score), rB[r.b].Err
		}
		if !math.IsNaN(r.d) {
			d := r.d
			it.D = &d
		}
		items = append(items, it)
	}
	doc.Items = items
	return doc, nil
}

func score(x float64) *float64 {
	if math.IsNaN(x) {
		return nil
	}
	return &x
}

// api serves the explorer's routes for a board's latest stamp: only runs
// of that stamp are listed.
func (h *handler) api(w http.ResponseWriter, r *http.Request, board, stamp, route string) {
	var s leaderboard.Scores
	if err := blob.GetJSON(r.Context(), h.store, leaderboard.ScoresKey(board, stamp), &s); err != nil {
		h.fail(w, err)
		return
	}
	onBoard := func(id string) bool {
		for _, run := range s.Runs {
			if run.RunID == id {
				return true
			}
		}
		return false
	}
	v := r.URL.Query()
	q, err := parseQuery(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	done, err := h.explore.turn(r.Context())
	if errors.Is(err, errBusy) {
		w.Header().Set("Retry-After", strconv.Itoa(int(ExplorerWait/time.Second)))
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	if err != nil {
		return // the client went away
	}
	defer done()
	var doc ListDoc
	switch route {
	case "samples":
		id := v.Get("run")
		if !onBoard(id) {
			http.Error(w, fmt.Sprintf("board %s: stamp %s has no run %q", board, stamp, id), http.StatusNotFound)
			return
		}
		doc, err = h.explore.samples(r.Context(), id, q)
	case "compare":
		a, b := v.Get("a"), v.Get("b")
		if !onBoard(a) || !onBoard(b) {
			http.Error(w, fmt.Sprintf("board %s: stamp %s has no runs %q and %q", board, stamp, a, b), http.StatusNotFound)
			return
		}
		doc, err = h.explore.compare(r.Context(), a, b, q)
	default:
		http.NotFound(w, r)
		return
	}
	if errors.Is(err, errBadQuery) {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if errors.Is(err, blob.ErrNotFound) {
		http.Error(w, err.Error()+" (the explorer index is written by the refresh that first shows the run)", http.StatusNotFound)
		return
	}
	if err != nil {
		h.fail(w, err)
		return
	}
	b, err := json.Marshal(doc)
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, r, b)
}
