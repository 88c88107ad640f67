package integration

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/wfclient"

	_ "github.com/marcboeker/go-duckdb" // DuckDB, in this test binary only
	"gopkg.in/yaml.v3"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/bfcl"
	"github.com/benchline/benchline/internal/app"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/release"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/workflows"
)

func publishVia(t *testing.T, ref, dest string) (workflows.PublishDatasetResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	return wfclient.PublishDataset(ctx, stack.Client, stack.Stack.Config, workflows.PublishDatasetInput{Ref: ref, Dest: dest})
}

// releaseStore opens an s3:// destination the way the workers do.
func releaseStore(t *testing.T, prefix string) blob.Store {
	t.Helper()
	s, err := app.S3Opener(stack.Stack.Config)(context.Background(), stack.Stack.Config.S3.Bucket, prefix)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// download copies every object below prefix of s into a new directory,
// keeping the layout, so that DuckDB reads an S3 release (the test stack
// has no DuckDB httpfs extension: it would be downloaded at run time).
func download(t *testing.T, s blob.Store, prefix string) string {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	infos, err := s.List(ctx, prefix)
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range infos {
		b, err := blob.GetBytes(ctx, s, info.Key)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(info.Key, prefix)))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// duckdbCounts reads a release directory's data files with DuckDB (Hive
// partitioning on when the layout has config= folders) and returns the
// rows per config ("default" when there are none).
func duckdbCounts(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	glob := strings.ReplaceAll(filepath.Join(dir, "data", "**", "*.parquet"), "'", "''")
	hive, _ := filepath.Glob(filepath.Join(dir, "data", "config=*"))
	q := fmt.Sprintf("SELECT 'default', count(*) FROM read_parquet('%s')", glob)
	if len(hive) > 0 {
		q = fmt.Sprintf("SELECT config, count(*) FROM read_parquet('%s', hive_partitioning = true) GROUP BY config", glob)
	}
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("duckdb: %s: %v", q, err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var c string
		var n int64
		if err := rows.Scan(&c, &n); err != nil {
			t.Fatal(err)
		}
		out[c] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkRelease checks a release directory against the version's manifest:
// DuckDB's rows per config equal the manifest's rows per config (by part
// label), and the card's YAML parses with configs whose splits are word
// characters and whose data_files globs match the data files, each file
// once.
func checkRelease(t *testing.T, dir string, m catalog.Manifest, configOf func(string) string) {
	t.Helper()
	want := map[string]int64{}
	for _, f := range m.Files {
		c := release.DefaultConfig
		if configOf != nil {
			c = release.Sanitize(configOf(f.Label))
		}
		want[c] += f.Rows
	}
	if got := duckdbCounts(t, dir); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("duckdb rows per config %v, manifest %v", got, want)
	}

	card, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	head, _, ok := strings.Cut(strings.TrimPrefix(string(card), "---\n"), "\n---\n")
	if !ok || !strings.HasPrefix(string(card), "---\n") {
		t.Fatalf("README.md has no YAML front matter:\n%s", card)
	}
	var fm struct {
		License string `yaml:"license"`
		Configs []struct {
			ConfigName string `yaml:"config_name"`
			DataFiles  []struct {
				Split string `yaml:"split"`
				Path  string `yaml:"path"`
			} `yaml:"data_files"`
		} `yaml:"configs"`
	}
	if err := yaml.Unmarshal([]byte(head), &fm); err != nil {
		t.Fatalf("card YAML: %v\n%s", err, head)
	}
	all, err := filepath.Glob(filepath.Join(dir, "data", "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	nested, _ := filepath.Glob(filepath.Join(dir, "data", "*", "*.parquet"))
	all = append(all, nested...)
	if len(all) != len(m.Files) {
		t.Errorf("release holds %d data files, manifest %d", len(all), len(m.Files))
	}
	word := regexp.MustCompile(`^\w+$`)
	var configs []string
	seen := map[string]int{}
	for _, c := range fm.Configs {
		configs = append(configs, c.ConfigName)
		if len(c.DataFiles) == 0 {
			t.Errorf("config %s has no data_files", c.ConfigName)
		}
		for _, df := range c.DataFiles {
			if !word.MatchString(df.Split) {
				t.Errorf("config %s: split %q is not word characters", c.ConfigName, df.Split)
			}
			matches, err := filepath.Glob(filepath.Join(dir, filepath.FromSlash(df.Path)))
			if err != nil || len(matches) == 0 {
				t.Errorf("config %s split %s: data_files %s matches no file (%v)", c.ConfigName, df.Split, df.Path, err)
			}
			for _, p := range matches {
				seen[p]++
			}
		}
	}
	for _, p := range all {
		if seen[p] != 1 {
			t.Errorf("data file %s is in %d configs' data_files", p, seen[p])
		}
	}
	var wantConfigs []string
	for c := range want {
		wantConfigs = append(wantConfigs, c)
	}
	sort.Strings(wantConfigs)
	if fmt.Sprint(configs) != fmt.Sprint(wantConfigs) {
		t.Errorf("card configs %v, want %v", configs, wantConfigs)
	}
}

// TestPublishDataset builds BFCL from the fixtures (one config per
// category), publishes it to a local directory and to an s3:// prefix of
// the stack's S3 server, reads both back with DuckDB and checks the card;
// publishes again (nothing copied); and checks that unusable requests fail
// at once naming what is wrong.
func TestPublishDataset(t *testing.T) {
	ctx := context.Background()
	res, err := buildVia(t, bfcl.Name, datasets.Request{Source: bfcl.Embedded})
	if err != nil {
		t.Fatal(err)
	}
	m := verifiedManifest(t, res.Dataset, res.Version)
	configOf := func(l string) string { return bfcl.Builder{}.ConfigOf(l) }
	if len(m.Files) < 2 || m.Files[0].Label == "" {
		t.Fatalf("bfcl manifest without labelled parts: %+v", m.Files)
	}

	t.Run("local directory", func(t *testing.T) {
		dest := filepath.Join(t.TempDir(), "releases")
		pub, err := publishVia(t, "bfcl@"+res.Version, dest)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(dest, "bfcl", "v"+res.Version)
		if pub.Release != dir || pub.Files != len(m.Files) || pub.Rows != m.Rows || pub.Reused || !pub.LatestMoved {
			t.Errorf("publish result %+v (release %s, %d files, %d rows)", pub, dir, len(m.Files), m.Rows)
		}
		checkRelease(t, dir, m, configOf)
		if latest, err := os.ReadFile(filepath.Join(dest, "bfcl", "latest")); err != nil || !strings.Contains(string(latest), res.Version) {
			t.Errorf("latest: %s, %v", latest, err)
		}
		if left, _ := filepath.Glob(filepath.Join(dest, "bfcl", ".staging-*")); len(left) > 0 {
			t.Errorf("staging left: %v", left)
		}
		if *update {
			saveHistory(t, wfclient.PublishWorkflowID("bfcl@"+res.Version, dest), "publish_dataset_bfcl.json")
		}

		before := modTimes(t, dest)
		again, err := publishVia(t, "bfcl@"+res.Version, dest) // pinned: other tests on the shared stack move bfcl@latest
		if err != nil {
			t.Fatal(err)
		}
		if !again.Reused || again.LatestMoved || again.Release != dir || again.Rows != m.Rows {
			t.Errorf("second publish %+v: want reused, latest unmoved", again)
		}
		if after := modTimes(t, dest); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("second publish rewrote files:\nbefore %v\nafter  %v", before, after)
		}
	})

	t.Run("s3 prefix", func(t *testing.T) {
		prefix := fmt.Sprintf("releases-%d", time.Now().UnixNano())
		dest := fmt.Sprintf("s3://%s/%s", stack.Stack.Config.S3.Bucket, prefix)
		pub, err := publishVia(t, "bfcl@"+res.Version, dest)
		if err != nil {
			t.Fatal(err)
		}
		if want := dest + "/bfcl/v" + res.Version; pub.Release != want || pub.Files != len(m.Files) || pub.Rows != m.Rows {
			t.Errorf("publish result %+v, want release %s", pub, want)
		}
		s := releaseStore(t, prefix)
		dir := download(t, s, release.Root("bfcl", res.Version))
		checkRelease(t, dir, m, configOf)
		var l catalog.Latest
		if err := blob.GetJSON(ctx, s, release.LatestKey("bfcl"), &l); err != nil || l.Version != res.Version {
			t.Errorf("latest %+v, %v", l, err)
		}
		again, err := publishVia(t, "bfcl@"+res.Version, dest)
		if err != nil || !again.Reused || again.LatestMoved {
			t.Errorf("second publish %+v, %v: want reused", again, err)
		}
	})

	t.Run("command", func(t *testing.T) {
		bin := buildBinary(t)
		wd := t.TempDir()
		run := func(args ...string) string {
			cmd := exec.Command(bin, append([]string{"dataset", "publish", "bfcl@" + res.Version, "--to", "rel"}, args...)...)
			cmd.Dir = wd // --to rel is made absolute by the command
			cmd.Env = workerEnv(stack.Stack.Config.Temporal.TaskQueue, stack.BaselineURL)
			out, err := cmd.Output()
			if err != nil {
				var stderr []byte
				if ee, ok := err.(*exec.ExitError); ok {
					stderr = ee.Stderr
				}
				t.Fatalf("benchline dataset publish: %v\n%s", err, stderr)
			}
			return string(out)
		}
		out := run("--json")
		var got map[string]any
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("--json printed %q: %v", out, err)
		}
		// latest: the first publish there moves it from nothing.
		latest, _ := got["latest"].(map[string]any)
		to, _ := latest["to"].(map[string]any)
		if _, from := latest["from"]; from || latest["moved"] != true || to["version"] != res.Version || to["rows"] != float64(m.Rows) {
			t.Errorf("--json latest = %v, want a move from nothing to %s (%d rows)", got["latest"], res.Version, m.Rows)
		}
		delete(got, "latest")
		want := map[string]any{"release": filepath.Join(wd, "rel", "bfcl", "v"+res.Version), "files": float64(len(m.Files)), "rows": float64(m.Rows)}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("--json printed %v, want exactly %v", got, want)
		}
		if out := run(); !strings.Contains(out, "already published, nothing copied") {
			t.Errorf("second publish printed %q", out)
		}
	})

	t.Run("unusable requests", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "a-file")
		if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct{ ref, dest, want string }{
			{"bfcl@00000000deadbeef", t.TempDir(), "bfcl@00000000deadbeef"},
			{"nosuchdataset", t.TempDir(), "nosuchdataset has no published version"},
			{"bfcl@" + res.Version, filepath.Join(file, "releases"), "is not writable"},
			{"bfcl@" + res.Version, "s3://no-such-bucket-benchline/x", "no-such-bucket-benchline"},
			{"bfcl@" + res.Version, "releases", "must be an absolute path"},
		} {
			start := time.Now()
			_, err := publishVia(t, tc.ref, tc.dest)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("publish %s to %s: %v, want an error with %q", tc.ref, tc.dest, err, tc.want)
			}
			if d := time.Since(start); d > failFastBound {
				t.Errorf("publish %s to %s failed after %v: retried?", tc.ref, tc.dest, d)
			}
		}
	})
}

