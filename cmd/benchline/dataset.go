package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/benchline/benchline/internal/wfclient"

	"github.com/spf13/cobra"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/app"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/registry"
	"github.com/benchline/benchline/scorers/promptfoo"
	"github.com/benchline/benchline/workflows"
)

func newDatasetCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "dataset", Short: "Build, publish, list and show dataset versions"}
	cmd.AddCommand(newDatasetBuildCmd(g), newDatasetPublishCmd(g), newDatasetLsCmd(g), newDatasetShowCmd(g))
	return cmd
}

func newDatasetBuildCmd(g *globals) *cobra.Command {
	var src string
	var params []string
	var maxPar int
	var asJSON bool
	var as, taskFile string
	var data []string
	cmd := &cobra.Command{
		Use:   "build NAME --source <dir|url> | build --task FILE",
		Short: "Build a dataset version from sources with the BuildDataset workflow, and wait for it",
		Long: `build starts the BuildDataset workflow on the configured Temporal and waits.
Sources: a local directory, an http(s) URL, an s3://bucket/prefix URL, or
embedded://<name> for the fixtures bundled in the binary (the default).
A version is content-addressed: building the same sources again reuses it.
latest names the last build without --param (the benchmark's default
parameters; runtime settings such as a throttle do not count), a reused older
version or a smaller one included: the output says what latest named before
and after ("latest: NAME@OLD (N rows) -> NAME@NEW (M rows)"), with a WARNING
line when it shrank or moved back to a version built earlier. A build with
parameters is a variant, reached as NAME@VERSION or by the tag --as gives it
(NAME@TAG). Files and categories the benchmark does not support are skipped
and counted ("skipped ..." below, the manifest's stats and the card), and so
is an item whose own data is malformed, named by its id (bfcl, toolpref,
trbench); a file that is bad as a whole fails the build naming file and line.
Builders that call models (toolpref with --param candidates=MODEL@TEMPERATURE[xCOUNT],...)
use the workers' model gateway; a reused version calls no model.
With --task FILE, the dataset is the benchmark a task file defines (docs/tasks.md): its
name is the file's, its data the files it names; the version covers the task file and
the data, and workers started before the file was written evaluate it. An lm-evaluation-harness
task YAML is built with --data DATASET_PATH=DIR: it is written as a task file beside its data
(in the folder holding DIR, or FILE's folder: TASK.task.yaml, as benchline task convert writes
it), then built.

Datasets:
` + datasetList(),
		Args: cobra.RangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := g.load()
			if err != nil {
				return err
			}
			var req datasets.Request
			if taskFile != "" {
				if len(args) > 0 || src != "" || len(params) > 0 {
					return fmt.Errorf("--task FILE names the dataset and its data: give no NAME, --source or --param with it")
				}
				if len(data) > 0 {
					// An lm-evaluation-harness task: written as a task file
					// beside its data first, as task convert does.
					out, err := convertBeside(taskFile, data)
					if err != nil {
						return err
					}
					fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s (the lm-evaluation-harness task as a task file, beside its data); building it\n", out)
					taskFile = out
				} else if raw, err := readLocal(taskFile); err == nil && promptfoo.Detect(raw) {
					// A promptfoo config: written as a task file and its
					// rows beside it, then built.
					out, err := promptfoo.WriteBeside(taskFile, raw)
					if err != nil {
						return err
					}
					fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s (the promptfoo config as a task file, its samples in %s); building it\n", out, strings.TrimSuffix(out, ".task.yaml")+".rows.jsonl")
					if pcfg, err := promptfoo.Parse(taskFile, raw, promptfoo.DirReader(filepath.Dir(taskFile))); err == nil && len(pcfg.Providers) > 0 {
						if g, err := wfclient.LoadProviders(cfg, ""); err == nil {
							models, missing := promptfooModels(pcfg, g)
							for _, m := range missing {
								fmt.Fprintln(cmd.ErrOrStderr(), m)
							}
							if len(models) > 0 {
								fmt.Fprintf(cmd.ErrOrStderr(), "its providers are the models %s (evaluate them with eval --model or a board's models)\n", strings.Join(models, ", "))
							}
						}
					}
					taskFile = out
				}
				name, uri, err := checkTaskFile(taskFile)
				if err != nil {
					return err
				}
				args, req = []string{name}, datasets.Request{Source: uri, Task: true}
			} else {
				if len(args) != 1 {
					return fmt.Errorf("give the dataset's NAME, or --task FILE")
				}
				if _, err := registry.Default().Get(args[0]); err != nil {
					return err
				}
				if req, err = requestFromFlags(args[0], src, params); err != nil {
					return err
				}
			}
			if as != "" {
				if err := catalog.ValidTag(as); err != nil {
					return fmt.Errorf("--as: %w", err)
				}
				req.As = as
			}
			c, err := app.Dial(cfg, g.logger())
			if err != nil {
				return err
			}
			defer c.Close()
			run, err := wfclient.StartBuild(cmd.Context(), c, cfg, workflows.BuildDatasetInput{Dataset: args[0], Request: req, MaxParallel: maxPar})
			if err != nil {
				return err
			}
			res, err := wfclient.WatchBuild(cmd.Context(), c, run, args[0], 2*time.Second, func(line string) {
				fmt.Fprintln(cmd.ErrOrStderr(), line)
			})
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(newBuildReport(res))
			}
			writeBuildResult(cmd.OutOrStdout(), res, cfg.S3.Bucket)
			return nil
		},
	}
	cmd.Flags().StringVar(&src, "source", "", "directory, http(s) URL or s3:// URL of the sources (default embedded://NAME)")
	cmd.Flags().StringVar(&taskFile, "task", "", "a task file (local path, http(s):// or s3:// URL): build the benchmark it defines; a local lm-evaluation-harness task (with --data) or promptfoo config is translated into one beside it first (docs/tasks.md)")
	cmd.Flags().StringArrayVar(&data, "data", nil, "with --task, an lm-evaluation-harness task's data: DATASET_PATH=DIR|FILE (the task is written as a task file beside it, then built)")
	cmd.Flags().StringArrayVar(&params, "param", nil, "builder parameter key=value (repeatable)")
	cmd.Flags().IntVar(&maxPar, "parallel", 4, "parts written at once")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	cmd.Flags().StringVar(&as, "as", "", "tag the version TAG, so NAME@TAG names it (for a variant: a build with --param does not move latest)")
	return cmd
}

func newDatasetLsCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List published dataset versions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, store, err := g.store(cmd.Context())
			if err != nil {
				return err
			}
			entries, err := catalog.List(cmd.Context(), store)
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(entries)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "DATASET\tVERSION\tROWS\tFILES\tCREATED\tLATEST\tTAGS")
			for _, e := range entries {
				latest := ""
				if e.Latest {
					latest = "*"
				}
				tags := strings.Join(e.Tags, ",")
				if e.Variant {
					tags = strings.TrimPrefix(tags+",(variant)", ",")
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\n", e.Name, e.Version, e.Rows, e.Files, e.CreatedAt.Format("2006-01-02 15:04:05"), latest, tags)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func newDatasetShowCmd(g *globals) *cobra.Command {
	var verify bool
	cmd := &cobra.Command{
		Use:   "show NAME[@VERSION]",
		Short: "Print a dataset version's manifest (latest by default)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, store, err := g.store(cmd.Context())
			if err != nil {
				return err
			}
			m, err := catalog.Resolve(cmd.Context(), store, args[0])
			if err != nil {
				return err
			}
			if verify {
				if err := catalog.VerifyHashes(cmd.Context(), store, m); err != nil {
					return err
				}
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(m)
		},
	}
	cmd.Flags().BoolVar(&verify, "verify", false, "check every file's sha256 against the manifest")
	return cmd
}

// writeBuildResult prints what `dataset build` says of a finished build:
// the version, what it skipped, what latest named before and after it (a
// WARNING line when latest moved back to a version built earlier or
// shrank), the builder's notes about its counts, tags, generation.
func writeBuildResult(w io.Writer, res workflows.BuildDatasetResult, bucket string) {
	verb := "built"
	if res.Reused {
		verb = "already published, reused"
	}
	fmt.Fprintf(w, "%s %s@%s: %d rows in %d files; manifest s3://%s/%s\n", verb, res.Dataset, res.Version, res.Rows, res.Files, bucket, res.ManifestKey)
	if s := datasets.SkipSummary(res.Stats); s != "" {
		if res.Reused {
			s = "the version's build " + s
		}
		fmt.Fprintln(w, s)
	}
	if b, err := registry.Default().Builder(res.Dataset); err == nil {
		for _, n := range datasets.BuildNotes(b, res.Stats) {
			fmt.Fprintln(w, n)
		}
	}
	if l := res.Latest.Line(res.Dataset); l != "" {
		fmt.Fprintln(w, l)
	}
	if warn := res.Latest.Warning(res.Dataset); warn != "" {
		fmt.Fprintln(w, warn)
	}
	switch {
	case res.Variant && res.Tag != "":
		fmt.Fprintf(w, "a variant (built with --param): latest not moved; tagged %s@%s\n", res.Dataset, res.Tag)
	case res.Variant:
		fmt.Fprintf(w, "a variant (built with --param): latest not moved; name it %s@%s, or tag it with --as\n", res.Dataset, res.Version)
	case res.Tag != "":
		fmt.Fprintf(w, "tagged %s@%s\n", res.Dataset, res.Tag)
	}
	if g := res.Generated; g.Units > 0 {
		fmt.Fprintf(w, "generated %d outputs in %d units: %d model calls (%d from cache, $%.4f), %d calls skipped\n",
			g.Outputs, g.Units, g.Calls, g.CacheHits, g.CostUSD, g.Skipped)
	}
}

// datasetList renders one line per registered benchmark for --help.
func datasetList() string {
	var b strings.Builder
	for _, bm := range registry.Default().All() {
		fmt.Fprintf(&b, "  %-12s %s\n", bm.Name(), bm.Description)
	}
	return strings.TrimRight(b.String(), "\n")
}
