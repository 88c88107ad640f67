package activities

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/gateway"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
)

// Batch mode (runs.Plan.Batch). A shard is evaluated in rounds: each round
// runs every unfinished sample's task with a gateway view that defers its
// cache misses (gateway.Deferring) instead of calling; the deferred
// requests go to the providers' batch APIs, and their answers go into the
// shard's cache segment under the keys the calls would have had. A sample
// whose task ran without deferring anything is finished, and that run's
// row is its result; one that deferred a call runs again next round, and
// gets further (the next dialogue turn, the judge of its reply). A
// finished sample's task ran as in an interactive shard, every answer a
// cache hit: the same rows as an interactive run from the same replies,
// by construction (an answer one of the run's batches paid for counts as
// the call it replaced).
//
// Durability: before waiting on a batch, its record (runs.BatchKey, by
// content key and try) holds its id; a retried activity recomputes the
// same requests from the same cache, finds the record and polls the same
// batch. A record with no id (the worker died between writing it and
// creating the batch) is resolved by the provider's list, where the
// batch's metadata holds the key, before a batch is created: a batch is
// never created twice for the same requests.

// maxBatchRounds bounds a shard's rounds (a dialogue of n turns with a
// judge takes n+1); requests still deferred after it are called
// interactively.
const maxBatchRounds = 64

// batchRecord is runs.BatchKey's object: one batch of a shard.
type batchRecord struct {
	Provider string    `json:"provider"`
	Key      string    `json:"key"` // content key and try
	ID       string    `json:"id,omitempty"`
	Created  time.Time `json:"created"` // when the record was first written: the wait's bound starts here
	Requests int       `json:"requests"`
	Status   string    `json:"status,omitempty"`
	Done     bool      `json:"done,omitempty"` // its answers are cached and its failures in the state
}

// batchFailure is one request's batch failures so far.
type batchFailure struct {
	Tries   int    `json:"tries"`
	Class   int    `json:"class"`
	Status  int    `json:"status,omitempty"`
	Message string `json:"message"`
	Final   bool   `json:"final,omitempty"` // no further batch: every pass fails it
	// Fallback: no further batch, every pass calls it (fallback: interactive).
	Fallback bool `json:"fallback,omitempty"`
}

// batchState is runs.BatchStateKey's object: a shard's failed requests.
type batchState struct {
	Failed map[string]batchFailure `json:"failed"`
}

// BatchCounts are a batch shard's batches and requests so far, in its
// heartbeat detail for progress displays.
type BatchCounts struct {
	Submitted    int64 `json:"batches_submitted,omitempty"`
	Running      int64 `json:"batches_running,omitempty"`
	Completed    int64 `json:"batches_completed,omitempty"`
	Requests     int64 `json:"batch_requests,omitempty"`
	RequestsDone int64 `json:"batch_requests_done,omitempty"`
}

// batchShard is one shard's batch rounds.
type batchShard struct {
	a     *Eval
	run   string
	shard int
	seg   *gateway.Segment
	gw    *gateway.Gateway // the shard's cached view
	sr    *shardRun        // for heartbeats

	mu     sync.Mutex
	state  batchState
	counts BatchCounts
	// paidKeys are the requests answered by the shard's batches (this
	// attempt's and, from their stored files, earlier ones'): a cache hit
	// on one counts as the paid call it replaced. known holds the batch
	// keys (content key and try) whose requests paidKeys has.
	known    map[string]bool
	paidKeys map[string]bool
}

