package app

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/synthetic"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/config"
	"github.com/benchline/benchline/internal/gateway"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/scorers"
	synth "github.com/benchline/benchline/scorers/synthetic"
	"github.com/benchline/benchline/workflows"

	"go.temporal.io/sdk/client"
)

// EvalBench compares a full evaluation run with a bare gateway loop making
// the same calls at the same concurrency, in the same process and run.
type EvalBench struct {
	Samples          int64   `json:"samples"`
	GatewaySeconds   float64 `json:"gateway_seconds"`
	GatewayCallsPerS float64 `json:"gateway_calls_per_sec"`
	RunSeconds       float64 `json:"run_seconds"`
	RunSamplesPerS   float64 `json:"run_samples_per_sec"`
	Ratio            float64 `json:"ratio"` // run samples/s ÷ gateway calls/s
	Concurrency      int     `json:"concurrency"`
	RunID            string  `json:"run_id"`
}

// BenchEval builds a synthetic dataset of n rows, times a full evaluation
// of baseline/reference on it (workflow, gateway, scoring, Parquet, S3),
// then times a gateway-only loop over the same prompts (no cache) at
// shards×16 concurrency. The run goes first because it writes the
// references the baseline server answers from.
func BenchEval(ctx context.Context, c client.Client, cfg config.Config, store blob.Store, gw *gateway.Gateway, n int64, shards, seed int) (EvalBench, error) {
	res := EvalBench{Samples: n, Concurrency: shards * 16}
	built, err := BuildDataset(ctx, c, cfg, workflows.BuildDatasetInput{Dataset: synthetic.Name,
		Request: datasets.Request{Params: map[string]string{"rows": fmt.Sprint(n), "seed": fmt.Sprint(seed)}}})
	if err != nil {
		return res, err
	}
	ref := synthetic.Name + "@" + built.Version
	plan, err := ResolveRun(ctx, store, runs.Request{Dataset: ref, Model: "baseline/reference"})
	if err != nil {
		return res, err
	}
	// A fresh seed makes a fresh run (the same plan would reuse a finished one).
	nonce := int(time.Now().UnixNano() % (1 << 31))
	start := time.Now()
	run, p, err := StartEval(ctx, c, cfg, store, workflows.EvaluateModelInput{
		Request: runs.Request{Dataset: ref, Model: "baseline/reference", NoCache: true, Seed: &nonce}, MaxConcurrentShards: shards})
	if err != nil {
		return res, err
	}
	if _, err := WaitEval(ctx, c, run, p.RunID, time.Hour, nil); err != nil {
		return res, err
	}
	res.RunSeconds = time.Since(start).Seconds()
	task := synth.Task{}
	// Gateway-only loop: the same prompts, no cache, same concurrency.
	var samples []scorers.Sample
	for _, f := range plan.Files {
		if err := task.ReadSamples(ctx, store, f.Key, 0, f.Rows, func(s scorers.Sample) error {
			samples = append(samples, s)
			return nil
		}); err != nil {
			return res, err
		}
	}
	env := scorers.Env{Models: gw, Model: "baseline/reference", NoCache: true}
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	start = time.Now()
	var wg sync.WaitGroup
	for range res.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(len(samples)) {
					return
				}
				ref, _ := task.Reference(samples[i])
				if _, err := gw.Complete(ctx, env.Request(ref.Messages, nil)); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	res.GatewaySeconds = time.Since(start).Seconds()
	if firstErr != nil {
		return res, firstErr
	}
	res.GatewayCallsPerS = float64(len(samples)) / res.GatewaySeconds

	res.RunSamplesPerS = float64(n) / res.RunSeconds
	res.Ratio = res.RunSamplesPerS / res.GatewayCallsPerS
	res.RunID = p.RunID
	return res, nil
}
