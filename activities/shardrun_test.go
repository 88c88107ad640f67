package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
)

const testRun = "rtest"

// fakeClock is a shardRun clock the test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// attempt is one activity attempt over a shardRun: it records the rows it
// was asked to do and the heartbeat details it recorded.
type attempt struct {
	r     *shardRun
	clock *fakeClock
	mu    sync.Mutex
	did   []int
	beats []shardProgress
}

// newAttempt returns an attempt over a shard of n rows in chunks of chunk
// rows (all to do), checkpointing at most every interval.
func newAttempt(store blob.Store, n, chunk int, interval time.Duration) *attempt {
	rows, todo := startRows(n, nil)
	return newAttemptOver(store, rows, todo, chunk, interval, true)
}

func newAttemptOver(store blob.Store, rows []schemas.ResultRow, todo []bool, chunk int, interval time.Duration, checkpoint bool) *attempt {
	at := &attempt{clock: &fakeClock{t: time.Unix(1000, 0)}}
	at.r = &shardRun{store: store, run: testRun, shard: 3, chunk: chunk, interval: interval, rows: rows, todo: todo,
		checkpoint: checkpoint, now: at.clock.now, shardID: -1}
	at.r.beat = func(d any) {
		at.mu.Lock()
		defer at.mu.Unlock()
		at.beats = append(at.beats, d.(shardProgress))
	}
	return at
}

// run does the shard's rows one at a time, marking each row with label,
// and fails with errCrash on row crashAt (-1: never). Each chunk's first
// row moves the clock by a second.
func (at *attempt) run(label string, crashAt int) error {
	return at.r.each(context.Background(), 1, func(_ context.Context, i int) error {
		if i == crashAt {
			return errCrash
		}
		if i%at.r.chunk == 0 {
			at.clock.add(time.Second)
		}
		at.mu.Lock()
		at.did = append(at.did, i)
		at.mu.Unlock()
		at.r.rows[i] = schemas.ResultRow{RunID: testRun, SampleIndex: int64(i), SampleID: fmt.Sprint(i), Response: label}
		return nil
	})
}

// detail is the last heartbeat detail as the next attempt receives it:
// JSON, as Temporal's default converter carries it.
func (at *attempt) detail(t *testing.T) func(any) error {
	t.Helper()
	if len(at.beats) == 0 {
		return nil
	}
	b, err := json.Marshal(at.beats[len(at.beats)-1])
	if err != nil {
		t.Fatal(err)
	}
	return func(v any) error { return json.Unmarshal(b, v) }
}

var errCrash = errors.New("worker killed")

func equalBeats(a, b []shardProgress) bool {
	return slices.EqualFunc(a, b, func(x, y shardProgress) bool { return x.Done == y.Done && slices.Equal(x.Starts, y.Starts) })
}

func span(lo, hi int) []int {
	var out []int
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

// checkShardFile reads the shard file and checks row i holds sample i done
// by the attempt labels[i], and that no checkpoint is left.
func checkShardFile(t *testing.T, store blob.Store, key string, labels []string) {
	t.Helper()
	ctx := context.Background()
	rows, err := pq.ReadAll[schemas.ResultRow](ctx, store, key)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(labels) {
		t.Fatalf("shard file has %d rows, want %d", len(rows), len(labels))
	}
	for i, r := range rows {
		if r.SampleIndex != int64(i) || r.Response != labels[i] {
			t.Errorf("row %d: sample %d done by %q, want sample %d by %q", i, r.SampleIndex, r.Response, i, labels[i])
		}
	}
	left, err := store.List(ctx, runs.ChunkPrefix(testRun, 3))
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("%d checkpoint files left after the shard file was written: %v", len(left), left)
	}
}

