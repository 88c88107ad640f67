package devstack

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/benchline/benchline/internal/wfclient"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/limits"
	"github.com/benchline/benchline/internal/registry"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/scorers/lmeval"
	"github.com/benchline/benchline/scorers/promptfoo"
	"github.com/benchline/benchline/workflows"
)

// DemoOptions configure the demo.
type DemoOptions struct {
	// Dir is the state directory [DefaultDemoDir()]. It is kept, so a
	// second demo reuses the datasets, runs and board stamps of the first.
	Dir string
	// Fresh deletes the state directory first.
	Fresh    bool
	S3       S3Server
	Headless bool
}

// DefaultDemoDir is where the demo keeps its state: $BENCHLINE_CACHE/demo
// (~/.cache/benchline/demo).
func DefaultDemoDir() string { return filepath.Join(CacheDir(), "demo") }

// DemoBoard is the name of the demo's board.
const DemoBoard = "demo"

// RunDemo starts the embedded stack on the demo's state directory, builds
// every benchmark dataset from the fixtures bundled in the binary,
// evaluates the baseline models on each, writes a board file for them,
// refreshes the board twice (the second refresh reuses everything) and
// copies the board's site out of the store into the state directory. The
// first benchmark's version is also published as a release in DIR/releases.
// Datasets are content-addressed and runs are their plans, so a second
// demo on the same directory builds and evaluates nothing again.
func RunDemo(ctx context.Context, out io.Writer, o DemoOptions, logger *slog.Logger) error {
	dir := o.Dir
	if dir == "" {
		dir = DefaultDemoDir()
	}
	if o.Fresh {
		fmt.Fprintf(out, "benchline demo: --fresh: deleting %s\n", dir)
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	fmt.Fprintf(out, "benchline demo: starting the embedded stack in %s (kept: a second demo reuses its datasets and runs)\n", dir)
	r, err := StartStack(ctx, StackOptions{Options: Options{Dir: dir, S3: o.S3, Headless: o.Headless}}, logger)
	if err != nil {
		return err
	}
	defer r.Stop()
	r.PrintAddresses(out)
	return Demo(ctx, out, r, dir)
}

// Demo is the demo's work on a running stack (RunDemo's after start-up):
// every demo benchmark built and evaluated, the batch-mode run, the board
// refreshed twice and its site copied into dir/site/demo; dir also holds
// the board file and the published release. The integration tests run it
// on their stack and open every page of the board it writes.
func Demo(ctx context.Context, out io.Writer, r *Running, dir string) error {
	cfg := r.Stack.Config
	board := leaderboard.Board{Name: DemoBoard, Title: "benchline demo: every benchmark's fixtures, deterministic baselines (not LLMs)", ShardSize: demoShardSize}
	models := map[string]bool{}
	batchShown := false
	for i, b := range demoBenchmarks(registry.Default()) {
		demo := b.Demo
		src := "embedded://" + b.Name()
		fmt.Fprintf(out, "\n== %s: %s\nbuilding the dataset from the bundled fixtures (%s)\n", b.Name(), b.Description, src)
		if demo.Note != "" {
			fmt.Fprintln(out, demo.Note)
		}
		res, err := wfclient.BuildDataset(ctx, r.Client, cfg, workflows.BuildDatasetInput{Dataset: b.Name(), Request: datasets.Request{Source: src, Params: demo.Params}})
		if err != nil {
			return err
		}
		how := "built"
		if res.Reused {
			how = "reused (built by an earlier demo: same sources, same version)"
		}
		fmt.Fprintf(out, "%s %s@%s: %d rows in %d files (s3://%s/%s)\n", how, res.Dataset, res.Version, res.Rows, res.Files, cfg.S3.Bucket, res.ManifestKey)
		if g := res.Generated; g.Units > 0 {
			fmt.Fprintf(out, "generated %d outputs in %d unit(s) at build time: %d model calls (%d from cache), %d skipped\n", g.Outputs, g.Units, g.Calls, g.CacheHits, g.Skipped)
		}
		m, err := catalog.ReadManifest(ctx, r.Store, res.Dataset, res.Version)
		if err != nil {
			return err
		}
		if demo.Describe != nil {
			if err := demo.Describe(ctx, benchmark.DescribeEnv{Store: r.Store, Out: out, Label: wfclient.ModelLabel}, m); err != nil {
				return err
			}
		}
		if i == 0 {
			b, _ := json.MarshalIndent(m, "", "  ")
			fmt.Fprintf(out, "manifest.json:\n%s\n", b)
			again, err := wfclient.BuildDataset(ctx, r.Client, cfg, workflows.BuildDatasetInput{Dataset: res.Dataset, Request: datasets.Request{Source: src, Params: demo.Params}})
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "rebuilt from the same sources: version %s, reused=%v (content-addressed: nothing rewritten)\n", again.Version, again.Reused)
			if err := demoPublish(ctx, out, r, dir, res.Dataset+"@"+res.Version); err != nil {
				return err
			}
		}
		if len(demo.Models) == 0 || b.NewTask == nil {
			continue
		}
		for _, model := range demo.Models {
			if !models[model] {
				models[model] = true
				board.Models = append(board.Models, leaderboard.Model{Model: model})
			}
			req := runs.Request{Dataset: res.Dataset + "@" + res.Version, Model: model, Judges: demo.Judges, ShardSize: demoShardSize}
			sum, err := demoEval(ctx, out, r, req)
			if err != nil {
				return err
			}
			if !batchShown {
				// The first benchmark's first model, again in batch mode.
				batchShown = true
				if err := demoBatch(ctx, out, r, req, sum); err != nil {
					return err
				}
			}
		}
		board.Benchmarks = append(board.Benchmarks, leaderboard.BoardBenchmark{Dataset: res.Dataset, Version: res.Version,
			Judges: demo.Judges, Models: demo.Models})
	}
	if err := demoTaskFiles(ctx, out, r, dir, &board, models); err != nil {
		return err
	}
	if _, err := DemoSuites(ctx, out, r, dir, &board, models); err != nil {
		return err
	}
	return demoBoard(ctx, out, r, dir, board)
}

