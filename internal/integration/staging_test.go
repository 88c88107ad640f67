package integration

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/wfclient"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/app"
	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/registry"
	"github.com/benchline/benchline/internal/source"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/workflows"
)

// lateFailBuilder stages its one source and plans one part, whose writing
// fails for good: a build that gets past PlanBuild and fails later.
type lateFailBuilder struct{}

func (lateFailBuilder) Name() string          { return "latefail" }
func (lateFailBuilder) Version() string       { return "1" }
func (lateFailBuilder) Schema() schemas.Table { return schemas.Table{Name: "latefail_row", Version: 1} }
func (b lateFailBuilder) Plan(ctx context.Context, env datasets.Env, req datasets.Request) (datasets.Plan, error) {
	loc, err := source.Parse(ctx, req.Source, env.OpenS3)
	if err != nil {
		return datasets.Plan{}, err
	}
	src, err := datasets.Stage(ctx, env, loc, "items.jsonl")
	if err != nil {
		return datasets.Plan{}, err
	}
	return datasets.NewPlan(b, []catalog.Source{src}, nil, []datasets.Part{{Index: 0, Label: "all", Rows: 1}}), nil
}
func (lateFailBuilder) WritePart(context.Context, datasets.Env, datasets.Plan, datasets.Part, string, func(int64)) (pq.FileInfo, error) {
	return pq.FileInfo{}, &datasets.InputError{File: "items.jsonl", Line: 1, Msg: "refused when the part is written"}
}
func (lateFailBuilder) Card(catalog.Manifest) string { return "" }

// TestFailedBuildDiscardsStagedSources is issue #11's "failed builds leave
// staging/sources/*" on the real stack: a build that fails at WritePart,
// past PlanBuild, ends with the part's error, publishes nothing and
// leaves no staged source behind.
func TestFailedBuildDiscardsStagedSources(t *testing.T) {
	reg, err := registry.Default().With(benchmark.Benchmark{Builder: lateFailBuilder{}, Description: "fails at WritePart (test only)"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := stack.Stack.Config
	cfg.Temporal.TaskQueue = "late-fail"
	ws, err := app.NewWorkers(stack.Client, cfg, stack.Store, stack.Gateway, app.WorkerOptions{Queues: []string{"main"}, Benchmarks: reg})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
	}
	dir := t.TempDir()
	body := fmt.Sprintf("{\"id\": %q}\n", t.Name()+time.Now().String()) // staged by no other build
	if err := os.WriteFile(filepath.Join(dir, "items.jsonl"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(body))
	staged := datasets.StagedKey(hex.EncodeToString(sum[:]))

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, err = wfclient.BuildDataset(ctx, stack.Client, cfg, workflows.BuildDatasetInput{Dataset: "latefail", Request: datasets.Request{Source: dir}})
	if err == nil || !strings.Contains(err.Error(), "items.jsonl:1") {
		t.Fatalf("build: %v; want the part's error naming items.jsonl:1", err)
	}
	if *update {
		saveHistory(t, wfclient.BuildWorkflowID("latefail", datasets.Request{Source: dir}), "build_dataset_failed_discard.json")
	}
	if ok, err := blob.Exists(ctx, stack.Store, staged); err != nil || ok {
		t.Errorf("the failed build left its staged source %s (%v)", staged, err)
	}
	if left, err := stack.Store.List(ctx, "datasets/latefail/"); err != nil || len(left) != 0 {
		t.Errorf("the failed build published %d objects (%v)", len(left), err)
	}
}