// TestShardRunResumesAfterEachChunk kills the first attempt in every chunk
// of a 10-row shard in chunks of 3 (4 chunks; a checkpoint after every chunk
// but the last), and after the last, and checks the retry redoes only the
// chunk it was killed in and those after it, keeping the checkpointed rows.
func TestShardRunResumesAfterEachChunk(t *testing.T) {
	const n, chunk = 10, 3
	for _, tc := range []struct {
		crashAt   int
		wantBeats []shardProgress // what the first attempt heartbeats
	}{
		{crashAt: 1},
		{crashAt: 4, wantBeats: []shardProgress{{Done: 1, Starts: []int{0}}}},
		{crashAt: 8, wantBeats: []shardProgress{{Done: 1, Starts: []int{0}}, {Done: 2, Starts: []int{0, 1}}}},
		{crashAt: 9, wantBeats: []shardProgress{{Done: 1, Starts: []int{0}}, {Done: 2, Starts: []int{0, 1}}, {Done: 3, Starts: []int{0, 1, 2}}}},
		// Killed after its last chunk, before the shard file was written:
		// the last chunk has no checkpoint, the retry redoes it.
		{crashAt: -1, wantBeats: []shardProgress{{Done: 1, Starts: []int{0}}, {Done: 2, Starts: []int{0, 1}}, {Done: 3, Starts: []int{0, 1, 2}}}},
	} {
		name := fmt.Sprintf("killed at row %d", tc.crashAt)
		if tc.crashAt < 0 {
			name = "killed after the last chunk"
		}
		t.Run(name, func(t *testing.T) {
			store := blobtest.NewMemory()
			first := newAttempt(store, n, chunk, 0)
			if err := first.run("first", tc.crashAt); (tc.crashAt >= 0) != errors.Is(err, errCrash) {
				t.Fatalf("first attempt: %v", err)
			}
			if !equalBeats(first.beats, tc.wantBeats) {
				t.Fatalf("first attempt heartbeats %+v, want %+v", first.beats, tc.wantBeats)
			}
			done := 0 // rows the checkpoints cover
			if len(tc.wantBeats) > 0 {
				done = tc.wantBeats[len(tc.wantBeats)-1].Done * chunk
			}

			second := newAttempt(store, n, chunk, 0)
			if err := second.r.resume(context.Background(), first.detail(t)); err != nil {
				t.Fatal(err)
			}
			if err := second.run("second", -1); err != nil {
				t.Fatal(err)
			}
			if want := span(done, n); !slices.Equal(second.did, want) {
				t.Errorf("retry did rows %v, want %v", second.did, want)
			}
			key := runs.ShardKey(testRun, 3)
			if err := second.r.finish(context.Background(), key); err != nil {
				t.Fatal(err)
			}
			labels := make([]string, n)
			for i := range labels {
				labels[i] = "second"
				if i < done {
					labels[i] = "first"
				}
			}
			checkShardFile(t, store, key, labels)
		})
	}
}

// TestShardRunCheckpointInterval: a checkpoint covers every chunk since the
// last one once interval has passed, and the last chunk is never
// checkpointed. 5 chunks of 3 rows, one second each, interval 2 s: files at
// chunks 0 (chunks 0-1) and 2 (chunks 2-3).
func TestShardRunCheckpointInterval(t *testing.T) {
	store := blobtest.NewMemory()
	first := newAttempt(store, 15, 3, 2*time.Second)
	if err := first.run("first", 13); !errors.Is(err, errCrash) {
		t.Fatalf("first attempt: %v", err)
	}
	want := []shardProgress{{Done: 2, Starts: []int{0}}, {Done: 4, Starts: []int{0, 2}}}
	if !equalBeats(first.beats, want) {
		t.Fatalf("heartbeats %+v, want %+v", first.beats, want)
	}
	for start, rows := range map[int]int{0: 6, 2: 6} {
		got, err := pq.ReadAll[schemas.ResultRow](context.Background(), store, runs.ChunkKey(testRun, 3, start))
		if err != nil || len(got) != rows {
			t.Errorf("checkpoint at chunk %d: %d rows (%v), want %d", start, len(got), err, rows)
		}
	}
	second := newAttempt(store, 15, 3, 2*time.Second)
	if err := second.r.resume(context.Background(), first.detail(t)); err != nil {
		t.Fatal(err)
	}
	if err := second.run("second", -1); err != nil {
		t.Fatal(err)
	}
	if want := span(12, 15); !slices.Equal(second.did, want) {
		t.Errorf("retry did rows %v, want %v", second.did, want)
	}
}