// demoTasks are the demo's task files (docs/tasks.md), with their data:
// benchmarks written as YAML, built and evaluated like the built-in ones.
//
//go:embed demotasks
var demoTasks embed.FS

// demoTaskModels are the baselines evaluated on each demo task file.
var demoTaskModels = []string{"baseline/reference", "baseline/noisy-0.3"}

// demoTaskFiles writes the demo's task files into dir/tasks (where a user
// can edit them and see `benchline task check` on them), builds each with
// `dataset build --task`, evaluates the baselines and adds them to board.
func demoTaskFiles(ctx context.Context, out io.Writer, r *Running, dir string, board *leaderboard.Board, models map[string]bool) error {
	root := filepath.Join(dir, "tasks")
	if err := writeEmbedded(demoTasks, "demotasks", root); err != nil {
		return fmt.Errorf("demo: task files: %w", err)
	}
	entries, err := fs.ReadDir(demoTasks, "demotasks")
	if err != nil {
		return fmt.Errorf("demo: task files: %w", err)
	}
	for _, e := range entries {
		file, err := filepath.Abs(filepath.Join(root, e.Name(), "task.yaml"))
		if err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		how := fmt.Sprintf("building the benchmark a task file defines (benchline dataset build --task %s)", file)
		if _, err := demoTaskFile(ctx, out, r, file, how, "", nil, demoTaskModels, board, models); err != nil {
			return err
		}
	}
	return nil
}

