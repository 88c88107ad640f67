package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"text/tabwriter"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/devstack"
	"github.com/benchline/benchline/internal/registry"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/workflows"
)

// DemoOptions configure the demo.
type DemoOptions struct {
	Dir      string // state directory; a temporary one when empty
	S3       devstack.S3Server
	KeepDir  bool
	Headless bool
}

// RunDemo starts the embedded stack, builds every benchmark dataset from the
// fixtures bundled in the binary, evaluates the baseline models on each,
// and prints the scores.
func RunDemo(ctx context.Context, out io.Writer, o DemoOptions, logger *slog.Logger) error {
	dir := o.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "benchline-demo-*")
		if err != nil {
			return err
		}
		dir = d
		if !o.KeepDir {
			defer os.RemoveAll(dir)
		}
	}
	fmt.Fprintf(out, "benchline demo: starting the embedded stack in %s\n", dir)
	r, err := StartStack(ctx, StackOptions{Options: devstack.Options{Dir: dir, S3: o.S3, Headless: o.Headless}}, logger)
	if err != nil {
		return err
	}
	defer r.Stop()
	r.PrintAddresses(out)

	type scored struct {
		dataset, model string
		s              aggregate.Summary
	}
	var board []scored
	for i, b := range demoBenchmarks(registry.Default()) {
		demo := b.Demo
		src := "embedded://" + b.Name()
		fmt.Fprintf(out, "\n== %s: %s\nbuilding the dataset from the bundled fixtures (%s)\n", b.Name(), b.Description, src)
		if demo.Note != "" {
			fmt.Fprintln(out, demo.Note)
		}
		res, err := BuildDataset(ctx, r.Client, r.Stack.Config, workflows.BuildDatasetInput{Dataset: b.Name(), Request: datasets.Request{Source: src, Params: demo.Params}})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "built %s@%s: %d rows in %d files (s3://%s/%s)\n", res.Dataset, res.Version, res.Rows, res.Files, r.Stack.Config.S3.Bucket, res.ManifestKey)
		if g := res.Generated; g.Units > 0 {
			fmt.Fprintf(out, "generated %d outputs in %d unit(s) at build time: %d model calls (%d from cache), %d skipped\n", g.Outputs, g.Units, g.Calls, g.CacheHits, g.Skipped)
		}
		m, err := catalog.ReadManifest(ctx, r.Store, res.Dataset, res.Version)
		if err != nil {
			return err
		}
		if demo.Describe != nil {
			if err := demo.Describe(ctx, benchmark.DescribeEnv{Store: r.Store, Out: out, Label: ModelLabel}, m); err != nil {
				return err
			}
		}
		if i == 0 {
			b, _ := json.MarshalIndent(m, "", "  ")
			fmt.Fprintf(out, "manifest.json:\n%s\n", b)
			again, err := BuildDataset(ctx, r.Client, r.Stack.Config, workflows.BuildDatasetInput{Dataset: res.Dataset, Request: datasets.Request{Source: src, Params: demo.Params}})
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "rebuilt from the same sources: version %s, reused=%v (content-addressed: nothing rewritten)\n", again.Version, again.Reused)
		}
		for _, model := range demo.Models {
			fmt.Fprintf(out, "\n-- evaluating %s on %s@%s\n", ModelLabel(model), res.Dataset, res.Version)
			run, plan, err := StartEval(ctx, r.Client, r.Stack.Config, r.Store, workflows.EvaluateModelInput{
				Request: runs.Request{Dataset: res.Dataset + "@" + res.Version, Model: model, Judges: demo.Judges, ShardSize: 100}})
			if err != nil {
				return err
			}
			ev, err := WaitEval(ctx, r.Client, run, plan.RunID, 1<<62, nil)
			if err != nil {
				return err
			}
			PrintSummary(out, ev.Summary)
			board = append(board, scored{res.Dataset, model, ev.Summary})
		}
	}

	fmt.Fprintln(out, "\n== scores (all models here are deterministic baselines, not LLMs)")
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DATASET\tMODEL\tMETRIC\tMEAN\t95% CI\tSAMPLES\tRUN")
	for _, b := range board {
		if len(b.s.Metrics) == 0 {
			continue
		}
		m := b.s.Metrics[0]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", b.dataset, b.model, m.Name, m.MeanText(), m.CIText(), b.s.Samples, b.s.RunID)
	}
	tw.Flush()
	fmt.Fprintf(out, "\nResults are in s3://%s/runs/ (summary.json, summary.parquet, results/*.parquet).\n", r.Stack.Config.S3.Bucket)
	fmt.Fprintln(out, "benchline demo: done. Leaderboards and the other benchmarks join the demo as their issues land.")
	return nil
}

// demoBenchmarks are the registered benchmarks the demo runs, in list order.
func demoBenchmarks(reg *registry.Registry) []benchmark.Benchmark {
	var out []benchmark.Benchmark
	for _, b := range reg.All() {
		if b.Demo != nil {
			out = append(out, b)
		}
	}
	return out
}
