package release_test

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/golden"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/release"
	"github.com/benchline/benchline/schemas"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func manifest(labels ...string) catalog.Manifest {
	m := catalog.Manifest{Name: "bfcl", Version: "0123456789abcdef", Schema: schemas.Table{Name: "bfcl_item", Version: 1},
		BuilderVersion: "3", CreatedAt: time.Date(2026, 11, 23, 18, 0, 0, 0, time.UTC)}
	for i, l := range labels {
		f := catalog.File{Path: catalog.PartPath(i), Rows: int64(10 * (i + 1)), Bytes: int64(1000 + i), SHA256: strings.Repeat(string(rune('a'+i)), 64), Label: l}
		m.Files = append(m.Files, f)
		m.Rows += f.Rows
	}
	return m
}

func TestSanitize(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"simple_python", "simple_python"},
		{"rows 0-999", "rows_0_999"},
		{"toolpref/unit-00001", "toolpref_unit_00001"},
		{"--a..b--", "a_b"},
		{"中文", ""}, // \w is ASCII-only (as the hub's check is): other letters are not word characters
		{"***", ""},
	} {
		got := release.Sanitize(tc.in)
		if got != tc.want {
			t.Errorf("Sanitize(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got != "" && !regexp.MustCompile(`^\w+$`).MatchString(got) {
			t.Errorf("Sanitize(%q) = %q does not match ^\\w+$", tc.in, got)
		}
	}
}

func TestPlanLayout(t *testing.T) {
	byLabel := func(l string) string { return l }
	for _, tc := range []struct {
		name     string
		m        catalog.Manifest
		configOf func(string) string
		paths    []string
		configs  map[string]int64 // rows per config
		globs    []string
		err      string
	}{
		{name: "no configs", m: manifest("rows 0-9", "rows 10-29"),
			paths:   []string{"data/test-00000-of-00002.parquet", "data/test-00001-of-00002.parquet"},
			configs: map[string]int64{"default": 30}, globs: []string{"data/test-*.parquet"}},
		{name: "a manifest without labels, builder with configs", m: manifest("", ""), configOf: func(l string) string {
			if l == "" {
				return release.DefaultConfig
			}
			return l
		},
			paths:   []string{"data/test-00000-of-00002.parquet", "data/test-00001-of-00002.parquet"},
			configs: map[string]int64{"default": 30}, globs: []string{"data/test-*.parquet"}},
		{name: "configs from labels, sorted, hive folders", m: manifest("simple_python", "multiple", "simple-java"), configOf: byLabel,
			paths: []string{"data/config=multiple/test-00000-of-00001.parquet", "data/config=simple_java/test-00000-of-00001.parquet",
				"data/config=simple_python/test-00000-of-00001.parquet"},
			configs: map[string]int64{"multiple": 20, "simple_java": 30, "simple_python": 10},
			globs:   []string{"data/config=multiple/test-*.parquet", "data/config=simple_java/test-*.parquet", "data/config=simple_python/test-*.parquet"}},
		{name: "two parts of one config", m: manifest("python", "python", "shell"), configOf: byLabel,
			paths: []string{"data/config=python/test-00000-of-00002.parquet", "data/config=python/test-00001-of-00002.parquet",
				"data/config=shell/test-00000-of-00001.parquet"},
			configs: map[string]int64{"python": 30, "shell": 30},
			globs:   []string{"data/config=python/test-*.parquet", "data/config=shell/test-*.parquet"}},
		{name: "one config that is not default is still a folder", m: manifest("items"), configOf: byLabel,
			paths: []string{"data/config=items/test-00000-of-00001.parquet"}, configs: map[string]int64{"items": 10},
			globs: []string{"data/config=items/test-*.parquet"}},
		{name: "labels colliding once sanitized", m: manifest("a-b", "a_b"), configOf: byLabel, err: `configs "a-b" and "a_b" both become "a_b"`},
		{name: "a label without word characters", m: manifest("+++"), configOf: byLabel, err: `file data/part-00000.parquet: config "+++" has no word character`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := release.Plan(tc.m, tc.configOf)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var paths, globs []string
			configs := map[string]int64{}
			var files int
			for _, f := range l.Files {
				paths = append(paths, f.Path)
				if f.Split != "test" {
					t.Errorf("file %s in split %q", f.Path, f.Split)
				}
			}
			for _, c := range l.Configs {
				for _, s := range c.Splits {
					configs[c.Name] += s.Rows
					globs = append(globs, s.Glob)
					files += s.Files
					for _, f := range l.Files {
						match, _ := filepath.Match(s.Glob, f.Path)
						if match != (f.Config == c.Name) {
							t.Errorf("glob %s matches %s: %v, but the file is in config %s", s.Glob, f.Path, match, f.Config)
						}
					}
				}
			}
			if !reflect.DeepEqual(paths, tc.paths) {
				t.Errorf("paths\n got %q\nwant %q", paths, tc.paths)
			}
			if !reflect.DeepEqual(configs, tc.configs) || !reflect.DeepEqual(globs, tc.globs) {
				t.Errorf("configs %v globs %q, want %v %q", configs, globs, tc.configs, tc.globs)
			}
			if l.Rows != tc.m.Rows || len(l.Files) != len(tc.m.Files) || files != len(tc.m.Files) {
				t.Errorf("layout holds %d rows in %d files (%d by split), manifest %d in %d", l.Rows, len(l.Files), files, tc.m.Rows, len(tc.m.Files))
			}
		})
	}
}