// demoTaskFile builds the task file, evaluates models on it and adds it
// to board: how says how it was made, wrote what was written on the way
// (printed after the heading). The judges are the runs' (nil: a judged
// task file's own panel). It returns each model's run summary.
func demoTaskFile(ctx context.Context, out io.Writer, r *Running, file, how, wrote string, judges map[string]string, taskModels []string, board *leaderboard.Board, models map[string]bool) (map[string]aggregate.Summary, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	var head struct {
		Name        string `yaml:"name"`
		Description string `yaml:"description"`
		Scorers     []struct {
			Judges []string `yaml:"judges"`
		} `yaml:"scorers"`
	}
	if err := yaml.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("demo: %s: %w", file, err)
	}
	fmt.Fprintf(out, "\n== %s: %s\n%s\n", head.Name, head.Description, how)
	if wrote != "" {
		fmt.Fprintln(out, wrote)
	}
	res, err := wfclient.BuildDataset(ctx, r.Client, r.Stack.Config, workflows.BuildDatasetInput{Dataset: head.Name, Request: datasets.Request{Source: file, Task: true}})
	if err != nil {
		return nil, err
	}
	built := "built"
	if res.Reused {
		built = "reused (built by an earlier demo: same task file and data, same version)"
	}
	fmt.Fprintf(out, "%s %s@%s: %d rows in %d files (s3://%s/%s)\n", built, res.Dataset, res.Version, res.Rows, res.Files, r.Stack.Config.S3.Bucket, res.ManifestKey)
	if s := datasets.SkipSummary(res.Stats); s != "" {
		fmt.Fprintln(out, s)
	}
	// A judged task file's default panel is evaluated as the run's
	// judges (--judge judge=...), so that the run reports the panel's
	// agreement as the built-in judged benchmarks' runs do.
	if judges == nil {
		for _, sc := range head.Scorers {
			if len(sc.Judges) > 0 {
				judges = map[string]string{judge.RoleJudge: judge.NormalPanel(strings.Join(sc.Judges, ","))}
				fmt.Fprintf(out, "judged by the task file's panel: --judge judge=%s\n", judges[judge.RoleJudge])
				break
			}
		}
	}
	sums := map[string]aggregate.Summary{}
	for _, model := range taskModels {
		if !models[model] {
			models[model] = true
			board.Models = append(board.Models, leaderboard.Model{Model: model})
		}
		sum, err := demoEval(ctx, out, r, runs.Request{Dataset: res.Dataset + "@" + res.Version, Model: model, Judges: judges, ShardSize: demoShardSize})
		if err != nil {
			return nil, err
		}
		sums[model] = sum
	}
	board.Benchmarks = append(board.Benchmarks, leaderboard.BoardBenchmark{Dataset: res.Dataset, Version: res.Version, Models: taskModels, Judges: judges})
	return sums, nil
}

// writeEmbedded writes the files under fsys's folder from into the
// folder to, as they are laid out there.
func writeEmbedded(fsys embed.FS, from, to string) error {
	return fs.WalkDir(fsys, from, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fsys.ReadFile(p)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, filepath.FromSlash(strings.TrimPrefix(p, from+"/")))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
}

// demoSuites are the demo's benchmarks written for other tools (by us,
// CC0): an lm-evaluation-harness task YAML with its data in a Hugging
// Face-layout folder (demosuites/lmeval) and a promptfoo config with its
// tests in a CSV file (demosuites/promptfoo).
//
//go:embed demosuites
var demoSuites embed.FS

// The demo's lm-evaluation-harness task, its dataset_path and the
// folder of its data (in DIR/suites/lmeval).
const (
	demoLMEvalTask = "demo_shop_math.yaml"
	demoLMEvalPath = "benchline/demo-shop-math"
	demoLMEvalData = "demo-shop-math"
)

// demoPromptfooModels are the baselines evaluated on the promptfoo config,
// which holds no reference answers: baseline/echo repeats the prompt (the
// model the promptfoo comparison tests run), baseline/reference has no
// answer to give.
var demoPromptfooModels = []string{"baseline/echo", "baseline/reference"}

// demoPromptfooJudges grade the config's llm-rubric assertions.
var demoPromptfooJudges = map[string]string{judge.RoleJudge: "baseline/judge"}

// demoFileBytes bounds a file the demo's suites read: a task file's
// limit (scorers/taskfile.MaxFileBytes).
const demoFileBytes = 1 << 20

func demoReadFile(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return limits.ReadFile(f, file, demoFileBytes)
}