// batchRounds runs the batch rounds of a shard over the samples idx (the
// ones still to do). A sample whose task runs through in a round without
// deferring a request is finished: its row, by sample index, is in the map
// returned, made from the same cached answers (and counted as the same
// paid calls) as a pass after the rounds would make it. The collector
// returned is for the final pass over the samples still deferring after
// maxBatchRounds: it fails the requests whose batch attempts are over.
func (a *Eval) batchRounds(ctx context.Context, b *batchShard, task scorers.Task, env scorers.Env, samples []scorers.Sample, idx []int) (*gateway.Collector, map[int]schemas.ResultRow, error) {
	if err := blob.GetJSON(ctx, a.Store, runs.BatchStateKey(b.run, b.shard), &b.state); err != nil && !errors.Is(err, blob.ErrNotFound) {
		return nil, nil, fmt.Errorf("run %s shard %d: read batch state: %w", b.run, b.shard, err)
	}
	if b.state.Failed == nil {
		b.state.Failed = map[string]batchFailure{}
	}
	// A batch an earlier attempt left unfinished first: its answers may be
	// partly cached, so this attempt's first round would ask for another
	// set of requests.
	infos, err := a.Store.List(ctx, runs.BatchPrefix(b.run, b.shard))
	if err != nil {
		return nil, nil, fmt.Errorf("run %s shard %d: list batches: %w", b.run, b.shard, err)
	}
	if err := b.resume(ctx, infos); err != nil {
		return nil, nil, err
	}
	if err := b.loadPaid(ctx, infos); err != nil {
		return nil, nil, err
	}
	done := map[int]schemas.ResultRow{}
	// Each sample's request keys, from one round to the next.
	memos := make(map[int]*gateway.KeyMemo, len(idx))
	for _, i := range idx {
		memos[i] = &gateway.KeyMemo{}
	}
	pending := idx
	for round := 0; round < maxBatchRounds && len(pending) > 0; round++ {
		// Building a round's requests and submitting them is CPU work that
		// holds each request's JSON and its batch file: a worker does it
		// for as many shards at once as it has cores (acquireBuild), so its
		// other shards wait with only their samples in memory.
		release, err := a.acquireBuild(ctx)
		if err != nil {
			return nil, nil, err
		}
		coll := b.collector(true)
		coll.Reserve(len(pending)) // a request per sample at least
		var mu sync.Mutex
		var next []int
		err = eachIndex(ctx, pending, a.sampleConcurrency(), func(gctx context.Context, i int) error {
			view, deferred := b.gw.Deferring(coll, memos[i])
			e := env
			e.Models = view
			row, err := a.evaluate(sampleCtx(gctx, samples[i].ID), task, e, samples[i])
			if err != nil {
				return err
			}
			mu.Lock()
			if deferred() {
				next = append(next, i)
			} else {
				done[i] = row
			}
			mu.Unlock()
			return nil
		})
		if err != nil {
			release()
			return nil, nil, err
		}
		reqs := coll.Requests()
		if len(reqs) == 0 {
			release()
			break
		}
		jobs, err := b.submitBatches(ctx, reqs)
		release()
		if err != nil {
			return nil, nil, err
		}
		if err := b.waitAll(ctx, jobs); err != nil {
			return nil, nil, err
		}
		slices.Sort(next)
		pending = next
	}
	return b.collector(false), done, nil
}

// loadPaid adds to the shard's paid requests those of the batches an
// earlier attempt finished (their files are stored), so that an answer
// they paid for counts as a paid call in this attempt's rows, not as a
// cache hit. The batches this attempt submits or resumes add theirs from
// memory (submitted). infos is the listing of the shard's batches
// (runs.BatchPrefix) the attempt made when it started.
func (b *batchShard) loadPaid(ctx context.Context, infos []blob.Info) error {
	for _, info := range infos {
		key, ok := strings.CutSuffix(path.Base(info.Key), ".jsonl")
		if !ok {
			continue
		}
		b.mu.Lock()
		known := b.known[key]
		b.mu.Unlock()
		if known {
			continue
		}
		file, err := blob.GetBytes(ctx, b.a.Store, info.Key)
		if err != nil {
			return fmt.Errorf("run %s shard %d: read batch file %s: %w", b.run, b.shard, info.Key, err)
		}
		reqs, err := gateway.DecodeBatch("", file)
		if err != nil {
			return invalid(fmt.Errorf("run %s shard %d: batch file %s: %w", b.run, b.shard, info.Key, err))
		}
		b.mu.Lock()
		b.markKnown(key)
		for _, r := range reqs {
			b.paidKeys[r.Key] = true
		}
		b.mu.Unlock()
	}
	return nil
}

// submitted adds the requests of the batch with key (content key and
// try) to the shard's paid requests.
func (b *batchShard) submitted(key string, reqs map[string]string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.markKnown(key)
	for k := range reqs {
		b.paidKeys[k] = true
	}
}

// markKnown records that the requests of the batch with key are in
// paidKeys; b.mu is held.
func (b *batchShard) markKnown(key string) {
	if b.known == nil {
		b.known, b.paidKeys = map[string]bool{}, map[string]bool{}
	}
	b.known[key] = true
}

