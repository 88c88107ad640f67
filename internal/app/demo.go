package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"text/tabwriter"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/toolpref"
	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/devstack"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/workflows"
)

// DemoOptions configure the demo.
type DemoOptions struct {
	Dir      string // state directory; a temporary one when empty
	S3       devstack.S3Server
	KeepDir  bool
	Headless bool
}

// demoBenchmark is one benchmark of the demo: its dataset (built from the
// fixtures embedded in the binary, with params) and the baseline models
// evaluated on it.
type demoBenchmark struct {
	dataset string
	params  map[string]string
	models  []string
}

// demoBenchmarks joins each benchmark as soon as it works end to end.
var demoBenchmarks = []demoBenchmark{
	{"bfcl", nil, []string{"baseline/reference", "baseline/noisy-0.3"}},
	{"ifevalcode", nil, []string{"baseline/reference", "baseline/noisy-0.3"}},
	// Preference pairs (a dataset to train reward models on, not evaluated),
	// with candidate replies sampled live from two baseline models at build
	// time next to the bundled example replies and the synthetic ones.
	{"toolpref", map[string]string{"candidates": "baseline/noisy-0.3@0.7x4,baseline/reference@0x1", "pairs": "16"}, nil},
	// trbench: generative judges, then scalar reward models (the same
	// pairs, scored once each; w_avg comparable with the judges').
	{"trbench", nil, []string{"baseline/first", "baseline/second", "baseline/reference",
		"baseline/reward-reference", "baseline/reward-noisy-0.3", "baseline/reward-length"}},
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
	for i, b := range demoBenchmarks {
		src := "embedded://" + b.dataset
		fmt.Fprintf(out, "\n== %s: building the dataset from the bundled fixtures (%s)\n", b.dataset, src)
		if c := b.params["candidates"]; c != "" {
			fmt.Fprintf(out, "sampling candidate replies live at build time from %s (deterministic baselines, not LLMs)\n", c)
		}
		res, err := BuildDataset(ctx, r.Client, r.Stack.Config, workflows.BuildDatasetInput{Dataset: b.dataset, Request: datasets.Request{Source: src, Params: b.params}})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "built %s@%s: %d rows in %d files (s3://%s/%s)\n", res.Dataset, res.Version, res.Rows, res.Files, r.Stack.Config.S3.Bucket, res.ManifestKey)
		if g := res.Generated; g.Units > 0 {
			fmt.Fprintf(out, "sampled %d candidate replies in %d unit(s): %d model calls (%d from cache), %d skipped\n", g.Outputs, g.Units, g.Calls, g.CacheHits, g.Skipped)
		}
		if b.dataset == toolpref.Name {
			if err := printPairSources(ctx, out, r, res); err != nil {
				return err
			}
		}
		if i == 0 {
			m, err := catalog.ReadManifest(ctx, r.Store, res.Dataset, res.Version)
			if err != nil {
				return err
			}
			b, _ := json.MarshalIndent(m, "", "  ")
			fmt.Fprintf(out, "manifest.json:\n%s\n", b)
			again, err := BuildDataset(ctx, r.Client, r.Stack.Config, workflows.BuildDatasetInput{Dataset: res.Dataset, Request: datasets.Request{Source: src}})
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "rebuilt from the same sources: version %s, reused=%v (content-addressed: nothing rewritten)\n", again.Version, again.Reused)
		}
		for _, model := range b.models {
			fmt.Fprintf(out, "\n-- evaluating %s on %s@%s\n", ModelLabel(model), res.Dataset, res.Version)
			run, plan, err := StartEval(ctx, r.Client, r.Stack.Config, r.Store, workflows.EvaluateModelInput{
				Request: runs.Request{Dataset: res.Dataset + "@" + res.Version, Model: model, ShardSize: 100}})
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.4f\t[%.4f, %.4f]\t%d\t%s\n", b.dataset, b.model, m.Name, m.Mean, m.CILow, m.CIHigh, b.s.Samples, b.s.RunID)
	}
	tw.Flush()
	fmt.Fprintf(out, "\nResults are in s3://%s/runs/ (summary.json, summary.parquet, results/*.parquet).\n", r.Stack.Config.S3.Bucket)
	fmt.Fprintln(out, "benchline demo: done. Leaderboards and the other benchmarks join the demo as their issues land.")
	return nil
}

// printPairSources prints how many toolpref pairs each (chosen, rejected)
// source pair has, baselines labelled.
func printPairSources(ctx context.Context, out io.Writer, r *Running, res workflows.BuildDatasetResult) error {
	m, err := catalog.ReadManifest(ctx, r.Store, res.Dataset, res.Version)
	if err != nil {
		return err
	}
	count := map[[2]string]int{}
	for _, f := range m.Files {
		rows, err := pq.ReadAll[schemas.ToolPrefPair](ctx, r.Store, catalog.Dir(m.Name, m.Version)+f.Path)
		if err != nil {
			return err
		}
		for _, row := range rows {
			count[[2]string{ModelLabel(row.ChosenSource), ModelLabel(row.RejectedSource)}]++
		}
	}
	keys := make([][2]string, 0, len(count))
	for k := range count {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i][0] != keys[j][0] {
			return keys[i][0] < keys[j][0]
		}
		return keys[i][1] < keys[j][1]
	})
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHOSEN FROM\tREJECTED FROM\tPAIRS")
	for _, k := range keys {
		fmt.Fprintf(tw, "%s\t%s\t%d\n", k[0], k[1], count[k])
	}
	return tw.Flush()
}