// DemoSuites writes the demo's lm-evaluation-harness task and promptfoo
// config (with their data) into dir/suites, builds each as `benchline
// dataset build --task` does (the same conversions: lmeval.WriteBeside,
// promptfoo.WriteBeside), evaluates the baselines on each and adds both to
// board. It returns the runs' summaries by dataset and model.
func DemoSuites(ctx context.Context, out io.Writer, r *Running, dir string, board *leaderboard.Board, models map[string]bool) (map[string]map[string]aggregate.Summary, error) {
	root, err := filepath.Abs(filepath.Join(dir, "suites"))
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	if err := writeEmbedded(demoSuites, "demosuites", root); err != nil {
		return nil, fmt.Errorf("demo: suites: %w", err)
	}
	sums := map[string]map[string]aggregate.Summary{}

	// The lm-evaluation-harness task, its dataset_path given as a user
	// gives it: --data DATASET_PATH=DIR.
	task := filepath.Join(root, "lmeval", demoLMEvalTask)
	data := filepath.Join(root, "lmeval", demoLMEvalData)
	conv, err := lmeval.WriteBeside(task, demoReadFile, map[string]string{demoLMEvalPath: data})
	if err != nil {
		return nil, err
	}
	how := fmt.Sprintf("building an lm-evaluation-harness task YAML on its Hugging Face-layout data folder (benchline dataset build --task %s --data %s=%s)", task, demoLMEvalPath, data)
	wrote := fmt.Sprintf("wrote %s (the lm-evaluation-harness task as a task file, beside its data): one metric per filter pipeline, exact_match,strict-match and exact_match,flexible-extract;\n"+
		"baseline/reference replies with doc_to_target, the worked answer ending \"#### N\", which both pipelines read (a reply without \"#### \" scores 0 on strict-match)", conv)
	s, err := demoTaskFile(ctx, out, r, conv, how, wrote, nil, demoTaskModels, board, models)
	if err != nil {
		return nil, err
	}
	sums[board.Benchmarks[len(board.Benchmarks)-1].Dataset] = s

	// The promptfoo config: written as a task file and its rows beside it.
	cfg := filepath.Join(root, "promptfoo", "promptfooconfig.yaml")
	raw, err := demoReadFile(cfg)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	conv, err = promptfoo.WriteBeside(cfg, raw)
	if err != nil {
		return nil, err
	}
	how = fmt.Sprintf("building a promptfoo config, its tests in a CSV file (benchline dataset build --task %s)", cfg)
	wrote = fmt.Sprintf("wrote %s (the promptfoo config as a task file, its samples in %s): metrics pass and score per test, as promptfoo grades them;\n"+
		"its llm-rubric assertions are graded by the run's judges (--judge judge=%s). A promptfoo config holds no reference answers: baseline/echo repeats\n"+
		"the prompt (so it names the product and its price), baseline/reference has no answer to give and fails the tests that need one",
		conv, strings.TrimSuffix(conv, ".task.yaml")+".rows.jsonl", demoPromptfooJudges[judge.RoleJudge])
	s, err = demoTaskFile(ctx, out, r, conv, how, wrote, demoPromptfooJudges, demoPromptfooModels, board, models)
	if err != nil {
		return nil, err
	}
	sums[board.Benchmarks[len(board.Benchmarks)-1].Dataset] = s
	return sums, nil
}

// demoPublish publishes a dataset version as a release in the demo's
// state directory (DIR/releases), the layout Hugging Face datasets, DuckDB
// and Polars read (benchline dataset publish).
func demoPublish(ctx context.Context, out io.Writer, r *Running, dir, ref string) error {
	dest, err := filepath.Abs(filepath.Join(dir, "releases"))
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	fmt.Fprintf(out, "publishing %s as a release (benchline dataset publish %s --to %s)\n", ref, ref, dest)
	res, err := wfclient.PublishDataset(ctx, r.Client, r.Stack.Config, workflows.PublishDatasetInput{Ref: ref, Dest: dest})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "released %s@%s: %d files, %d rows, every sha256 verified after the copy: %s (README.md is its dataset card)\n",
		res.Dataset, res.Version, res.Files, res.Rows, res.Release)
	return nil
}

// demoShardSize is the shard size of the demo's runs (the fixtures are
// small: several shards show the fan-out).
const demoShardSize = 100