// TestShardRunForeignDetail: a heartbeat detail that does not decode into
// shardProgress (an older ScoreShard heartbeated a count) or describes
// another shard starts the shard over, reading no checkpoint.
func TestShardRunForeignDetail(t *testing.T) {
	for _, tc := range []struct {
		name   string
		detail string
	}{
		{"a count", `42`},
		{"a string", `"chunk 3"`},
		{"more chunks than the shard has", `{"done": 9, "starts": [0]}`},
		{"chunks done but no file", `{"done": 2}`},
		{"first file not at chunk 0", `{"done": 2, "starts": [1]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at := newAttempt(blobtest.NewMemory(), 10, 3, 0) // an empty store: reading any file would fail
			err := at.r.resume(context.Background(), func(v any) error { return json.Unmarshal([]byte(tc.detail), v) })
			if err != nil {
				t.Fatalf("resume: %v", err)
			}
			if err := at.run("only", -1); err != nil {
				t.Fatal(err)
			}
			if want := span(0, 10); !slices.Equal(at.did, want) {
				t.Errorf("did rows %v, want all of %v", at.did, want)
			}
		})
	}
}

// TestShardRunBadCheckpoint: a checkpoint the detail names but the store
// does not have, or one with the wrong number of rows, is an error naming
// the file.
func TestShardRunBadCheckpoint(t *testing.T) {
	ctx := context.Background()
	detail := func(v any) error { return json.Unmarshal([]byte(`{"done": 2, "starts": [0]}`), v) }
	key := runs.ChunkKey(testRun, 3, 0)

	t.Run("missing", func(t *testing.T) {
		at := newAttempt(blobtest.NewMemory(), 10, 3, 0)
		err := at.r.resume(ctx, detail)
		if !errors.Is(err, blob.ErrNotFound) || !strings.Contains(err.Error(), key) {
			t.Fatalf("err = %v, want not found naming %s", err, key)
		}
	})
	t.Run("short", func(t *testing.T) {
		store := blobtest.NewMemory()
		if err := writeRows(ctx, store, key, make([]schemas.ResultRow, 4)); err != nil {
			t.Fatal(err)
		}
		at := newAttempt(store, 10, 3, 0)
		err := at.r.resume(ctx, detail)
		if err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "4 rows, want 6") {
			t.Fatalf("err = %v, want 4 rows of 6 in %s", err, key)
		}
	})
}

// TestShardRunRerunErrors: --rerun-errors over a finished shard redoes only
// its infrastructure failures, keeps every other row as it was, and neither
// reads nor writes checkpoints.
func TestShardRunRerunErrors(t *testing.T) {
	classes := []string{"", schemas.ErrorClassInfrastructure, "unparseable", schemas.ErrorClassBadSample, "",
		schemas.ErrorClassInfrastructure, "", ""}
	previous := make([]schemas.ResultRow, len(classes))
	for i, c := range classes {
		previous[i] = schemas.ResultRow{RunID: testRun, SampleIndex: int64(i), SampleID: fmt.Sprint(i), Response: "before", ErrorClass: c}
	}
	rows, todo := startRows(len(previous), previous)
	store := blobtest.NewMemory()
	at := newAttemptOver(store, rows, todo, 3, 0, false)
	// A detail naming checkpoints that do not exist: never read.
	if err := at.r.resume(context.Background(), func(v any) error { return json.Unmarshal([]byte(`{"done": 2, "starts": [0]}`), v) }); err != nil {
		t.Fatalf("resume: %v", err)
	}
	if err := at.run("rerun", -1); err != nil {
		t.Fatal(err)
	}
	if want := []int{1, 5}; !slices.Equal(at.did, want) {
		t.Errorf("redid rows %v, want the infrastructure failures %v", at.did, want)
	}
	if len(at.beats) != 0 {
		t.Errorf("heartbeated checkpoints %+v", at.beats)
	}
	key := runs.ShardKey(testRun, 3)
	if err := at.r.finish(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	labels := []string{"before", "rerun", "before", "before", "before", "rerun", "before", "before"}
	checkShardFile(t, store, key, labels)
	got, err := pq.ReadAll[schemas.ResultRow](context.Background(), store, key)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range got {
		if want := classes[i]; labels[i] == "before" && r.ErrorClass != want {
			t.Errorf("row %d: error class %q, want %q kept", i, r.ErrorClass, want)
		}
	}
}

func TestStartRows(t *testing.T) {
	rows, todo := startRows(3, nil)
	if len(rows) != 3 || !slices.Equal(todo, []bool{true, true, true}) {
		t.Errorf("fresh shard: %d rows, todo %v", len(rows), todo)
	}
	previous := []schemas.ResultRow{{ErrorClass: schemas.ErrorClassInfrastructure}, {}, {ErrorClass: "timeout"}, {ErrorClass: schemas.ErrorClassBadSample}}
	rows, todo = startRows(4, previous)
	if !slices.Equal(todo, []bool{true, false, false, false}) || rows[2].ErrorClass != "timeout" {
		t.Errorf("rerun: todo %v, rows %+v", todo, rows)
	}
}

// TestShardRunCountsInHeartbeats: every heartbeat detail carries the
// shard's counts so far (samples, model and infrastructure failures, cost),
// which the client adds to the workflow's progress; a retry counts the
// rows of the checkpoints it resumed from, so the count never goes back.
func TestShardRunCountsInHeartbeats(t *testing.T) {
	const n, chunk = 10, 3
	row := func(i int) schemas.ResultRow {
		r := schemas.ResultRow{SampleIndex: int64(i), CostUSD: 0.25}
		switch i {
		case 2:
			r.ErrorClass = "unparseable" // a scored model failure
		case 4:
			r.ErrorClass = schemas.ErrorClassInfrastructure
		}
		return r
	}
	store := blobtest.NewMemory()
	first := newAttempt(store, n, chunk, 0)
	err := first.r.each(context.Background(), 1, func(_ context.Context, i int) error {
		if i == 7 {
			return errCrash
		}
		first.r.rows[i] = row(i)
		return nil
	})
	if !errors.Is(err, errCrash) {
		t.Fatal(err)
	}
	want := []ShardCounts{
		{Samples: 3, Total: n, ModelFailed: 1, CostUSD: 0.75},
		{Samples: 6, Total: n, ModelFailed: 1, InfraFailed: 1, CostUSD: 1.5},
	}
	var got []ShardCounts
	for _, b := range first.beats {
		got = append(got, b.ShardCounts)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("heartbeat counts %+v, want %+v", got, want)
	}
	if p := first.r.progress(); p.Samples != 7 {
		t.Errorf("the crashed attempt's progress counts %d samples, want 7 (rows 0-6)", p.Samples)
	}

	second := newAttempt(store, n, chunk, 0)
	if err := second.r.resume(context.Background(), first.detail(t)); err != nil {
		t.Fatal(err)
	}
	var mid ShardCounts
	err = second.r.each(context.Background(), 1, func(_ context.Context, i int) error {
		if i == 7 {
			mid = second.r.progress().ShardCounts // what the ticker would send
		}
		second.r.rows[i] = row(i)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if w := (ShardCounts{Samples: 7, Total: n, ModelFailed: 1, InfraFailed: 1, CostUSD: 1.75}); mid != w {
		t.Errorf("retry's counts at row 7: %+v, want %+v (6 checkpointed, row 6 done)", mid, w)
	}
	if w := (ShardCounts{Samples: n, Total: n, ModelFailed: 1, InfraFailed: 1, CostUSD: 2.5}); second.r.progress().ShardCounts != w {
		t.Errorf("retry's final counts %+v, want %+v", second.r.progress().ShardCounts, w)
	}
}

// TestShardRunFinishDeletesUnnamedCheckpoints: an attempt killed right
// after writing a checkpoint, before the heartbeat naming it reached the
// server, leaves a file the retry's progress does not name; finishing the
// shard deletes it too (issue #11: checkpoints left under partial/).
func TestShardRunFinishDeletesUnnamedCheckpoints(t *testing.T) {
	const n, chunk = 10, 3
	store := blobtest.NewMemory()
	first := newAttempt(store, n, chunk, 0)
	if err := first.run("first", 4); !errors.Is(err, errCrash) {
		t.Fatal(err)
	}
	if len(first.beats) == 0 {
		t.Fatal("the first attempt wrote no checkpoint")
	}
	// The retry never got the detail: it starts over and names no file.
	second := newAttempt(store, n, chunk, time.Hour)
	if err := second.r.resume(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if err := second.run("second", -1); err != nil {
		t.Fatal(err)
	}
	key := runs.ShardKey(testRun, 3)
	if err := second.r.finish(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	labels := make([]string, n)
	for i := range labels {
		labels[i] = "second"
	}
	checkShardFile(t, store, key, labels) // fails on a checkpoint left
}

// TestShardGroupDetail: in a group of shards, the heartbeat detail names
// the shard it is in and counts the whole group; a retry resumes from the
// checkpoints of the shard the detail names, and a later shard of the
// group, which the detail does not name, starts from its first row.
func TestShardGroupDetail(t *testing.T) {
	store := blobtest.NewMemory()
	var beats []shardProgress
	g := &shardGroup{total: 25, beat: func(d any) { beats = append(beats, d.(shardProgress)) }}
	g.finished(ShardResult{Samples: 15, ModelFailed: 2, CostUSD: 1}) // shards 1 and 2 done

	first := newAttempt(store, 10, 3, 0)
	g.start(3, first.r)
	if err := first.run("first", 7); !errors.Is(err, errCrash) {
		t.Fatalf("first attempt: %v, want the crash", err)
	}
	if len(beats) != 2 {
		t.Fatalf("%d heartbeats, want 2 (a checkpoint after chunks 0 and 1)", len(beats))
	}
	last := beats[len(beats)-1]
	if last.Shard != 3 || last.Done != 2 || !slices.Equal(last.Starts, []int{0, 1}) {
		t.Fatalf("last detail %+v, want shard 3, 2 chunks done in 2 files", last)
	}
	if w := (ShardCounts{Samples: 21, Total: 25, ModelFailed: 2, CostUSD: 1}); last.ShardCounts != w {
		t.Errorf("last detail counts %+v, want %+v (15 of the finished shards, 6 of shard 3)", last.ShardCounts, w)
	}
	b, err := json.Marshal(last)
	if err != nil {
		t.Fatal(err)
	}
	detail := func(v any) error { return json.Unmarshal(b, v) }

	retry := newAttempt(store, 10, 3, 0)
	(&shardGroup{beat: func(any) {}}).start(3, retry.r)
	if err := retry.r.resume(context.Background(), detail); err != nil {
		t.Fatal(err)
	}
	if err := retry.run("retry", -1); err != nil {
		t.Fatal(err)
	}
	if want := span(6, 10); !slices.Equal(retry.did, want) {
		t.Errorf("the retry of shard 3 did rows %v, want %v", retry.did, want)
	}

	other := newAttempt(store, 10, 3, 0)
	(&shardGroup{beat: func(any) {}}).start(4, other.r)
	if err := other.r.resume(context.Background(), detail); err != nil {
		t.Fatal(err)
	}
	if err := other.run("other", -1); err != nil {
		t.Fatal(err)
	}
	if want := span(0, 10); !slices.Equal(other.did, want) {
		t.Errorf("shard 4, under a detail naming shard 3, did rows %v, want all of %v", other.did, want)
	}
}
