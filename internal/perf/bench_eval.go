package perf

import (
	"context"
	"fmt"
	"github.com/benchline/benchline/internal/wfclient"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/synthetic"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/config"
	"github.com/benchline/benchline/internal/gateway"
	"github.com/benchline/benchline/internal/registry"
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
	GatewaySeconds   float64 `json:"gateway_seconds"`       // the median pass
	GatewayCallsPerS float64 `json:"gateway_calls_per_sec"` // the median pass
	// GatewayPasses are the calls/s of each of the loop's passes over the
	// prompts; the median is used, so one burst or stall of a busy machine
	// does not decide the ratio.
	GatewayPasses  []float64 `json:"gateway_passes_calls_per_sec"`
	RunSeconds     float64   `json:"run_seconds"`
	RunSamplesPerS float64   `json:"run_samples_per_sec"`
	Ratio          float64   `json:"ratio"` // run samples/s ÷ gateway calls/s
	Concurrency    int       `json:"concurrency"`
	RunID          string    `json:"run_id"`
}

// BenchEval builds a synthetic dataset of n rows, times a full evaluation
// of baseline/reference on it (workflow, gateway, scoring, Parquet, S3),
// then times a gateway-only loop over the same prompts (no cache,
// shards×16 concurrency, three passes, the median counts). The run goes first because it writes the
// references the baseline server answers from.
func BenchEval(ctx context.Context, c client.Client, cfg config.Config, store blob.Store, gw *gateway.Gateway, n int64, shards, seed int) (EvalBench, error) {
	res := EvalBench{Samples: n, Concurrency: shards * 16}
	built, err := wfclient.BuildDataset(ctx, c, cfg, workflows.BuildDatasetInput{Dataset: synthetic.Name,
		Request: datasets.Request{Params: map[string]string{"rows": fmt.Sprint(n), "seed": fmt.Sprint(seed)}}})
	if err != nil {
		return res, err
	}
	ref := synthetic.Name + "@" + built.Version
	plan, err := wfclient.ResolveRun(ctx, store, registry.Default(), runs.Request{Dataset: ref, Model: "baseline/reference"})
	if err != nil {
		return res, err
	}
	// A fresh seed makes a fresh run (the same plan would reuse a finished one).
	nonce := int(time.Now().UnixNano() % (1 << 31))
	start := time.Now()
	run, p, err := wfclient.StartEval(ctx, c, cfg, store, workflows.EvaluateModelInput{
		Request: runs.Request{Dataset: ref, Model: "baseline/reference", NoCache: true, Seed: &nonce}, MaxConcurrentShards: shards})
	if err != nil {
		return res, err
	}
	if _, err := wfclient.WaitEval(ctx, c, run, p.RunID, time.Hour, nil); err != nil {
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
	var secs []float64
	for range gatewayPasses {
		d, err := gatewayPass(ctx, gw, env, task, samples, res.Concurrency)
		if err != nil {
			return res, err
		}
		secs = append(secs, d.Seconds())
		res.GatewayPasses = append(res.GatewayPasses, float64(len(samples))/d.Seconds())
	}
	slices.Sort(secs)
	res.GatewaySeconds = secs[len(secs)/2]
	res.GatewayCallsPerS = float64(len(samples)) / res.GatewaySeconds

	res.RunSamplesPerS = float64(n) / res.RunSeconds
	res.Ratio = res.RunSamplesPerS / res.GatewayCallsPerS
	res.RunID = p.RunID
	return res, nil
}

// gatewayPasses is how many times the gateway loop goes over the prompts.
const gatewayPasses = 3

// gatewayPass makes one call per sample with concurrency callers and
// returns how long it took.
func gatewayPass(ctx context.Context, gw *gateway.Gateway, env scorers.Env, task synth.Task, samples []scorers.Sample, concurrency int) (time.Duration, error) {
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	start := time.Now()
	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() {
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
		})
	}
	wg.Wait()
	return time.Since(start), firstErr
}
