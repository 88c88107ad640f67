package ifevalcode_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/ifevalcode"
	"github.com/benchline/benchline/internal/shareddata"
)

// TestUpstreamLayout builds a copy of the original repository's layout:
// its benchmark file in data/benchmark/, other .jsonl files elsewhere in
// the repository (which are not the benchmark's) left out. (The original's
// IFEvalCode.jsonl is not distributed with this repository; the fixtures
// stand in for its lines.) The repository, its data/ folder and
// data/benchmark/ all build the same rows.
func TestUpstreamLayout(t *testing.T) {
	fix, err := os.ReadFile(filepath.Join("fixtures", ifevalcode.DefaultFile))
	if err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	for name, body := range map[string][]byte{
		"data/benchmark/" + ifevalcode.DefaultFile: fix,
		"node_modules/some-package/test.jsonl":     []byte("{\"not\": \"an item\"}\n"),
		"README.md":                                []byte("# IFEvalCode\n"),
	} {
		p := filepath.Join(repo, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, src := range []string{repo, filepath.Join(repo, "data"), filepath.Join(repo, "data", "benchmark")} {
		plan, items, err := build(t, src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if len(items) != 24 || len(plan.Sources) != 1 {
			t.Fatalf("%s: %d items from %d sources, want the 24 of data/benchmark/%s", src, len(items), len(plan.Sources), ifevalcode.DefaultFile)
		}
		for _, it := range items {
			if strings.Contains(it.SourceFile, repo) {
				t.Fatalf("%s: source_file %s names the build's directory", it.ID, it.SourceFile)
			}
		}
	}
}

// TestEmptySource: an empty benchmark file and a folder without one are
// errors naming the source, never an empty version.
func TestEmptySource(t *testing.T) {
	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, ifevalcode.DefaultFile), []byte("\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	none := t.TempDir()
	for _, tc := range []struct{ dir, msg string }{
		{empty, "yields no rows"},
		{none, "no *.jsonl files found"},
	} {
		_, _, err := build(t, tc.dir)
		var ie *datasets.InputError
		if !errors.As(err, &ie) || !strings.Contains(ie.Error(), tc.dir) || !strings.Contains(ie.Msg, tc.msg) {
			t.Errorf("%s: err = %v, want an input error naming it, saying %q", tc.dir, err, tc.msg)
		}
	}
}

// TestUpstreamFull builds the original's data/benchmark folder (or its
// repository) named by BENCHLINE_UPSTREAM_IFEVALCODE: every line of its
// benchmark files is a row.
func TestUpstreamFull(t *testing.T) {
	dir := shareddata.Upstream(t, "BENCHLINE_UPSTREAM_IFEVALCODE", "CSJianYang/IFEvalCode's data/benchmark folder")
	_, items, err := build(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	want := jsonlLines(t, dir)
	if len(items) != want {
		t.Errorf("%d rows, the files have %d lines", len(items), want)
	}
}