// demoEval evaluates one model on a dataset version, or says the run was
// finished by an earlier demo and reuses it; it returns the run's summary.
func demoEval(ctx context.Context, out io.Writer, r *Running, req runs.Request) (aggregate.Summary, error) {
	cfg := r.Stack.Config
	var sum aggregate.Summary
	plan, err := wfclient.ResolveRun(ctx, r.Store, registry.Default(), req)
	if err != nil {
		return sum, err
	}
	mode := ""
	if req.Batch {
		mode = " in batch mode (benchline eval --batch)"
	}
	if err := blob.GetJSON(ctx, r.Store, runs.SummaryKey(plan.RunID), &sum); err == nil {
		fmt.Fprintf(out, "\n-- %s on %s%s: run %s finished in an earlier demo, reused\n", wfclient.ModelLabel(req.Model), req.Dataset, mode, plan.RunID)
		return sum, nil
	} else if !errors.Is(err, blob.ErrNotFound) {
		return sum, err
	}
	fmt.Fprintf(out, "\n-- evaluating %s on %s%s (run %s, %d samples)\n", wfclient.ModelLabel(req.Model), req.Dataset, mode, plan.RunID, plan.Samples)
	run, err := wfclient.StartPlanned(ctx, r.Client, cfg, plan, workflows.EvaluateModelInput{Request: req})
	if err != nil {
		return sum, err
	}
	ev, err := wfclient.WaitEval(ctx, r.Client, run, plan.RunID, 1<<62, nil)
	if err != nil {
		return sum, err
	}
	wfclient.PrintSummary(out, ev.Summary)
	return ev.Summary, nil
}

// demoBatch evaluates the model of an interactive demo run again in batch
// mode (another seed: another run, whose requests go to the baseline
// server's batch endpoints) and prints both runs' costs side by side.
func demoBatch(ctx context.Context, out io.Writer, r *Running, req runs.Request, inter aggregate.Summary) error {
	seed := 1
	req.Batch, req.Seed = true, &seed
	b, err := demoEval(ctx, out, r, req)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "cost side by side: interactive run %s $%.4f for %d+%d tokens; batch run %s $%.4f for %d+%d tokens at batch prices\n",
		inter.RunID, inter.CostUSD, inter.PromptTokens, inter.CompletionTokens, b.RunID, b.CostUSD, b.PromptTokens, b.CompletionTokens)
	fmt.Fprintln(out, "(the baseline provider's prices are 0; at a priced provider the batch run costs its batch.discount, 0.5 by default, of the interactive one: docs/batch.md)")
	return nil
}

