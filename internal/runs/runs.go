// Package runs lays out evaluation runs in the object store and fixes a run
// by its plan.
//
//	runs/<run-id>/plan.json                         everything that determines the run
//	runs/<run-id>/results/shard-NNNNN.parquet       one file per shard, one row per sample
//	runs/<run-id>/partial/shard-NNNNN/chunk-CCCC.parquet   checkpoints of a shard in progress
//	runs/<run-id>/summary.json, summary.parquet     the aggregate
//	cache/<run-id>/shard-NNNNN/part-*.jsonl         the gateway's answer cache for the shard
//
// The run id is a hash of the plan's content (dataset version, model,
// judges, parameters, seed, task version, shard size), so the same plan
// started twice is the same run: a finished run is reused, a running one is
// attached to.
package runs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/benchline/benchline/internal/modelapi"
)

// Request is what a user asks for.
type Request struct {
	// Dataset is "name", "name@latest" or "name@<version>".
	Dataset string            `json:"dataset"`
	Model   string            `json:"model"`
	Judges  map[string]string `json:"judges,omitempty"`
	Params  modelapi.Params   `json:"params"`
	Seed    *int              `json:"seed,omitempty"`
	// ShardSize is samples per shard [500].
	ShardSize int `json:"shard_size,omitempty"`
	// Limit evaluates only the first Limit samples (0: all).
	Limit int64 `json:"limit,omitempty"`
	// NoCache bypasses the gateway's response cache (not part of the run id).
	NoCache bool `json:"no_cache,omitempty"`
	// Batch sends the model's and judges' requests through their
	// providers' batch APIs (not part of the run id: a batch run and an
	// interactive run of the same plan give the same results from the
	// same replies).
	Batch bool `json:"batch,omitempty"`
}

// File is one dataset file of the pinned version.
type File struct {
	Key  string `json:"key"`
	Rows int64  `json:"rows"`
}