// TestPublishInterrupted publishes a clean synthetic version, then one
// whose part 1 was overwritten with other bytes of the same size: the
// second publish fails naming the file, leaves no release (nor staging)
// and the first version as latest, in a local directory and on S3.
func TestPublishInterrupted(t *testing.T) {
	ctx := context.Background()
	good, err := buildVia(t, "synthetic", datasets.Request{Params: map[string]string{"rows": "300", "part_rows": "100", "seed": "71401"}})
	if err != nil {
		t.Fatal(err)
	}
	badRef, badPath := tamperedDataset(t, 71402, func(_ context.Context, _ *catalog.Manifest, _ string, b []byte) []byte {
		return sameSize(b, len(b)/2, 32)
	})
	_, badVersion, _ := strings.Cut(badRef, "@")
	prefix := fmt.Sprintf("releases-%d", time.Now().UnixNano())
	for _, dest := range []string{filepath.Join(t.TempDir(), "rel"), fmt.Sprintf("s3://%s/%s", stack.Stack.Config.S3.Bucket, prefix)} {
		t.Run(dest, func(t *testing.T) {
			if _, err := publishVia(t, "synthetic@"+good.Version, dest); err != nil {
				t.Fatal(err)
			}
			var store blob.Store = release.DirStore{Root: dest}
			if strings.HasPrefix(dest, "s3://") {
				store = releaseStore(t, prefix)
			}
			// A synthetic build with --param is a variant, whose release
			// leaves the destination's latest alone: whatever latest is, the
			// failed publish must not move it.
			before, _ := blob.GetBytes(ctx, store, release.LatestKey("synthetic"))
			_, err := publishVia(t, badRef, dest)
			if err == nil || !strings.Contains(err.Error(), badPath) || !strings.Contains(err.Error(), "sha256") {
				t.Fatalf("publish of a corrupt version: %v, want an error naming %s and its sha256", err, badPath)
			}
			if after, _ := blob.GetBytes(ctx, store, release.LatestKey("synthetic")); !bytes.Equal(before, after) {
				t.Errorf("the failed publish moved latest: %q, was %q", after, before)
			}
			for _, p := range []string{release.Root("synthetic", badVersion), release.StagingRoot("synthetic", badVersion)} {
				infos, err := store.List(ctx, p)
				if err != nil && !errors.Is(err, blob.ErrNotFound) {
					t.Fatal(err)
				}
				if len(infos) > 0 {
					t.Errorf("the failed publish left %d files under %s (first %s)", len(infos), p, infos[0].Key)
				}
			}
			if infos, _ := store.List(ctx, release.Root("synthetic", good.Version)); len(infos) != 3+2 {
				t.Errorf("the good release holds %d files, want 3 data files, README.md and release.json", len(infos))
			}
		})
	}
}