// collector returns a Collector failing the requests whose batch tries
// are over (all of them but those the provider's fallback calls).
func (b *batchShard) collector(collect bool) *gateway.Collector {
	c := gateway.NewCollector(collect)
	b.mu.Lock()
	defer b.mu.Unlock()
	for k := range b.paidKeys {
		c.Paid(k)
	}
	for k, f := range b.state.Failed {
		switch {
		case f.Fallback:
			c.Call(k)
		case f.Final:
			c.Fail(k, gateway.BatchError(gateway.Class(f.Class), f.Status, f.Message))
		}
	}
	return c
}

// submitBatches sends reqs (Collector.Requests: each provider's a run of
// the slice) to their providers' batch APIs, in files within each
// provider's limits, and returns the batches to wait for (waitAll).
func (b *batchShard) submitBatches(ctx context.Context, reqs []gateway.BatchRequest) ([]*batchJob, error) {
	var jobs []*batchJob
	for len(reqs) > 0 {
		pname := reqs[0].Provider
		n := 1
		for n < len(reqs) && reqs[n].Provider == pname {
			n++
		}
		preqs := reqs[:n]
		reqs = reqs[n:]
		cfg, ok := b.a.Gateway.BatchConfigOf(preqs[0].Model)
		if !ok {
			return nil, fmt.Errorf("run %s shard %d: provider %s has no batch API", b.run, b.shard, pname)
		}
		files, err := gateway.EncodeBatch(preqs, cfg.MaxRequests, cfg.MaxBytes)
		if err != nil {
			return nil, invalid(fmt.Errorf("run %s shard %d: %w", b.run, b.shard, err))
		}
		start := 0
		for _, f := range files {
			n := countLines(f)
			part := preqs[start : start+n]
			start += n
			j := &batchJob{reqs: make(map[string]string, len(part)), cfg: cfg}
			tries := 0
			b.mu.Lock()
			for i := range part {
				j.reqs[part[i].Key] = part[i].Model
				tries = max(tries, b.state.Failed[part[i].Key].Tries)
			}
			b.mu.Unlock()
			// The try makes a retry of the same requests a new batch.
			key := fmt.Sprintf("%s-%d", gateway.BatchContentKey(f), tries)
			manifest, err := gateway.BatchManifest(part)
			if err != nil {
				return nil, invalid(fmt.Errorf("run %s shard %d: %w", b.run, b.shard, err))
			}
			rec, err := b.submit(ctx, pname, key, f, manifest, len(part))
			if err != nil {
				return nil, err
			}
			j.rec = rec
			b.submitted(key, j.reqs)
			jobs = append(jobs, j)
		}
	}
	return jobs, nil
}

// batchJob is one batch a round waits for.
type batchJob struct {
	rec batchRecord
	// reqs are the batch's requests: each one's model by its key (what
	// BatchResults needs; the requests themselves are in the file).
	reqs map[string]string
	cfg  gateway.BatchConfig
}

// waitAll waits for every job's batch at once; its error is batchErrors'.
func (b *batchShard) waitAll(ctx context.Context, jobs []*batchJob) error {
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Go(func() { errs[i] = b.wait(ctx, &j.rec, j.cfg, j.reqs) })
	}
	wg.Wait()
	return batchErrors(ctx, jobs, errs)
}

// ErrTypeBatchFailed is the application error type of a batch whose wait
// failed with an error of no type of its own (a store error, retryable).
const ErrTypeBatchFailed = "BatchFailed"

