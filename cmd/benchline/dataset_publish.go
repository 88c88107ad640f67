package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/benchline/benchline/internal/wfclient"

	"github.com/spf13/cobra"

	"github.com/benchline/benchline/internal/names"
	"github.com/benchline/benchline/internal/release"
	"github.com/benchline/benchline/workflows"
)

// publishJSON is what `dataset publish --json` prints, exactly.
type publishJSON struct {
	Release string `json:"release"`
	Files   int    `json:"files"`
	Rows    int64  `json:"rows"`
	// Latest is what the destination's latest named before and after
	// (absent for a variant).
	Latest *latestReport `json:"latest,omitempty"`
}

func newDatasetPublishCmd(g *globals) *cobra.Command {
	var to string
	var maxPar int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "publish NAME@VERSION --to DEST",
		Short: "Publish a dataset version as a release that Hugging Face datasets, DuckDB and Polars read as is",
		Long: `publish copies a dataset version (NAME, NAME@latest or NAME@VERSION) to DEST with
the PublishDataset workflow and waits. DEST is s3://bucket/prefix (the configured
S3 endpoint and credentials) or a local directory on the workers (made absolute here).

The release is DEST/NAME/vVERSION/: README.md (a dataset card whose YAML header
declares configs with data_files and split names), release.json (every file with
its rows, bytes and sha256) and data/*.parquet, or data/config=CONFIG/*.parquet
for datasets with configs. Every file's sha256 is checked after the copy; then the
card is written and DEST/NAME/latest moved, last: it names the last version
published there without --param, an older or smaller one included, and the
output says what it named before and after (a WARNING line when it shrank or
moved back to a version built earlier). A publish that fails leaves no
release and latest as it was. Publishing the same version again copies nothing.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return publish(cmd, g, workflows.PublishDatasetInput{Ref: args[0]}, to, maxPar, asJSON)
		},
	}
	publishFlags(cmd, &to, &maxPar, &asJSON)
	return cmd
}

func newRunsPublishCmd(g *globals) *cobra.Command {
	var to string
	var maxPar int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "publish RUN-ID --to DEST",
		Short: "Publish a finished run's per-sample results as a details dataset release",
		Long: `publish copies a finished run's result shards (one row per sample) to DEST with the
PublishDataset workflow, in the same layout as dataset publish: the release is
DEST/details-DATASET-MODEL/vRUN-ID/ (the model reduced to word characters), with
README.md (the run, its metrics, the schema, the eval command that runs it again),
release.json and data/test-*.parquet; DEST/details-DATASET-MODEL/latest moves last.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return publish(cmd, g, workflows.PublishDatasetInput{Run: args[0]}, to, maxPar, asJSON)
		},
	}
	publishFlags(cmd, &to, &maxPar, &asJSON)
	return cmd
}

func publishFlags(cmd *cobra.Command, to *string, maxPar *int, asJSON *bool) {
	cmd.Flags().StringVar(to, "to", "", "destination: s3://bucket/prefix or a local directory")
	cmd.Flags().IntVar(maxPar, "parallel", 4, "files copied at once")
	cmd.Flags().BoolVar(asJSON, "json", false, `print {"release", "files", "rows", "latest"} as JSON`)
}

// publish runs the PublishDataset workflow for in and prints its result.
func publish(cmd *cobra.Command, g *globals, in workflows.PublishDatasetInput, to string, maxPar int, asJSON bool) error {
	if to == "" {
		return fmt.Errorf("--to DEST is required (s3://bucket/prefix or a directory)")
	}
	if maxPar <= 0 {
		return fmt.Errorf("--parallel %d: want a positive integer", maxPar)
	}
	if in.Run != "" {
		if err := names.RunID(in.Run); err != nil {
			return err
		}
	} else if _, _, err := names.ParseRef(in.Ref); err != nil {
		return err
	}
	dest := to
	if !strings.Contains(to, "://") {
		abs, err := filepath.Abs(to)
		if err != nil {
			return fmt.Errorf("--to %s: %w", to, err)
		}
		dest = abs
	}
	if _, err := release.ParseDest(dest); err != nil {
		return fmt.Errorf("--to: %w", err)
	}
	cfg, c, err := g.dial()
	if err != nil {
		return err
	}
	defer c.Close()
	in.Dest, in.MaxParallel = dest, maxPar
	res, err := wfclient.PublishDataset(cmd.Context(), c, cfg, in)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(cmd.OutOrStdout()).Encode(publishJSON{Release: res.Release, Files: res.Files, Rows: res.Rows,
			Latest: newLatestReport(res.Dataset, res.Latest, true)})
	}
	verb := "published"
	if res.Reused {
		verb = "already published, nothing copied"
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s %s@%s: %d rows in %d files, every sha256 verified\nrelease %s\n",
		verb, res.Dataset, res.Version, res.Rows, res.Files, res.Release)
	switch l := res.Latest.Line(res.Dataset); {
	case l != "":
		fmt.Fprintln(cmd.OutOrStdout(), l)
	case res.LatestMoved:
		fmt.Fprintf(cmd.OutOrStdout(), "latest now names %s\n", res.Version)
	}
	if w := res.Latest.ReleaseWarning(res.Dataset); w != "" {
		fmt.Fprintln(cmd.OutOrStdout(), w)
	}
	return nil
}