// modTimes lists every file below dir with its modification time.
func modTimes(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		st, err := e.Info()
		if err != nil {
			return err
		}
		out = append(out, fmt.Sprintf("%s@%d", p, st.ModTime().UnixNano()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPublishRunDetails evaluates a baseline on a small synthetic dataset
// and publishes the run's per-sample results as a details release: DuckDB
// reads one row per sample, and the card declares them.
func TestPublishRunDetails(t *testing.T) {
	ctx := context.Background()
	ds := buildSynthetic(t, 40, 71403)
	ev, err := evalVia(t, "", workflows.EvaluateModelInput{Request: runs.Request{Dataset: ds, Model: "baseline/reference", ShardSize: 15}})
	if err != nil {
		t.Fatal(err)
	}
	var plan runs.Plan
	if err := blob.GetJSON(ctx, stack.Store, runs.PlanKey(ev.RunID), &plan); err != nil {
		t.Fatal(err)
	}
	m := catalog.Manifest{} // the shards as a manifest, for checkRelease
	for i := range plan.Shards {
		n, err := pq.Rows(ctx, stack.Store, runs.ShardKey(ev.RunID, i))
		if err != nil {
			t.Fatal(err)
		}
		m.Files = append(m.Files, catalog.File{Rows: n})
		m.Rows += n
	}
	if m.Rows != 40 || plan.Shards != 3 {
		t.Fatalf("run %s: %d result rows in %d shards, want 40 in 3", ev.RunID, m.Rows, plan.Shards)
	}
	dest := t.TempDir()
	ctx2, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	pub, err := wfclient.PublishDataset(ctx2, stack.Client, stack.Stack.Config, workflows.PublishDatasetInput{Run: ev.RunID, Dest: dest})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(dest, "details-synthetic-baseline_reference", "v"+ev.RunID)
	if pub.Release != dir || pub.Rows != 40 || pub.Files != 3 {
		t.Errorf("publish result %+v, want %s with 40 rows in 3 files", pub, dir)
	}
	checkRelease(t, dir, m, nil)
	card, _ := os.ReadFile(filepath.Join(dir, "README.md"))
	if !strings.Contains(string(card), "benchline eval --dataset "+ds+" --model baseline/reference") {
		t.Errorf("details card lacks the eval command:\n%s", card)
	}
}
