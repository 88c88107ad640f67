// Package leaderboard holds what a board stamp publishes: scores.json, the
// data the site is drawn from, and the layout of boards in the object store.
//
//	leaderboards/<board>/<stamp>/scores.json     Scores (this file's types)
//	leaderboards/<board>/<stamp>/scores.parquet  one row per Cell
//	leaderboards/<board>/<stamp>/site/...         the static site (package site)
//	leaderboards/<board>/latest                   the stamp of the last good refresh, written last
//
// A stamp is a UTC time, "20061102T150405Z": stamps sort by time.
package leaderboard

import (
	"fmt"
	"time"

	"github.com/benchline/benchline/internal/aggregate"
)

// StampLayout formats a board stamp.
const StampLayout = "20060102T150405Z"

// Prefix is the object-store prefix of a board stamp ("leaderboards/<board>/<stamp>").
func Prefix(board, stamp string) string { return fmt.Sprintf("leaderboards/%s/%s", board, stamp) }

// ScoresKey is the key of a stamp's scores.json.
func ScoresKey(board, stamp string) string { return Prefix(board, stamp) + "/scores.json" }

// SiteKey is the key prefix of a stamp's static site.
func SiteKey(board, stamp string) string { return Prefix(board, stamp) + "/site" }

// LatestKey is the key of a board's latest pointer; its content is a stamp.
func LatestKey(board string) string { return fmt.Sprintf("leaderboards/%s/latest", board) }

// Scores is a board stamp's scores.json. The first four fields are the
// contract of `benchline leaderboard serve` (GET /<board>/scores.json): one
// Cell per (benchmark, model) headline metric. The rest is what the site
// draws.
type Scores struct {
	Board string `json:"board"`
	Stamp string `json:"stamp"`
	Cells []Cell `json:"cells"`

	Title     string    `json:"title,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	// Benchmarks and Models are in the board file's order.
	Benchmarks []Benchmark `json:"benchmarks"`
	Models     []Model     `json:"models"`
	// Runs are the runs behind the cells, reused or new, with their full
	// summaries (categories, cost, tokens, latency, errors, agreement). A
	// run evaluated in batch mode says so beside its cost: summary.batch is
	// true and summary.cost_usd is at the providers' batch prices.
	Runs []Run `json:"runs"`
	// Comparisons are the paired comparisons of every two models on each
	// benchmark's headline metric, on the samples both runs scored.
	Comparisons []Comparison `json:"comparisons"`
	// Failed are the (benchmark, model) cells this refresh could not fill.
	Failed []FailedCell `json:"failed,omitempty"`
}

// Cell is one (benchmark, model) headline metric.
type Cell struct {
	Dataset string  `json:"dataset"`
	Version string  `json:"version"`
	Model   string  `json:"model"`
	Metric  string  `json:"metric"`
	Mean    float64 `json:"mean"`
	CILow   float64 `json:"ci_low"`
	CIHigh  float64 `json:"ci_high"`
	N       int64   `json:"n"`
	RunID   string  `json:"run_id"`

	StdErr   float64 `json:"stderr"`
	CIMethod string  `json:"ci_method"`
	// Clusters is the number of clusters when the CI is clustered (samples
	// sharing a cluster, see Benchmark.ClusterBy); 0 when it is not.
	Clusters int64 `json:"clusters,omitempty"`
	// RankLow..RankHigh is the model's rank range on this benchmark: it
	// ranks above another only where the paired comparison says so.
	RankLow  int `json:"rank_low"`
	RankHigh int `json:"rank_high"`
}

// Benchmark is one benchmark of the board, pinned to a dataset version.
type Benchmark struct {
	Dataset     string `json:"dataset"`
	Version     string `json:"version"`
	Description string `json:"description,omitempty"`
	// Headline is the metric of the benchmark's cells (the task's first).
	Headline string   `json:"headline"`
	Metrics  []string `json:"metrics"`
	// TaskVersion is the scorer's version, part of every run id.
	TaskVersion string `json:"task_version"`
	// ClusterBy says which samples share a cluster ("" for none), e.g.
	// "item (English and Chinese prompts)".
	ClusterBy string `json:"cluster_by,omitempty"`
}

// Model is a model of the board with its optional metadata.
type Model struct {
	Model        string `json:"model"`
	DisplayName  string `json:"display_name,omitempty"`
	Organisation string `json:"organisation,omitempty"`
	Licence      string `json:"licence,omitempty"`
	Parameters   string `json:"parameters,omitempty"`
	Link         string `json:"link,omitempty"`
	// Baseline marks a deterministic baseline model, never an LLM.
	Baseline bool `json:"baseline"`
	// Batch, when set, says whether this model's runs are in batch mode
	// (the board's settings.batch otherwise).
	Batch *bool `json:"batch,omitempty"`
}

// Run is one run behind the board's cells.
type Run struct {
	RunID       string            `json:"run_id"`
	Dataset     string            `json:"dataset"`
	Version     string            `json:"version"`
	Model       string            `json:"model"`
	Judges      map[string]string `json:"judges,omitempty"`
	TaskVersion string            `json:"task_version"`
	// Reused is true when this refresh found the run finished and started
	// nothing for it.
	Reused  bool              `json:"reused"`
	Summary aggregate.Summary `json:"summary"`
}

// Comparison is a paired comparison of two models' runs on one benchmark.
type Comparison struct {
	Dataset string `json:"dataset"`
	Metric  string `json:"metric"`
	ModelA  string `json:"model_a"`
	ModelB  string `json:"model_b"`
	RunA    string `json:"run_a"`
	RunB    string `json:"run_b"`
	// N is the number of samples both runs scored.
	N int64 `json:"n"`
	// Diff is mean(A) - mean(B) over those samples, with its 95% CI.
	Diff   float64 `json:"diff"`
	CILow  float64 `json:"ci_low"`
	CIHigh float64 `json:"ci_high"`
	// Method is "paired-bootstrap" (clustered where the benchmark has
	// clusters) or "mcnemar" (pass/fail metrics without clusters); "none"
	// when the runs share no scored sample. The interval is always the
	// paired bootstrap's (see docs/statistics.md).
	Method string `json:"method"`
	// Clusters is the number of clusters the paired bootstrap resampled
	// when the benchmark has clusters (see Benchmark.ClusterBy); 0 when
	// samples were resampled one by one.
	Clusters int64   `json:"clusters,omitempty"`
	P        float64 `json:"p"`
	// PAdjusted is P corrected for the benchmark's many comparisons
	// (Correction: "holm").
	PAdjusted  float64 `json:"p_adjusted"`
	Correction string  `json:"correction"`
	// Significant is PAdjusted < 0.05: then A ranks above B when Diff > 0.
	Significant bool `json:"significant"`
	// MeanA and MeanB are the two runs' means over the N samples; ABetter,
	// BBetter and Ties count the samples where A scored higher, lower or
	// the same.
	MeanA   float64 `json:"mean_a"`
	MeanB   float64 `json:"mean_b"`
	ABetter int64   `json:"a_better"`
	BBetter int64   `json:"b_better"`
	Ties    int64   `json:"ties"`
}

// FailedCell is a (benchmark, model) cell a refresh could not fill.
type FailedCell struct {
	Dataset string `json:"dataset"`
	Model   string `json:"model"`
	RunID   string `json:"run_id,omitempty"`
	Error   string `json:"error"`
}