// Plan fixes a run.
type Plan struct {
	RunID          string            `json:"run_id"`
	Dataset        string            `json:"dataset"`
	DatasetVersion string            `json:"dataset_version"`
	Files          []File            `json:"files"`
	Model          string            `json:"model"`
	Judges         map[string]string `json:"judges,omitempty"`
	Params         modelapi.Params   `json:"params"`
	Seed           *int              `json:"seed,omitempty"`
	TaskVersion    string            `json:"task_version"`
	Metrics        []string          `json:"metrics"`
	ShardSize      int               `json:"shard_size"`
	Limit          int64             `json:"limit,omitempty"`
	Samples        int64             `json:"samples"`
	Shards         int               `json:"shards"`
	NoCache        bool              `json:"no_cache,omitempty"`
	// Batch records that the run was planned in batch mode.
	Batch     bool      `json:"batch,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// ID derives the run id from the fields that determine results.
func (p Plan) ID() string {
	key := struct {
		Dataset, Version, Model, TaskVersion string
		Judges                               map[string]string
		Params                               modelapi.Params
		Seed                                 *int
		ShardSize                            int
		Limit                                int64
	}{p.Dataset, p.DatasetVersion, p.Model, p.TaskVersion, p.Judges, p.Params, p.Seed, p.ShardSize, p.Limit}
	b, _ := json.Marshal(key) // map keys are sorted by encoding/json
	sum := sha256.Sum256(b)
	return "r" + hex.EncodeToString(sum[:])[:15]
}

// Range is the rows of one shard: rows [Start, Start+Rows) of Files[File],
// which are samples [First, First+Rows) of the run.
type Range struct {
	File  int
	Start int64
	Rows  int64
	First int64
}

// Shard sizes. An interactive run's default shard is DefaultShardSize
// samples. A batch run's fixed costs are per shard (an activity and its
// Temporal events, a batch file, a batch and its polls, a result file, a
// cache segment: about 18 store requests) while its per-sample work is
// small, so its default shard is as many samples as hold BatchShardBytes
// of the dataset's Parquet (its files' bytes over their rows), between
// DefaultShardSize and MaxBatchShardSize: short prompts get large shards,
// long ones (a report of tens of KB) keep 500. A shard's memory while its
// batches are out is then about that of a 500-sample shard of long
// prompts: 10,000 short prompts hold about 3 KB each (the sample, its
// request's JSON, its line of the batch file), 500 reports of 20 KB hold
// their text three or four times over.
const (
	DefaultShardSize  = 500
	MaxBatchShardSize = 10_000
	BatchShardBytes   = 4 << 20
)

// BatchShardSize is a batch run's default shard size for a dataset of rows
// rows in bytes bytes of Parquet.
func BatchShardSize(rows, bytes int64) int {
	if rows <= 0 || bytes <= 0 {
		return DefaultShardSize
	}
	perRow := max(bytes/rows, 1)
	return int(min(max(BatchShardBytes/perRow, DefaultShardSize), MaxBatchShardSize))
}

// Layout computes the shard count and sample count of a plan. Shards never
// cross files.
func (p *Plan) Layout() {
	if p.ShardSize <= 0 {
		p.ShardSize = DefaultShardSize
	}
	p.Shards, p.Samples = 0, 0
	left := p.Limit
	for _, f := range p.Files {
		rows := f.Rows
		if p.Limit > 0 {
			rows = min(rows, left)
			left -= rows
		}
		p.Samples += rows
		p.Shards += int((rows + int64(p.ShardSize) - 1) / int64(p.ShardSize))
	}
}

// Shard returns the rows of shard i.
func (p Plan) Shard(i int) (Range, error) {
	var first int64
	left := p.Limit
	for fi, f := range p.Files {
		rows := f.Rows
		if p.Limit > 0 {
			rows = min(rows, left)
			left -= rows
		}
		n := int((rows + int64(p.ShardSize) - 1) / int64(p.ShardSize))
		if i < n {
			start := int64(i) * int64(p.ShardSize)
			return Range{File: fi, Start: start, Rows: min(int64(p.ShardSize), rows-start), First: first + start}, nil
		}
		i -= n
		first += rows
	}
	return Range{}, fmt.Errorf("runs: shard %d out of range", i)
}

// Keys.
func Dir(run string) string             { return "runs/" + run + "/" }
func PlanKey(run string) string         { return Dir(run) + "plan.json" }
func SummaryKey(run string) string      { return Dir(run) + "summary.json" }
func SummaryTableKey(run string) string { return Dir(run) + "summary.parquet" }
func ShardKey(run string, shard int) string {
	return fmt.Sprintf("%sresults/shard-%05d.parquet", Dir(run), shard)
}
func ChunkKey(run string, shard, chunk int) string {
	return fmt.Sprintf("%spartial/shard-%05d/chunk-%04d.parquet", Dir(run), shard, chunk)
}
func PartialPrefix(run string) string { return Dir(run) + "partial/" }
func ChunkPrefix(run string, shard int) string {
	return fmt.Sprintf("%spartial/shard-%05d/", Dir(run), shard)
}
func CachePrefix(run string, shard int) string { return fmt.Sprintf("cache/%s/shard-%05d", run, shard) }

// BatchKey is the record of one provider batch of a batch-mode shard, by
// its content key (activities: written before the batch is waited on).
func BatchKey(run string, shard int, key string) string {
	return fmt.Sprintf("%sbatches/shard-%05d/%s.json", Dir(run), shard, key)
}

// BatchFileKey is the input file of the batch recorded at BatchKey: a
// retried activity resumes an unfinished batch from it.
func BatchFileKey(run string, shard int, key string) string {
	return fmt.Sprintf("%sbatches/shard-%05d/%s.jsonl", Dir(run), shard, key)
}

// BatchPrefix holds a batch-mode shard's batch records and files.
func BatchPrefix(run string, shard int) string {
	return fmt.Sprintf("%sbatches/shard-%05d/", Dir(run), shard)
}

// BatchStateKey holds a batch-mode shard's failed batch requests.
func BatchStateKey(run string, shard int) string {
	return fmt.Sprintf("%sbatches/shard-%05d/state.json", Dir(run), shard)
}

// TimingKey is where the last finished run of model on dataset (a name,
// any version) left its measured time per sample (Timing).
func TimingKey(dataset, model string) string {
	return "timing/" + url.PathEscape(dataset) + "/" + url.PathEscape(model) + ".json"
}

// Timing is a run's measured shard-activity time per sample: the next
// run of the model on the dataset sizes its first groups of shards from
// it, before its own shards have reported (workflows.ShardGroup).
type Timing struct {
	RunID            string  `json:"run_id"`
	SecondsPerSample float64 `json:"seconds_per_sample"`
	ShardsTimed      int     `json:"shards_timed"`
}
