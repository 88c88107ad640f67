package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/bfcl"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/devstack"
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
// fixtures bundled in the binary, and prints what it made.
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

	fmt.Fprintf(out, "\n== bfcl: building the dataset from the bundled fixtures (%s)\n", bfcl.Embedded)
	res, err := BuildDataset(ctx, r.Client, r.Stack.Config, workflows.BuildDatasetInput{Dataset: bfcl.Name, Request: datasets.Request{Source: bfcl.Embedded}})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "built %s@%s: %d rows in %d files (s3://%s/%s)\n", res.Dataset, res.Version, res.Rows, res.Files, r.Stack.Config.S3.Bucket, res.ManifestKey)
	m, err := catalog.ReadManifest(ctx, r.Store, res.Dataset, res.Version)
	if err != nil {
		return err
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	fmt.Fprintf(out, "manifest.json:\n%s\n", b)

	again, err := BuildDataset(ctx, r.Client, r.Stack.Config, workflows.BuildDatasetInput{Dataset: bfcl.Name, Request: datasets.Request{Source: bfcl.Embedded}})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "rebuilt from the same sources: version %s, reused=%v (content-addressed: nothing rewritten)\n", again.Version, again.Reused)
	fmt.Fprintln(out, "\nbenchline demo: done. Evaluation, scoring and leaderboards join the demo as their issues land.")
	return nil
}