func TestParseDest(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want release.Dest
		err  bool
	}{
		{in: "s3://bucket/some/prefix/", want: release.Dest{Bucket: "bucket", Prefix: "some/prefix"}},
		{in: "s3://bucket", want: release.Dest{Bucket: "bucket"}},
		{in: "/tmp/releases/", want: release.Dest{Dir: "/tmp/releases"}},
		{in: "releases", err: true},
		{in: "", err: true},
		{in: "s3:///nobucket", err: true},
		{in: "https://example.com/x", err: true},
		{in: "s3://user:pw@bucket/x", err: true},
		{in: "s3://%255/x", err: true}, // the host unescapes to "%5", which String would not give back
		{in: "s3://bucket:9000/x", err: true},
		{in: "s3://[::1]/x", err: true},
		{in: "s3://Legacy_Bucket.1/x", want: release.Dest{Bucket: "Legacy_Bucket.1", Prefix: "x"}},
		{in: "s3://b/a%05", err: true}, // the prefix unescapes to a control character
		{in: "s3://b/a%FF", err: true}, // and here to a byte that is not UTF-8
		{in: "s3://b/a\tb", err: true}, // a control character as written
		{in: "s3://b/r%C3%A9sultats", want: release.Dest{Bucket: "b", Prefix: "résultats"}},
	} {
		got, err := release.ParseDest(tc.in)
		if tc.err {
			if !errors.Is(err, release.ErrDest) || !strings.Contains(err.Error(), strconv.Quote(tc.in)) {
				t.Errorf("ParseDest(%q) = %v, %v: want an ErrDest naming it", tc.in, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseDest(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

// TestCardGolden renders the card of a three-config layout and compares it
// with testdata/card.md (go test -update rewrites it), then parses its
// front matter back: configs, splits and data_files match the layout.
func TestCardGolden(t *testing.T) {
	m := manifest("simple_python", "multiple", "multiple")
	m.Sources = []catalog.Source{
		{Name: "BFCL_v4_simple_python.json", URI: "embedded://bfcl/BFCL_v4_simple_python.json", SHA256: strings.Repeat("1", 64), Bytes: 2048},
		{Name: "gen/unit-00000.jsonl", URI: "store:staging/sources/" + strings.Repeat("2", 64), SHA256: strings.Repeat("2", 64), Bytes: 99},
	}
	m.Params = map[string]string{"candidates": "baseline/noisy-0.3@0.7x2", "sample_seed": "7"}
	m.Stats = map[string]int64{"rejected_duplicate": 2}
	l, err := release.Plan(m, func(l string) string { return l })
	if err != nil {
		t.Fatal(err)
	}
	card, err := release.Card(l, m, release.CardInfo{PrettyName: "BFCL v4 (benchline build)", License: "apache-2.0",
		Description: "Function calling checked by AST.",
		Columns:     []pq.Column{{Name: "id", Type: "string"}, {Name: "num_turns", Type: "int32"}, {Name: "ground_truth_json", Type: "string", Nullable: true}}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "card.md")
	golden.Check(t, path, card, *update, "go test -update rewrites it")
	fm, body, err := release.ParseCard(card)
	if err != nil {
		t.Fatal(err)
	}
	if fm.License != "apache-2.0" || fm.PrettyName != "BFCL v4 (benchline build)" || !reflect.DeepEqual(fm.SizeCategories, []string{"n<1K"}) {
		t.Errorf("front matter %+v", fm)
	}
	if len(fm.Configs) != 2 || fm.Configs[0].ConfigName != "multiple" || fm.Configs[1].ConfigName != "simple_python" {
		t.Fatalf("configs %+v", fm.Configs)
	}
	for i, c := range fm.Configs {
		if len(c.DataFiles) != 1 || c.DataFiles[0].Split != "test" || c.DataFiles[0].Path != l.Configs[i].Splits[0].Glob {
			t.Errorf("config %s data_files %+v", c.ConfigName, c.DataFiles)
		}
		if fm.DatasetInfo[i].Splits[0].NumExamples != l.Configs[i].Splits[0].Rows || len(fm.DatasetInfo[i].Features) != 3 {
			t.Errorf("dataset_info %+v", fm.DatasetInfo[i])
		}
	}
	for _, s := range []string{"benchline dataset build bfcl --source embedded://bfcl --param candidates=baseline/noisy-0.3@0.7x2 --param sample_seed=7",
		strings.Repeat("1", 64), "rejected_duplicate: 2", "| multiple | test | 2 | 50 |"} {
		if !strings.Contains(body, s) {
			t.Errorf("card body lacks %q", s)
		}
	}
}

func TestCardNestedColumnsLeaveFeaturesOut(t *testing.T) {
	l, err := release.Plan(manifest("x"), nil)
	if err != nil {
		t.Fatal(err)
	}
	fm := release.Front(l, release.CardInfo{Columns: []pq.Column{{Name: "id", Type: "string"}, {Name: "metrics", Type: "map", Nested: true}}})
	if fm.DatasetInfo[0].Features != nil || fm.License != "other" {
		t.Errorf("front matter %+v", fm)
	}
}

func TestBuildCommandQuotes(t *testing.T) {
	m := catalog.Manifest{Name: "toolpref", Sources: []catalog.Source{{Name: "a/b.json", URI: "s3://my bucket/src/a/b.json"}},
		Params: map[string]string{"candidates": "x@0.7x2,y@0x1", "note": "it's"}}
	want := `benchline dataset build toolpref --source 's3://my bucket/src' --param candidates=x@0.7x2,y@0x1 --param 'note=it'\''s'`
	if got := release.BuildCommand(m); got != want {
		t.Errorf("BuildCommand = %s\nwant %s", got, want)
	}
	// A local directory's path is not published: the command says DIR.
	m.Sources = []catalog.Source{{Name: "a/b.json", URI: "a/b.json"}}
	want = `benchline dataset build toolpref --source DIR --param candidates=x@0.7x2,y@0x1 --param 'note=it'\''s'`
	if got := release.BuildCommand(m); got != want {
		t.Errorf("BuildCommand = %s\nwant %s", got, want)
	}
}

func TestDirStore(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s := release.DirStore{Root: root}
	if err := blob.PutBytes(ctx, s, "a/b/c.txt", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if b, err := blob.GetBytes(ctx, s, "a/b/c.txt"); err != nil || string(b) != "hello" {
		t.Fatalf("get: %q, %v", b, err)
	}
	if info, err := s.Head(ctx, "a/b/c.txt"); err != nil || info.Size != 5 {
		t.Fatalf("head: %+v, %v", info, err)
	}
	if _, err := s.Head(ctx, "a/b"); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("head of a directory: %v", err)
	}
	if err := s.PutIfAbsent(ctx, "a/b/c.txt", strings.NewReader("x"), 1); !errors.Is(err, blob.ErrExists) {
		t.Errorf("put-if-absent over a file: %v", err)
	}
	if infos, err := s.List(ctx, "a/"); err != nil || len(infos) != 1 || infos[0].Key != "a/b/c.txt" {
		t.Errorf("list: %+v, %v", infos, err)
	}
	for _, bad := range []string{"../x", "a/../../x", "/abs", "", "a\\b"} {
		if err := blob.PutBytes(ctx, s, bad, nil); err == nil {
			t.Errorf("put %q: no error", bad)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(root, "a", "b")); len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
	if err := s.Delete(ctx, "a/b/c.txt"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "a/b/c.txt"); err != nil {
		t.Errorf("delete of a missing file: %v", err)
	}
	if _, err := s.Get(ctx, "a/b/c.txt"); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("get after delete: %v", err)
	}
}

func TestDetailsCard(t *testing.T) {
	if got := release.DetailsName("bfcl", "openai/gpt-4o-mini"); got != "details-bfcl-openai_gpt_4o_mini" {
		t.Errorf("DetailsName = %s", got)
	}
	m := manifest("", "")
	m.Name, m.Version = release.DetailsName("bfcl", "baseline/reference"), "rabc"
	l, err := release.Plan(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	card, err := release.DetailsCard(l, release.Details{Run: "rabc", Dataset: "bfcl", DatasetVersion: "v1", Model: "baseline/reference",
		Baseline: true, Samples: 30, Metrics: []release.DetailsMetric{{Name: "accuracy", Mean: 1, CILow: 1, CIHigh: 1, N: 30}},
		Command: "benchline eval --dataset bfcl@v1 --model baseline/reference"}, release.CardInfo{PrettyName: "x", Columns: []pq.Column{{Name: "sample_index", Type: "int64"}}})
	if err != nil {
		t.Fatal(err)
	}
	fm, body, err := release.ParseCard(card)
	if err != nil || len(fm.Configs) != 1 || fm.Configs[0].DataFiles[0].Path != "data/test-*.parquet" || fm.DatasetInfo[0].Splits[0].NumExamples != 30 {
		t.Fatalf("front matter %+v, %v", fm, err)
	}
	for _, want := range []string{"run `rabc`", "not an LLM", "| accuracy | 1.0000 | [1.0000, 1.0000] | 30 |", "| sample_index | int64 | false |",
		"```sh\nbenchline eval --dataset bfcl@v1 --model baseline/reference\n```"} {
		if !strings.Contains(body, want) {
			t.Errorf("details card lacks %q:\n%s", want, body)
		}
	}
}
