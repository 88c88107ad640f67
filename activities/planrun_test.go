package activities

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.temporal.io/sdk/temporal"

	"github.com/benchline/benchline/internal/benchmark/benchmarktest"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
	"github.com/benchline/benchline/scorers/synthetic"
)

// planTask is a task PlanRun can plan; it is never evaluated.
type planTask struct{}

func (planTask) Dataset() string   { return "d" }
func (planTask) Version() string   { return "1" }
func (planTask) Metrics() []string { return []string{"m"} }
func (planTask) ReadSamples(context.Context, blob.Store, string, int64, int64, func(scorers.Sample) error) error {
	return errors.New("not read")
}
func (planTask) Evaluate(context.Context, scorers.Env, scorers.Sample) (scorers.Outcome, error) {
	return scorers.Outcome{}, errors.New("not evaluated")
}

// headDown fails Head with an error that is not blob.ErrNotFound.
type headDown struct{ blob.Store }

func (headDown) Head(context.Context, string) (blob.Info, error) {
	return blob.Info{}, errors.New("store unreachable")
}

// TestPlanRunManifestMismatch: a dataset whose files do not match its
// manifest (catalog.ErrMismatch) stops the run as invalid input naming the
// file; a store that fails otherwise is left to Temporal's retries.
func TestPlanRunManifestMismatch(t *testing.T) {
	tests := []struct {
		name    string
		bytes   int64 // the manifest's size of the part, when not 0 (its real size)
		down    bool
		invalid bool
	}{
		{"files match", 0, false, false},
		{"another size", 99, false, true},
		{"store down", 0, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			mem := blobtest.NewMemory()
			part := catalog.PartPath(0)
			w := pq.NewWriter[item](ctx, mem, catalog.PartKey("d", "0001", 0), pq.Options{})
			if err := w.Write([]item{{"a"}, {"b"}, {"c"}, {"d"}}); err != nil {
				t.Fatal(err)
			}
			info, err := w.Close()
			if err != nil {
				t.Fatal(err)
			}
			if tc.bytes == 0 {
				tc.bytes = info.Bytes
			}
			m := catalog.Manifest{Name: "d", Version: "0001", Schema: schemas.Table{Name: "t", Version: 1}, Rows: 4,
				Files: []catalog.File{{Path: part, Rows: 4, Bytes: tc.bytes, SHA256: info.SHA256}}}
			if err := catalog.Publish(ctx, mem, m, "# card", catalog.PublishOptions{}); err != nil {
				t.Fatal(err)
			}
			tasks := benchmarktest.Registry(t, benchmarktest.Task(planTask{}, m.Schema))
			var store blob.Store = mem
			if tc.down {
				store = headDown{mem}
			}
			a := &Eval{Store: store, Benchmarks: tasks}
			_, err = a.PlanRun(ctx, PlanRunInput{Request: runs.Request{Dataset: "d", Model: "baseline/reference"}, CreatedAt: time.Now()})
			if !tc.invalid && !tc.down {
				if err != nil {
					t.Fatalf("PlanRun: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("PlanRun: no error")
			}
			var ae *temporal.ApplicationError
			isInvalid := errors.As(err, &ae) && ae.Type() == ErrTypeInvalidInput && ae.NonRetryable()
			if isInvalid != tc.invalid {
				t.Fatalf("PlanRun error %v: invalid input %v, want %v", err, isInvalid, tc.invalid)
			}
			if tc.invalid && !strings.Contains(err.Error(), part) {
				t.Errorf("PlanRun error %q does not name %s", err, part)
			}
		})
	}
}

func TestNewPlanNormalizesPanels(t *testing.T) {
	m := catalog.Manifest{Name: "medrubric", Version: "v1"}
	task := synthetic.Task{}
	at := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	plan := func(judges map[string]string) runs.Plan {
		return NewPlan(runs.Request{Model: "baseline/reference", Judges: judges}, m, task, at)
	}
	want := plan(map[string]string{"judge": "baseline/judge,baseline/judge-yes"})
	tests := []struct {
		name   string
		judges map[string]string
	}{
		{"another order", map[string]string{"judge": "baseline/judge-yes,baseline/judge"}},
		{"spaces and a repeat", map[string]string{"judge": " baseline/judge-yes , baseline/judge,baseline/judge"}},
		{"an empty role besides", map[string]string{"judge": "baseline/judge-yes,baseline/judge", "checker": " , "}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := plan(tc.judges)
			assert.Equal(t, want.RunID, got.RunID)
			assert.Equal(t, want.Judges, got.Judges)
		})
	}
	assert.NotEqual(t, want.RunID, plan(map[string]string{"judge": "baseline/judge"}).RunID, "another panel is another run")
	assert.Nil(t, plan(nil).Judges)
	assert.Nil(t, plan(map[string]string{"judge": ""}).Judges, "a role without models is no judge")
}

// TestNewPlanShardSize: an interactive run's default shard is 500 samples
// (and the same run as an explicit 500); a batch run's default is sized by
// the dataset's bytes per row; an explicit size is kept in both modes.
func TestNewPlanShardSize(t *testing.T) {
	m := catalog.Manifest{Name: "d", Version: "v1", Files: []catalog.File{
		{Path: "a.parquet", Rows: 20_000, Bytes: 4_000_000}, {Path: "b.parquet", Rows: 20_000, Bytes: 4_000_000}}} // 200 B a row
	at := time.Unix(0, 0)
	plan := func(batch bool, size int) runs.Plan {
		return NewPlan(runs.Request{Dataset: "d@v1", Model: "baseline/reference", Batch: batch, ShardSize: size}, m, planTask{}, at)
	}
	if p := plan(false, 0); p.ShardSize != runs.DefaultShardSize || p.Shards != 80 || p.RunID != plan(false, 500).RunID {
		t.Errorf("interactive default: shard size %d, %d shards, run %s (explicit 500: %s)", p.ShardSize, p.Shards, p.RunID, plan(false, 500).RunID)
	}
	if p := plan(true, 0); p.ShardSize != runs.MaxBatchShardSize || p.Shards != 4 {
		t.Errorf("batch default: shard size %d, %d shards; want %d and 4", p.ShardSize, p.Shards, runs.MaxBatchShardSize)
	}
	if p := plan(true, 700); p.ShardSize != 700 {
		t.Errorf("batch, explicit 700: shard size %d", p.ShardSize)
	}
}
