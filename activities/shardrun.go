package activities

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
)

// shardProgress is a shard activity's heartbeat detail: the first Done
// chunks of the shard are in checkpoint files, one per entry of Starts (the
// file starting at chunk Starts[i] runs to Starts[i+1], the last one to
// Done). Its ShardCounts are for progress displays only; resume ignores
// them (and details of older versions, which have none, resume as before).
//
// Shard names the shard when the activity runs a group of shards
// (RunShardInput.Shards > 1): a retry resumes from the detail only the
// shard it names, and finds the group's earlier shards finished by their
// result files.
type shardProgress struct {
	Done   int   `json:"done"`
	Starts []int `json:"starts,omitempty"`
	Shard  int   `json:"shard,omitempty"`
	ShardCounts
}

// ShardCounts are a running shard's counts so far, sent with every
// heartbeat: the client reads them from the workflow's pending activities
// (wfclient.QueryProgress) so that progress moves within a shard, which the
// workflow, counting only finished shards, cannot see.
type ShardCounts struct {
	// Samples are the samples of the shard done so far (by this attempt,
	// in the checkpoints it resumed from, or before a --rerun-errors pass);
	// Total is the shard's samples.
	Samples     int64   `json:"samples,omitempty"`
	Total       int64   `json:"total,omitempty"`
	ModelFailed int64   `json:"model_failed,omitempty"`
	InfraFailed int64   `json:"infra_failed,omitempty"`
	CostUSD     float64 `json:"cost_usd,omitempty"`
	// BatchCounts are a batch-mode shard's batches so far.
	BatchCounts
}

// add counts one done row.
func (c *ShardCounts) add(row schemas.ResultRow) {
	c.Samples++
	switch {
	case row.ErrorClass == "":
	case !schemas.Scored(row.ErrorClass):
		c.InfraFailed++
	default:
		c.ModelFailed++
	}
	c.CostUSD += row.CostUSD
}

func (p shardProgress) clone() shardProgress {
	p.Starts = slices.Clone(p.Starts)
	return p
}

// setBatch sets the batch counts the heartbeats carry, and heartbeats.
func (r *shardRun) setBatch(c BatchCounts) {
	r.mu.Lock()
	r.prog.BatchCounts = c
	r.mu.Unlock()
}

// valid reports whether p describes checkpoints of a shard of n chunks.
func (p shardProgress) valid(n int) bool {
	if p.Done < 0 || p.Done > n || (p.Done > 0) != (len(p.Starts) > 0) {
		return false
	}
	for i, s := range p.Starts {
		if s < 0 || s >= p.Done || (i == 0 && s != 0) || (i > 0 && s <= p.Starts[i-1]) {
			return false
		}
	}
	return true
}

// shardRun is the resumable loop shared by the shard activities (RunShard
// generates, ScoreShard scores): it works through a shard's rows chunk by
// chunk, writes the chunks done since the last checkpoint as one checkpoint
// file (runs.ChunkKey) when a chunk ends at least interval after the last
// one, and reports the progress as its heartbeat detail. A retry reads that
// detail (resume), loads the checkpoint files and goes on from the first
// chunk they do not cover. The last chunk is never checkpointed: the shard
// file follows it at once (finish), and the checkpoints are then deleted.
type shardRun struct {
	store blob.Store
	run   string
	shard int
	// chunk is rows per chunk; interval the least time between two
	// checkpoints.
	chunk    int
	interval time.Duration
	// rows are the shard's results, indexed like its samples; todo marks
	// the rows still to do. Chunks loaded from checkpoints are done
	// whatever todo says.
	rows []schemas.ResultRow
	todo []bool
	// checkpoint enables checkpoints; without it resume and the loop read
	// and write none (a --rerun-errors pass over a finished shard).
	checkpoint bool
	// flush, if set, runs before each checkpoint is written (RunShard: the
	// cache segment, so the answers a checkpoint holds are cached too).
	flush func(context.Context) error
	// beat records a heartbeat detail (activity.RecordHeartbeat in an
	// activity).
	beat func(detail any)
	now  func() time.Time
	// shardID, when not -1, is the shard a heartbeat detail must name
	// to be resumed from (a group's shard; see shardProgress.Shard).
	shardID int

	mu   sync.Mutex // guards prog, which the heartbeat ticker reads
	prog shardProgress
}

// chunks is the number of chunks of the shard.
func (r *shardRun) chunks() int { return (len(r.rows) + r.chunk - 1) / r.chunk }

// bounds returns the rows [lo, hi) of chunk c.
func (r *shardRun) bounds(c int) (lo, hi int) {
	return c * r.chunk, min((c+1)*r.chunk, len(r.rows))
}

// progress returns a copy of the progress, for heartbeats.
func (r *shardRun) progress() shardProgress {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.prog.clone()
}

