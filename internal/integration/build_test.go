package integration

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/wfclient"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/bfcl"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/devstack"
	"github.com/benchline/benchline/internal/shareddata"
	"github.com/benchline/benchline/workflows"
)

func buildVia(t *testing.T, dataset string, req datasets.Request) (workflows.BuildDatasetResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	return wfclient.BuildDataset(ctx, stack.Client, stack.Stack.Config, workflows.BuildDatasetInput{Dataset: dataset, Request: req})
}

// verifiedManifest reads a published version's manifest and checks every
// file against its sha256.
func verifiedManifest(t *testing.T, dataset, version string) catalog.Manifest {
	t.Helper()
	ctx := context.Background()
	m, err := catalog.ReadManifest(ctx, stack.Store, dataset, version)
	if err != nil {
		t.Fatal(err)
	}
	if err := catalog.VerifyHashes(ctx, stack.Store, m); err != nil {
		t.Fatal(err)
	}
	return m
}

// duckdbRead reads a version's files with DuckDB through node.
func duckdbRead(t *testing.T, m catalog.Manifest) (rows, distinct int, cols map[string]string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	for _, f := range m.Files {
		b, err := blob.GetBytes(ctx, stack.Store, catalog.Dir(m.Name, m.Version)+f.Path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f.Path)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	nodeModules := filepath.Join(devstack.CacheDir(), "node", "node_modules")
	if _, err := os.Stat(filepath.Join(nodeModules, "@duckdb", "node-api")); err != nil {
		t.Fatalf("@duckdb/node-api not installed in %s: run `make setup`", nodeModules)
	}
	script, _ := filepath.Abs("testdata/duckdb_read.cjs")
	cmd := exec.Command("node", script, filepath.Join(dir, "*.parquet"))
	cmd.Env = append(os.Environ(), "NODE_PATH="+nodeModules)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("duckdb read failed: %v\n%s", err, stderr)
	}
	var res struct {
		Rows        int        `json:"rows"`
		DistinctIDs int        `json:"distinct_ids"`
		Columns     [][]string `json:"columns"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("duckdb output %q: %v", out, err)
	}
	cols = map[string]string{}
	for _, c := range res.Columns {
		cols[c[0]] = c[1]
	}
	return res.Rows, res.DistinctIDs, cols
}

func checkBFCLVersion(t *testing.T, res workflows.BuildDatasetResult) catalog.Manifest {
	t.Helper()
	ctx := context.Background()
	m := verifiedManifest(t, res.Dataset, res.Version)
	if m.Rows != res.Rows || len(m.Files) != res.Files || m.Schema.Name != "bfcl_item" {
		t.Fatalf("manifest %+v disagrees with result %+v", m, res)
	}
	card, err := blob.GetBytes(ctx, stack.Store, catalog.CardKey(m.Name, m.Version))
	if err != nil || !strings.Contains(string(card), "path: data/*.parquet") {
		t.Fatalf("dataset card: %v\n%s", err, card)
	}
	rows, distinct, cols := duckdbRead(t, m)
	if int64(rows) != m.Rows || distinct != rows {
		t.Fatalf("duckdb read %d rows (%d distinct ids), manifest says %d", rows, distinct, m.Rows)
	}
	want := map[string]string{"id": "VARCHAR", "category": "VARCHAR", "language": "VARCHAR", "turns_json": "VARCHAR",
		"functions_json": "VARCHAR", "ground_truth_json": "VARCHAR", "num_turns": "INTEGER", "num_functions": "INTEGER",
		"source_file": "VARCHAR", "source_line": "INTEGER"}
	for c, typ := range want {
		if cols[c] != typ {
			t.Errorf("column %s: duckdb type %q, want %s (all: %v)", c, cols[c], typ, cols)
		}
	}
	return m
}

func TestBuildBFCLFixtures(t *testing.T) {
	res, err := buildVia(t, bfcl.Name, datasets.Request{Source: bfcl.Embedded})
	if err != nil {
		t.Fatal(err)
	}
	m := checkBFCLVersion(t, res)
	if m.Rows != 14 {
		t.Fatalf("rows = %d, want 14", m.Rows)
	}
	if *update && !res.Reused {
		saveHistory(t, wfclient.BuildWorkflowID(bfcl.Name, datasets.Request{Source: bfcl.Embedded}), "build_dataset_bfcl.json")
	}
	// Building the same sources again names the same version and rewrites nothing.
	ctx := context.Background()
	before, _ := stack.Store.List(ctx, catalog.Dir(m.Name, m.Version))
	again, err := buildVia(t, bfcl.Name, datasets.Request{Source: bfcl.Embedded})
	if err != nil {
		t.Fatal(err)
	}
	if again.Version != res.Version || !again.Reused {
		t.Fatalf("rebuild = %+v, want reuse of %s", again, res.Version)
	}
	after, _ := stack.Store.List(ctx, catalog.Dir(m.Name, m.Version))
	if len(before) != len(after) {
		t.Fatalf("objects: %d before, %d after", len(before), len(after))
	}
	for i := range before {
		if before[i].Key != after[i].Key || !before[i].Modified.Equal(after[i].Modified) || before[i].ETag != after[i].ETag {
			t.Fatalf("%s was rewritten", before[i].Key)
		}
	}
	if latest, err := catalog.Resolve(ctx, stack.Store, "bfcl@latest"); err != nil || latest.Version == "" {
		t.Fatalf("bfcl@latest: %v", err)
	}
}

func TestBuildBFCLv4RealData(t *testing.T) {
	dir := shareddata.Require(t, "bfcl")
	res, err := buildVia(t, bfcl.Name, datasets.Request{Source: dir})
	if err != nil {
		t.Fatal(err)
	}
	m := checkBFCLVersion(t, res)
	if m.Rows < 3000 || len(m.Files) != 13 {
		t.Fatalf("real BFCL v4: %d rows in %d files", m.Rows, len(m.Files))
	}
}

func TestBuildBadInputPublishesNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	good, err := os.ReadFile("../../datasets/bfcl/fixtures/possible_answer/BFCL_v4_multiple.json")
	if err != nil {
		t.Fatal(err)
	}
	q, _ := os.ReadFile("../../datasets/bfcl/fixtures/BFCL_v4_multiple.json")
	lines := strings.SplitAfter(string(q), "\n")
	bad := lines[0] + `{"id": "multiple_1", "question": [[{"role": "user"` + "\n" // truncated line 2
	_ = os.MkdirAll(filepath.Join(dir, "possible_answer"), 0o755)
	_ = os.WriteFile(filepath.Join(dir, "BFCL_v4_multiple.json"), []byte(bad), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "possible_answer", "BFCL_v4_multiple.json"), good, 0o644)

	before, _ := stack.Store.List(ctx, "datasets/")
	_, err = buildVia(t, bfcl.Name, datasets.Request{Source: dir})
	if err == nil {
		t.Fatal("build of a malformed file succeeded")
	}
	wantLoc := filepath.Join(dir, "BFCL_v4_multiple.json") + ":2:"
	if !strings.Contains(err.Error(), wantLoc) {
		t.Fatalf("error %q does not name %s", err, wantLoc)
	}
	after, _ := stack.Store.List(ctx, "datasets/")
	if len(after) != len(before) {
		t.Fatalf("a failed build wrote %d objects under datasets/", len(after)-len(before))
	}
}
