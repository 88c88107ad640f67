package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/benchline/benchline/internal/config"
	"github.com/benchline/benchline/internal/wfclient"
	"go.temporal.io/sdk/client"

	"github.com/spf13/cobra"

	"github.com/benchline/benchline/internal/app"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/workflows"
)

func newEvalCmd(g *globals) *cobra.Command {
	var (
		req                     runs.Request
		judges                  []string
		temperature             float32
		maxTokens, seed, shards int
		asJSON, noWait, rerun   bool
		scheduled               bool
	)
	cmd := &cobra.Command{
		Use:   "eval --dataset NAME[@VERSION] --model PROVIDER/MODEL",
		Short: "Evaluate a model on a dataset version (starts or attaches to the EvaluateModel workflow)",
		Long: `eval plans a run (dataset version pinned by its manifest, model, judges, generation
parameters, scorer version, seed), fans out shard activities, and aggregates the results
with bootstrap confidence intervals. The same plan started again attaches to the running
evaluation, or reuses the finished one. Models are "<provider>/<model>": baseline/reference,
baseline/noisy-0.3 (deterministic baselines, not LLMs), openai/gpt-4o-mini, ... A model its
provider lists under reward_models is a scalar reward model (vLLM's pooling API; trbench
scores it, e.g. baseline/reward-reference); see docs/gateway.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFlags(cmd,
				flagRule{"temperature", temperature >= 0, "want 0 or more"},
				flagRule{"max-tokens", maxTokens >= 0, "want 0 (the endpoint's) or more"},
				flagRule{"shard-size", !cmd.Flags().Changed("shard-size") || req.ShardSize >= 1, "want at least 1"},
				flagRule{"limit", req.Limit >= 0, "want 0 (all) or more"},
				atLeast("parallel", shards, 1),
			); err != nil {
				return err
			}
			cfg, err := g.load()
			if err != nil {
				return err
			}
			js, names, err := wfclient.ParseJudges(judges)
			if err != nil {
				return err
			}
			req.Judges = js
			names = append([]wfclient.ModelName{{Flag: "--model", Given: req.Model, Model: req.Model}}, names...)
			if err := wfclient.CheckModels(cfg, names...); err != nil {
				return err
			}
			if cmd.Flags().Changed("temperature") {
				req.Params.Temperature = &temperature
			}
			req.Params.MaxTokens = maxTokens
			if cmd.Flags().Changed("seed") {
				req.Seed = &seed
			}
			ctx := cmd.Context()
			c, err := app.Dial(cfg, g.logger())
			if err != nil {
				return err
			}
			defer c.Close()
			store, err := app.OpenStore(ctx, cfg)
			if err != nil {
				return err
			}
			in := workflows.EvaluateModelInput{Request: req, RerunErrors: rerun, MaxConcurrentShards: shards}
			if req.Batch && !cmd.Flags().Changed("parallel") {
				in.MaxConcurrentShards = 0 // the workflow's batch default: many shards wait at once
			}
			if scheduled {
				in.Priority = workflows.PriorityScheduled
			}
			run, plan, err := wfclient.StartEval(ctx, c, cfg, store, in)
			if err != nil {
				return err
			}
			errw := cmd.ErrOrStderr()
			fmt.Fprintln(errw, resolvedLine(ctx, store, req.Dataset, plan.Dataset, plan.DatasetVersion))
			fmt.Fprintf(errw, "run %s: %s@%s (%d samples in %d shards), model %s\n", plan.RunID, plan.Dataset, plan.DatasetVersion, plan.Samples, plan.Shards, wfclient.ModelLabel(plan.Model))
			if noWait {
				fmt.Fprintln(cmd.OutOrStdout(), plan.RunID)
				return nil
			}
			return waitAndReport(cmd, c, cfg, run, plan, asJSON)
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.Dataset, "dataset", "", "dataset name, optionally @version (default: latest)")
	f.StringVar(&req.Model, "model", "", "model under test, <provider>/<model>")
	f.StringArrayVar(&judges, "judge", nil, "judge model, [role=]<provider>/<model>[,<provider>/<model>...] (repeatable; several models for one role form a panel)")
	f.Float32Var(&temperature, "temperature", 0, "sampling temperature (default: the endpoint's)")
	f.IntVar(&maxTokens, "max-tokens", 0, "max completion tokens (default: the endpoint's)")
	f.IntVar(&seed, "seed", 0, "seed sent with every request and used for the bootstrap")
	f.IntVar(&req.ShardSize, "shard-size", 0, "samples per shard (default 500; with --batch, as many as hold 4 MiB of the dataset's Parquet, 500 to 10000)")
	f.Int64Var(&req.Limit, "limit", 0, "evaluate only the first N samples")
	f.BoolVar(&req.NoCache, "no-cache", false, "bypass the response cache")
	f.BoolVar(&req.Batch, "batch", false, "send requests through the providers' batch APIs (cheaper, answers within the batch window; see docs/batch.md)")
	f.BoolVar(&rerun, "rerun-errors", false, "re-evaluate samples of a finished run that failed for infrastructure reasons")
	f.IntVar(&shards, "parallel", 8, "shards evaluated at once")
	f.BoolVar(&scheduled, "scheduled", false, "run at scheduled priority (behind on-demand runs)")
	f.BoolVar(&asJSON, "json", false, "print the summary as JSON")
	f.BoolVar(&noWait, "no-wait", false, "start the run, print its id and return")
	_ = cmd.MarkFlagRequired("dataset")
	_ = cmd.MarkFlagRequired("model")
	return cmd
}

// waitAndReport follows an evaluation until it ends, with a progress line
// on stderr (rewritten in place on a terminal), then prints its summary,
// as text or JSON, and where its results are.
func waitAndReport(cmd *cobra.Command, c client.Client, cfg config.Config, run client.WorkflowRun, plan runs.Plan, asJSON bool) error {
	ctx, errw := cmd.Context(), cmd.ErrOrStderr()
	tty := isTerminal(os.Stderr)
	every := 5 * time.Second
	if tty {
		every = time.Second
	}
	res, err := wfclient.WaitEval(ctx, c, run, plan.RunID, every, func(p workflows.Progress) {
		if tty {
			fmt.Fprintf(errw, "\r%s", wfclient.ProgressLine(p, time.Now()))
		} else {
			fmt.Fprintln(errw, wfclient.ProgressLine(p, time.Now()))
		}
	})
	if tty {
		fmt.Fprintln(errw)
	}
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(res.Summary)
	}
	wfclient.PrintSummary(cmd.OutOrStdout(), res.Summary)
	fmt.Fprintf(cmd.OutOrStdout(), "results: s3://%s/%s\n", cfg.S3.Bucket, runs.Dir(plan.RunID))
	return nil
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// resolvedLine says which version, how many rows and which build
// parameters a --dataset ref resolved to, e.g. "dataset reporteval
// (latest) resolved to reporteval@0123abcd (100 rows, built
// 2026-11-27T09:00:00Z): builder parameters reports=score".
func resolvedLine(ctx context.Context, store blob.Store, ref, name, version string) string {
	given := ref
	if !strings.Contains(ref, "@") {
		given += " (latest)"
	}
	line := fmt.Sprintf("dataset %s resolved to %s@%s", given, name, version)
	m, err := catalog.ReadManifest(ctx, store, name, version)
	if err != nil {
		return line
	}
	line += fmt.Sprintf(" (%s rows, built %s)", catalog.Thousands(m.Rows), m.CreatedAt.UTC().Format(time.RFC3339))
	var ps []string
	for k, v := range m.Params {
		ps = append(ps, k+"="+v)
	}
	sort.Strings(ps)
	switch {
	case len(ps) == 0:
		line += ": no builder parameters"
	default:
		line += ": builder parameters " + strings.Join(ps, ", ")
	}
	if m.Variant {
		line += " (a variant)"
	}
	return line
}