// resume reads a previous attempt's heartbeat detail through decode (nil
// when there is none) and loads the checkpoint files it names into rows. A
// detail that does not decode or does not describe this shard (an older
// version's, another activity's) starts the shard over: RunShard's model
// answers come back from its cache segment. A named checkpoint that cannot
// be read or holds the wrong number of rows is an error naming the file.
func (r *shardRun) resume(ctx context.Context, decode func(any) error) error {
	if !r.checkpoint || decode == nil {
		return nil
	}
	var p shardProgress
	if err := decode(&p); err != nil || !p.valid(r.chunks()) || (r.shardID >= 0 && p.Shard != r.shardID) {
		return nil
	}
	for i, start := range p.Starts {
		end := p.Done
		if i+1 < len(p.Starts) {
			end = p.Starts[i+1]
		}
		lo, _ := r.bounds(start)
		_, hi := r.bounds(end - 1)
		key := runs.ChunkKey(r.run, r.shard, start)
		done, err := pq.ReadAll[schemas.ResultRow](ctx, r.store, key)
		if err == nil && len(done) != hi-lo {
			err = fmt.Errorf("%d rows, want %d", len(done), hi-lo)
		}
		if err != nil {
			return fmt.Errorf("run %s shard %d: resume from checkpoint %s: %w", r.run, r.shard, key, err)
		}
		copy(r.rows[lo:hi], done)
	}
	r.mu.Lock()
	r.prog = p
	r.mu.Unlock()
	return nil
}

// each calls fn for every row still to do, from at most conc goroutines,
// one chunk after the other from the first chunk no checkpoint covers, and
// checkpoints between chunks. fn sets rows[i]; its first error stops the
// loop and is returned.
func (r *shardRun) each(ctx context.Context, conc int, fn func(ctx context.Context, i int) error) error {
	n := r.chunks()
	last := r.now()
	r.countDone()
	done := func(ctx context.Context, i int) error {
		if err := fn(ctx, i); err != nil {
			return err
		}
		r.mu.Lock()
		r.prog.add(r.rows[i])
		r.mu.Unlock()
		return nil
	}
	for c := r.progress().Done; c < n; c++ {
		lo, hi := r.bounds(c)
		var idx []int
		for i := lo; i < hi; i++ {
			if r.todo[i] {
				idx = append(idx, i)
			}
		}
		if err := eachIndex(ctx, idx, conc, done); err != nil {
			return err
		}
		if !r.checkpoint || c+1 == n || r.now().Sub(last) < r.interval {
			continue
		}
		if err := r.save(ctx, c); err != nil {
			return err
		}
		last = r.now()
	}
	return nil
}

// countDone starts the counts from the rows done before the loop: those of
// the checkpointed chunks and those not to do.
func (r *shardRun) countDone() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.prog.ShardCounts = ShardCounts{Total: int64(len(r.rows))}
	_, loaded := r.bounds(r.prog.Done - 1)
	if r.prog.Done == 0 {
		loaded = 0
	}
	for i := range r.rows {
		if i < loaded || !r.todo[i] {
			r.prog.add(r.rows[i])
		}
	}
}

// save writes the chunks from the last checkpoint through chunk c as one
// checkpoint file and heartbeats the new progress.
func (r *shardRun) save(ctx context.Context, c int) error {
	if r.flush != nil {
		if err := r.flush(ctx); err != nil {
			return err
		}
	}
	from := r.progress().Done
	lo, _ := r.bounds(from)
	_, hi := r.bounds(c)
	if err := writeRows(ctx, r.store, runs.ChunkKey(r.run, r.shard, from), r.rows[lo:hi]); err != nil {
		return err
	}
	r.mu.Lock()
	r.prog.Starts = append(r.prog.Starts, from)
	r.prog.Done = c + 1
	r.mu.Unlock()
	r.beat(r.progress())
	return nil
}

// finish writes the shard's rows to key, then deletes every checkpoint of
// the shard: those its progress names, and any other under
// runs.ChunkPrefix, e.g. one an earlier attempt wrote just before it was
// killed, before the heartbeat naming it reached the server. A delete that
// fails leaves garbage, never a wrong result: only a heartbeat detail
// names checkpoints to read, and the run's cleanup deletes partial/.
func (r *shardRun) finish(ctx context.Context, key string) error {
	if err := writeRows(ctx, r.store, key, r.rows); err != nil {
		return err
	}
	keys := map[string]bool{}
	for _, start := range r.progress().Starts {
		keys[runs.ChunkKey(r.run, r.shard, start)] = true
	}
	if infos, err := r.store.List(ctx, runs.ChunkPrefix(r.run, r.shard)); err == nil {
		for _, in := range infos {
			keys[in.Key] = true
		}
	}
	for k := range keys {
		_ = r.store.Delete(ctx, k)
	}
	return nil
}
