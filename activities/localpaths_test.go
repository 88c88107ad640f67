package activities

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/bfcl"
	"github.com/benchline/benchline/internal/benchmark/benchmarktest"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/catalog"
)

// copyTree copies the directory from into to.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNoLocalPathsPublished builds BFCL's data folder (the upstream slice)
// from a build directory, publishes the version to a release directory,
// and searches every object of the version (manifest, card, Parquet parts)
// and every file of the release for the build directory: none holds it.
func TestNoLocalPathsPublished(t *testing.T) {
	ctx := context.Background()
	buildDir := filepath.Join(t.TempDir(), "my-private-build-dir")
	copyTree(t, "../datasets/bfcl/testdata/upstream/data", buildDir)
	store := blobtest.NewMemory()
	reg := benchmarktest.Registry(t, benchmarktest.Builder(bfcl.Builder{}))
	d := &Datasets{Store: store, Benchmarks: reg}
	planned, err := d.PlanBuild(ctx, PlanBuildInput{Dataset: bfcl.Name, Request: datasets.Request{Source: buildDir}})
	if err != nil {
		t.Fatal(err)
	}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(d)
	var files []catalog.File
	for i := range planned.Plan.Parts {
		v, err := env.ExecuteActivity(d.WritePart, WritePartInput{Plan: planned.Plan, Part: i})
		if err != nil {
			t.Fatal(err)
		}
		var f catalog.File
		if err := v.Get(&f); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	m, err := d.Publish(ctx, PublishInput{Plan: planned.Plan, Files: files, CreatedAt: time.Unix(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if m.Stats["skipped_items: multi_turn (not supported)"] != 4 {
		t.Errorf("manifest stats %v", m.Stats)
	}
	infos, err := store.List(ctx, catalog.Dir(m.Name, m.Version))
	if err != nil || len(infos) < 3 {
		t.Fatalf("version objects %v, %v", infos, err)
	}
	needle := []byte(filepath.Dir(buildDir))
	for _, info := range infos {
		b, err := blob.GetBytes(ctx, store, info.Key)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, needle) || bytes.Contains(b, []byte("my-private-build-dir")) {
			t.Errorf("%s holds the build directory %s", info.Key, needle)
		}
	}
	dest := filepath.Join(t.TempDir(), "rel")
	p := &Publish{Store: store, Benchmarks: reg}
	if _, err := publishAll(t, p, PlanPublishInput{Ref: bfcl.Name, Dest: dest}); err != nil {
		t.Fatal(err)
	}
	n := 0
	err = filepath.WalkDir(dest, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		n++
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(b, needle) || bytes.Contains(b, []byte("my-private-build-dir")) {
			t.Errorf("release file %s holds the build directory", path)
		}
		return nil
	})
	if err != nil || n < 3 {
		t.Fatalf("release walked %d files: %v", n, err)
	}
}
