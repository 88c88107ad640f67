package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/logattr"
	"github.com/benchline/benchline/scorers"
)

type recordingObserver struct {
	mu      sync.Mutex
	samples []string // activity/status
	shards  []string // activity/ok|error
}

func (o *recordingObserver) SampleDone(activity, status string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.samples = append(o.samples, activity+"/"+status)
}

func (o *recordingObserver) ShardDone(activity string, _ time.Duration, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	o.shards = append(o.shards, activity+"/"+outcome)
}

// syncBuffer is a bytes.Buffer safe for the handler's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// TestShardObservedAndLabelled: ScoreShard tells the observer of each
// sample and of the attempt, and records logged with the context inside a
// sample (as the gateway logs) carry the run id, shard and sample; the
// attempt's own record carries the run id and shard.
func TestShardObservedAndLabelled(t *testing.T) {
	var buf syncBuffer
	logger := slog.New(logattr.Handler(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	task := &fakeTask{hook: func(ctx context.Context, s scorers.Sample) error {
		logger.WarnContext(ctx, "inside a sample", "id", s.ID)
		return nil
	}}
	a, run := generatedShard(t, task, 3, 100)
	obs := &recordingObserver{}
	a.Observer, a.Logger = obs, logger
	env, _ := activityEnv(context.Background(), a)
	if _, err := env.ExecuteActivity(a.ScoreShard, ScoreShardInput{RunID: run, Shard: 0}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"ScoreShard/ok", "ScoreShard/ok", "ScoreShard/ok"}; !slices.Equal(obs.samples, want) {
		t.Errorf("samples observed %v, want %v", obs.samples, want)
	}
	if want := []string{"ScoreShard/ok"}; !slices.Equal(obs.shards, want) {
		t.Errorf("shards observed %v, want %v", obs.shards, want)
	}
	inside, done := 0, 0
	for _, line := range bytes.Split(bytes.TrimSpace(buf.b.Bytes()), []byte("\n")) {
		var rec map[string]any
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if rec["run_id"] != run || rec["shard"] != float64(0) {
			t.Errorf("record without the run id and shard: %s", line)
		}
		switch rec["msg"] {
		case "inside a sample":
			inside++
			if rec["sample"] != rec["id"] {
				t.Errorf("sample attribute %v in the record of sample %v", rec["sample"], rec["id"])
			}
		case "shard done":
			done++
			if rec["samples"] != float64(3) || rec["activity"] != "ScoreShard" {
				t.Errorf("shard done record: %s", line)
			}
		}
	}
	if inside != 3 || done != 1 {
		t.Errorf("%d sample records (want 3), %d shard done records (want 1):\n%s", inside, done, buf.b.Bytes())
	}
}