// batchErrors is the one error of a round's batches whose waits failed
// (errs[i] is jobs[i]'s): nil if none failed, the context's error if it
// ended (the activity was cancelled or is stopping), else one Temporal
// ApplicationError naming every failed batch (id and record key) with its
// error. It is not retryable if one of the errors is not, typed as the
// first such; else retryable, typed as the first, after the longest
// NextRetryDelay asked. (Temporal's failure converter looks at the
// returned error's own type only: an errors.Join of errors, even of one
// non-retryable ApplicationError, reaches it as a retryable "joinError",
// and the activity was retried to its last attempt.)
func batchErrors(ctx context.Context, jobs []*batchJob, errs []error) error {
	var msgs []string
	var typ string
	nonRetryable := false
	var delay time.Duration
	for i, err := range errs {
		if err == nil {
			continue
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var ae *temporal.ApplicationError
		if !errors.As(classify(err), &ae) {
			msgs = append(msgs, fmt.Sprintf("batch %s (%s): %v", cmp.Or(jobs[i].rec.ID, "not created"), jobs[i].rec.Key, err))
			typ = cmp.Or(typ, ErrTypeBatchFailed)
			continue
		}
		msgs = append(msgs, fmt.Sprintf("batch %s (%s): %s", cmp.Or(jobs[i].rec.ID, "not created"), jobs[i].rec.Key, ae.Message()))
		switch {
		case ae.NonRetryable() && !nonRetryable:
			nonRetryable, typ = true, ae.Type()
		case typ == "":
			typ = ae.Type()
		}
		delay = max(delay, ae.NextRetryDelay())
	}
	if msgs == nil {
		return nil
	}
	msg := msgs[0]
	if len(msgs) > 1 {
		msg = fmt.Sprintf("%d of %d batches failed: %s", len(msgs), len(jobs), strings.Join(msgs, "; "))
	}
	opts := temporal.ApplicationErrorOptions{NonRetryable: nonRetryable}
	if !nonRetryable {
		opts.NextRetryDelay = delay
	}
	return temporal.NewApplicationErrorWithOptions(msg, typ, opts)
}

// resume finishes the batches of the shard whose records are not done,
// from their stored files; infos lists the shard's batches
// (runs.BatchPrefix).
func (b *batchShard) resume(ctx context.Context, infos []blob.Info) error {
	recs, _, err := readBatches(ctx, b.a.Store, infos)
	if err != nil {
		return fmt.Errorf("run %s shard %d: %w", b.run, b.shard, err)
	}
	var jobs []*batchJob
	for _, rec := range recs {
		if rec.Done {
			continue
		}
		fkey := runs.BatchFileKey(b.run, b.shard, rec.Key)
		manifest, err := blob.GetBytes(ctx, b.a.Store, fkey)
		if err != nil {
			return fmt.Errorf("run %s shard %d: read batch file %s: %w", b.run, b.shard, fkey, err)
		}
		reqs, err := gateway.DecodeBatch(rec.Provider, manifest)
		if err != nil || len(reqs) == 0 {
			return invalid(fmt.Errorf("run %s shard %d: batch file %s: %d requests, %v", b.run, b.shard, fkey, len(reqs), err))
		}
		cfg, ok := b.a.Gateway.BatchConfigOf(reqs[0].Model)
		if !ok {
			return fmt.Errorf("run %s shard %d: provider %s has no batch API", b.run, b.shard, rec.Provider)
		}
		// Without the file (only its manifest is kept), a batch the
		// provider does not have is left to the rounds: they build its
		// requests again, the same file under the same record, and create
		// it then.
		if rec, err = b.submit(ctx, rec.Provider, rec.Key, nil, nil, len(reqs)); errors.Is(err, errNotCreated) {
			continue
		} else if err != nil {
			return err
		}
		j := &batchJob{rec: rec, reqs: make(map[string]string, len(reqs)), cfg: cfg}
		for i := range reqs {
			j.reqs[reqs[i].Key] = reqs[i].Model
		}
		b.submitted(rec.Key, j.reqs)
		jobs = append(jobs, j)
	}
	return b.waitAll(ctx, jobs)
}

// listBatches reads the batch records under prefix (a run's batches/ or
// one shard's), and lists the shards' state files there (runs.BatchStateKey).
func listBatches(ctx context.Context, store blob.Store, prefix string) (recs []batchRecord, states []string, err error) {
	infos, err := store.List(ctx, prefix)
	if err != nil {
		return nil, nil, err
	}
	return readBatches(ctx, store, infos)
}

// readBatches is listBatches over infos, a listing already made.
func readBatches(ctx context.Context, store blob.Store, infos []blob.Info) (recs []batchRecord, states []string, err error) {
	for _, info := range infos {
		switch {
		case strings.HasSuffix(info.Key, "/state.json"):
			states = append(states, info.Key)
		case strings.HasSuffix(info.Key, ".json"):
			var rec batchRecord
			if err := blob.GetJSON(ctx, store, info.Key, &rec); err != nil {
				return nil, nil, fmt.Errorf("read batch record %s: %w", info.Key, err)
			}
			recs = append(recs, rec)
		}
	}
	return recs, states, nil
}

func countLines(b []byte) int {
	n := 0
	for _, c := range b {
		if c == '\n' {
			n++
		}
	}
	return n
}

// errNotCreated is submit's answer when the batch needs creating and
// there is no file to create it from.
var errNotCreated = errors.New("batch not created")

// submit returns the record of the batch of file under key, creating the
// batch (once) when there is none. The store keeps the batch's manifest
// (gateway.BatchManifest), not the file. With file nil (resuming from the
// manifest), a batch that needs creating is errNotCreated.
func (b *batchShard) submit(ctx context.Context, pname, key string, file, manifest []byte, n int) (batchRecord, error) {
	rkey := runs.BatchKey(b.run, b.shard, key)
	var rec batchRecord
	err := blob.GetJSON(ctx, b.a.Store, rkey, &rec)
	switch {
	case err == nil && rec.ID != "":
		b.count(func(c *BatchCounts) { c.Submitted++; c.Requests += int64(n) })
		return rec, nil // a retry resumes the batch
	case err == nil:
		// Written, then the worker died: was the batch created?
		st, found, ferr := b.a.Gateway.FindBatch(ctx, pname, key)
		if ferr != nil {
			return rec, gateway.ToTemporal(ferr)
		}
		if found {
			rec.ID, rec.Status = st.ID, st.Status
			b.count(func(c *BatchCounts) { c.Submitted++; c.Requests += int64(n) })
			return rec, b.put(ctx, rkey, rec)
		}
	case errors.Is(err, blob.ErrNotFound) && file == nil:
		return rec, errNotCreated
	case errors.Is(err, blob.ErrNotFound):
		// The manifest first, then the record naming it: a retry resumes
		// from both (resume).
		fkey := runs.BatchFileKey(b.run, b.shard, key)
		if err := b.a.Store.Put(ctx, fkey, bytes.NewReader(manifest), int64(len(manifest))); err != nil {
			return rec, fmt.Errorf("run %s shard %d: write %s: %w", b.run, b.shard, fkey, err)
		}
		rec = batchRecord{Provider: pname, Key: key, Created: time.Now().UTC(), Requests: n}
		if err := b.put(ctx, rkey, rec); err != nil {
			return rec, err
		}
	default:
		return rec, fmt.Errorf("run %s shard %d: read batch record %s: %w", b.run, b.shard, rkey, err)
	}
	if file == nil {
		return rec, errNotCreated
	}
	st, err := b.a.Gateway.CreateBatch(ctx, pname, key, file)
	if err != nil {
		return rec, gateway.ToTemporal(err)
	}
	rec.ID, rec.Status = st.ID, st.Status
	b.count(func(c *BatchCounts) { c.Submitted++; c.Requests += int64(n) })
	return rec, b.put(ctx, rkey, rec)
}

func (b *batchShard) put(ctx context.Context, key string, v any) error {
	if err := blob.PutJSON(ctx, b.a.Store, key, v); err != nil {
		return fmt.Errorf("run %s shard %d: write %s: %w", b.run, b.shard, key, err)
	}
	return nil
}

func (b *batchShard) count(f func(*BatchCounts)) {
	b.mu.Lock()
	f(&b.counts)
	c := b.counts
	b.mu.Unlock()
	if b.sr != nil {
		b.sr.setBatch(c)
	}
}

// wait polls rec's batch until it ends or its bound (created + window +
// margin) passes, then caches its answers and records its failures. A
// cancelled activity (the run was cancelled) cancels the batch.
func (b *batchShard) wait(ctx context.Context, rec *batchRecord, cfg gateway.BatchConfig, reqs map[string]string) error {
	if rec.Done {
		b.count(func(c *BatchCounts) { c.Completed++; c.RequestsDone += int64(rec.Requests) })
		return nil
	}
	b.count(func(c *BatchCounts) { c.Running++ })
	defer b.count(func(c *BatchCounts) { c.Running-- })
	deadline := rec.Created.Add(cfg.Bound())
	poll := cfg.PollInterval
	timedOut := false
	var st gateway.BatchStatus
	for {
		var err error
		st, err = b.a.Gateway.PollBatch(ctx, rec.Provider, rec.ID)
		if err != nil && ctx.Err() == nil && gateway.ClassOf(err) == gateway.ClassNotFound {
			// The provider no longer knows the batch (deleted, or a
			// provider restarted without its state): its requests failed
			// unanswered, as an expired batch's do, and are retried or
			// become infrastructure errors per the batch settings. Failing
			// the shard instead would fail every later attempt of the run
			// on the same record.
			st = gateway.BatchStatus{ID: rec.ID, Status: "lost"}
			break
		}
		if err != nil && ctx.Err() == nil && !gateway.ClassOf(err).Retryable() {
			return gateway.ToTemporal(err)
		}
		if err == nil && st.Terminal() {
			break
		}
		if time.Now().After(deadline) {
			// Past the bound: cancel, and take what it answered.
			timedOut = true
			if err := b.a.Gateway.CancelBatch(ctx, rec.Provider, rec.ID); err != nil {
				return gateway.ToTemporal(err)
			}
			if st, err = b.a.Gateway.PollBatch(ctx, rec.Provider, rec.ID); err != nil {
				return gateway.ToTemporal(err)
			}
			break
		}
		t := time.NewTimer(min(poll, time.Until(deadline)+time.Millisecond))
		select {
		case <-ctx.Done():
			// The worker is stopping or the run was cancelled: a retry finds
			// the record and resumes; a cancelled run's CleanupRun cancels
			// the batch (cancelBatches).
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	out, err := b.a.Gateway.BatchResults(ctx, rec.Provider, st, reqs)
	if err != nil && ctx.Err() == nil && gateway.ClassOf(err) == gateway.ClassNotFound {
		// The provider no longer has the batch's output or error file
		// (deleted, or dropped by a provider that bounds what it keeps):
		// the batch is lost as one the provider no longer knows is, its
		// requests unanswered and retried per the batch settings. Failing
		// the shard would fail every later attempt on the same record.
		st = gateway.BatchStatus{ID: rec.ID, Status: "lost"}
		out, err = b.a.Gateway.BatchResults(ctx, rec.Provider, st, reqs)
	}
	if err != nil {
		return gateway.ToTemporal(err)
	}
	b.seg.PutAll(out.Entries)
	if err := b.seg.Flush(ctx); err != nil {
		return err
	}
	b.mu.Lock()
	for k, e := range out.Failed {
		f := b.state.Failed[k]
		f.Tries++
		f.Class, f.Status, f.Message = int(e.Class), e.Status, e.Message
		if timedOut {
			f.Message = fmt.Sprintf("batch %s did not complete within its window and margin (%s): %s", rec.ID, cfg.Bound(), e.Message)
		}
		// Permanent failures (a 400 line) are the model's, as for a call;
		// retryable ones get cfg.Retries more batches, unless the batch
		// timed out.
		f.Final = !e.Class.Retryable() || timedOut || f.Tries > cfg.Retries
		if f.Final && e.Class.Retryable() && cfg.Fallback == gateway.FallbackInteractive {
			f.Final, f.Fallback = false, true
		}
		b.state.Failed[k] = f
	}
	state := batchState{Failed: maps.Clone(b.state.Failed)}
	b.mu.Unlock()
	if len(out.Failed) > 0 {
		if err := b.put(ctx, runs.BatchStateKey(b.run, b.shard), state); err != nil {
			return err
		}
	}
	rec.Status, rec.Done = st.Status, true
	if err := b.put(ctx, runs.BatchKey(b.run, b.shard, rec.Key), rec); err != nil {
		return err
	}
	b.count(func(c *BatchCounts) { c.Completed++; c.RequestsDone += int64(rec.Requests) })
	return nil
}

// cancelBatches cancels the batches of run whose records are not done
// (CleanupRun of a cancelled or failed run) and returns how many it
// cancelled. A batch that ended meanwhile is left as it is.
func (a *Eval) cancelBatches(ctx context.Context, run string) (int, error) {
	recs, _, err := listBatches(ctx, a.Store, runs.Dir(run)+"batches/")
	if err != nil {
		return 0, fmt.Errorf("run %s: %w", run, err)
	}
	n := 0
	for _, rec := range recs {
		if rec.ID == "" || rec.Done || a.Gateway == nil {
			continue
		}
		st, err := a.Gateway.PollBatch(ctx, rec.Provider, rec.ID)
		if err == nil && st.Terminal() {
			continue
		}
		if err := a.Gateway.CancelBatch(ctx, rec.Provider, rec.ID); err != nil {
			return n, gateway.ToTemporal(err)
		}
		n++
	}
	return n, nil
}