// demoBoard writes the demo's board file, refreshes the board twice,
// prints its cells and copies its site into the state directory.
func demoBoard(ctx context.Context, out io.Writer, r *Running, dir string, board leaderboard.Board) error {
	cfg := r.Stack.Config
	text, err := leaderboard.MarshalBoard(board)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "demo-board.yaml")
	if err := os.WriteFile(path, text, 0o644); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	b, err := leaderboard.ReadBoard(path, registry.Default())
	if err != nil {
		return err
	}
	if err := wfclient.CheckBoard(cfg, b); err != nil {
		return err
	}
	fmt.Fprintf(out, "\n== the demo board: %s (%d benchmarks, %d models)\n", path, len(b.Benchmarks), len(b.Models))
	var last workflows.RefreshLeaderboardResult
	for i, what := range []string{"refreshing it", "refreshing it again: everything is reused, nothing is paid twice"} {
		fmt.Fprintf(out, "%s (benchline leaderboard refresh %s)\n", what, path)
		run, err := wfclient.StartRefresh(ctx, r.Client, cfg, workflows.RefreshLeaderboardInput{Board: b})
		if err != nil {
			return err
		}
		shown := ""
		res, err := wfclient.WatchRefresh(ctx, r.Client, run, 2*time.Second, func(p workflows.RefreshProgress) {
			if line := wfclient.RefreshProgressLine(p); line != shown {
				fmt.Fprintln(out, "  "+line)
				shown = line
			}
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "refresh %d: stamp %s: %d runs started, %d reused, %d model calls paid\n", i+1, res.Stamp, res.RunsStarted, res.RunsReused, res.ModelCalls)
		fmt.Fprintf(out, "  changes: %s\n", res.Changes)
		for _, f := range res.Failed {
			fmt.Fprintf(out, "  failed: %s on %s: %s\n", wfclient.ModelLabel(f.Model), f.Dataset, f.Error)
		}
		last = res
		if i == 0 {
			time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second))) // stamps have seconds
		}
	}
	if last.RunsStarted != 0 || last.ModelCalls != 0 {
		return fmt.Errorf("demo: the second refresh started %d runs and paid %d model calls; want none", last.RunsStarted, last.ModelCalls)
	}
	var s leaderboard.Scores
	if err := blob.GetJSON(ctx, r.Store, leaderboard.ScoresKey(b.Name, last.Stamp), &s); err != nil {
		return err
	}
	fmt.Fprintf(out, "\n== scores of board %s, stamp %s (all models here are deterministic baselines, not LLMs)\n", s.Board, s.Stamp)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DATASET\tMODEL\tMETRIC\tMEAN\t95% CI\tN\tRANK\tRUN")
	for _, c := range s.Cells {
		m := aggregate.MetricStat{Name: c.Metric, N: int(c.N), Mean: c.Mean, CILow: c.CILow, CIHigh: c.CIHigh}
		rank := fmt.Sprint(c.RankLow)
		if c.RankHigh != c.RankLow {
			rank = fmt.Sprintf("%d-%d", c.RankLow, c.RankHigh)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", c.Dataset, c.Model, c.Metric, m.MeanText(), m.CIText(), c.N, rank, c.RunID)
	}
	tw.Flush()

	local := filepath.Join(dir, "site", b.Name)
	n, err := exportPrefix(ctx, r.Store, leaderboard.SiteKey(b.Name, last.Stamp)+"/", local)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nThe board: %s/ (stamp %s: scores.json, scores.parquet, site/)\n", wfclient.StoreURI(cfg, leaderboard.Prefix(b.Name, last.Stamp)), last.Stamp)
	fmt.Fprintf(out, "Its site, copied here (%d files): %s\n", n, filepath.Join(local, "index.html"))
	fmt.Fprintf(out, "To serve every board from the demo's stack, start it again on the same state and point the server at it:\n")
	fmt.Fprintf(out, "  bin/benchline dev --dir %s --temporal-port 0 --ui-port 0 --s3-port 0 --baseline-port 0 --env-file %s\n", dir, filepath.Join(dir, "dev.env"))
	fmt.Fprintf(out, "  (another shell) set -a; . %s; set +a; bin/benchline leaderboard serve --addr 127.0.0.1:8080\n", filepath.Join(dir, "dev.env"))
	fmt.Fprintf(out, "Runs are in %s (summary.json, summary.parquet, results/*.parquet).\n", wfclient.StoreURI(cfg, "runs/"))
	fmt.Fprintln(out, "benchline demo: done. Run it again: everything is reused.")
	return nil
}

// exportPrefix copies every object under prefix into dir (emptied first),
// keeping the paths below prefix; it returns the number of files.
func exportPrefix(ctx context.Context, store blob.Store, prefix, dir string) (int, error) {
	infos, err := store.List(ctx, prefix)
	if err != nil {
		return 0, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return 0, fmt.Errorf("demo: %w", err)
	}
	for _, in := range infos {
		rel := strings.TrimPrefix(in.Key, prefix)
		if rel == "" || strings.Contains(rel, "..") {
			continue
		}
		b, err := blob.GetBytes(ctx, store, in.Key)
		if err != nil {
			return 0, err
		}
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return 0, fmt.Errorf("demo: %w", err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return 0, fmt.Errorf("demo: %w", err)
		}
	}
	return len(infos), nil
}

// demoBenchmarks are the registered benchmarks the demo runs, in list order.
func demoBenchmarks(reg *benchmark.Registry) []benchmark.Benchmark {
	var out []benchmark.Benchmark
	for _, b := range reg.All() {
		if b.Demo != nil {
			out = append(out, b)
		}
	}
	return out
}
