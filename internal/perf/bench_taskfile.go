package perf

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/synthetic"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/config"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/internal/wfclient"
	"github.com/benchline/benchline/workflows"

	"go.temporal.io/sdk/client"
)

// TaskFileBench compares the evaluation rate of an exact-match task file
// with that of the compiled synthetic benchmark of the same size, both run
// by baseline/reference through the same Temporal, workers, gateway and
// shard concurrency, in alternating rounds.
type TaskFileBench struct {
	Samples     int64 `json:"samples"`
	Concurrency int   `json:"concurrent_shards"`
	// The rates of each round, samples/s; round i ran the synthetic run and
	// then the task file's.
	SyntheticRates []float64 `json:"synthetic_samples_per_sec"`
	TaskFileRates  []float64 `json:"taskfile_samples_per_sec"`
	// Ratios are each round's task-file rate ÷ synthetic rate; Ratio is
	// their median (one stall of a busy machine does not decide it).
	Ratios     []float64 `json:"ratios"`
	Ratio      float64   `json:"ratio"`
	TaskFileID string    `json:"taskfile_dataset"`
}

// benchTaskFile is the exact-match task file the figure builds (its data is
// written beside it, n rows).
const benchTaskFile = `# benchline bench taskfile: an exact-match task over generated rows.
name: %s
description: Generated exact-match rows (benchline bench taskfile)
license: cc0-1.0
metric: exact
data:
  test: {path: rows.jsonl}
columns: {id: id, target: answer}
prompt:
  messages:
    - {role: system, content: "Answer with the word only."}
    - {role: user, content: "Repeat the word {{ word }} (item {{ id }})."}
generation: {temperature: 0, max_tokens: 16}
scorers:
  - {type: exact_match, name: exact, ignore_case: true}
`

// WriteBenchTaskFile writes the figure's task file and its n rows of data
// into dir and returns the task file's path.
func WriteBenchTaskFile(dir, name string, n int64, seed int) (string, error) {
	f, err := os.Create(filepath.Join(dir, "rows.jsonl"))
	if err != nil {
		return "", fmt.Errorf("perf: %w", err)
	}
	w := bufio.NewWriter(f)
	for i := range n {
		word := fmt.Sprintf("w%d-%d", seed, i*7919%1000003)
		fmt.Fprintf(w, "{\"id\": \"r%07d\", \"word\": %q, \"answer\": %q}\n", i, word, word)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return "", fmt.Errorf("perf: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("perf: %w", err)
	}
	path := filepath.Join(dir, "task.yaml")
	if err := os.WriteFile(path, fmt.Appendf(nil, benchTaskFile, name), 0o644); err != nil {
		return "", fmt.Errorf("perf: %w", err)
	}
	return path, nil
}

// BenchTaskFile builds the synthetic dataset and a task file of n rows
// each, then in each of rounds rounds evaluates baseline/reference on the
// synthetic dataset and then on the task file (no cache, the same shard
// concurrency) and reports both rates and their ratio.
func BenchTaskFile(ctx context.Context, c client.Client, cfg config.Config, store blob.Store, n int64, shards, seed, rounds int) (TaskFileBench, error) {
	res := TaskFileBench{Samples: n, Concurrency: shards}
	dir, err := os.MkdirTemp("", "benchline-bench-taskfile-")
	if err != nil {
		return res, fmt.Errorf("perf: %w", err)
	}
	defer os.RemoveAll(dir)
	name := fmt.Sprintf("bench-exact-%d", seed)
	path, err := WriteBenchTaskFile(dir, name, n, seed)
	if err != nil {
		return res, err
	}
	synth, err := wfclient.BuildDataset(ctx, c, cfg, workflows.BuildDatasetInput{Dataset: synthetic.Name,
		Request: datasets.Request{Params: map[string]string{"rows": fmt.Sprint(n), "seed": fmt.Sprint(seed)}}})
	if err != nil {
		return res, err
	}
	tf, err := wfclient.BuildDataset(ctx, c, cfg, workflows.BuildDatasetInput{Dataset: name,
		Request: datasets.Request{Source: path, Task: true}})
	if err != nil {
		return res, err
	}
	res.TaskFileID = name + "@" + tf.Version
	for range max(rounds, 1) {
		s, err := timedRun(ctx, c, cfg, store, synthetic.Name+"@"+synth.Version, shards)
		if err != nil {
			return res, err
		}
		t, err := timedRun(ctx, c, cfg, store, res.TaskFileID, shards)
		if err != nil {
			return res, err
		}
		res.SyntheticRates = append(res.SyntheticRates, float64(n)/s.Seconds())
		res.TaskFileRates = append(res.TaskFileRates, float64(n)/t.Seconds())
		res.Ratios = append(res.Ratios, s.Seconds()/t.Seconds())
	}
	sorted := slices.Clone(res.Ratios)
	slices.Sort(sorted)
	res.Ratio = sorted[len(sorted)/2]
	return res, nil
}

// timedRun evaluates baseline/reference on ref with no cache and a fresh
// seed (so a finished run is not reused) and returns its wall time.
func timedRun(ctx context.Context, c client.Client, cfg config.Config, store blob.Store, ref string, shards int) (time.Duration, error) {
	nonce := int(time.Now().UnixNano() % (1 << 31))
	start := time.Now()
	run, p, err := wfclient.StartEval(ctx, c, cfg, store, workflows.EvaluateModelInput{
		Request: runs.Request{Dataset: ref, Model: "baseline/reference", NoCache: true, Seed: &nonce}, MaxConcurrentShards: shards})
	if err != nil {
		return 0, err
	}
	if _, err := wfclient.WaitEval(ctx, c, run, p.RunID, time.Hour, nil); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}
