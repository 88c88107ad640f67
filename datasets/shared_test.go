package datasets_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/source"
)

func TestEachLine(t *testing.T) {
	long := strings.Repeat("x", 3<<20) // longer than the reader's buffer
	in := "a\n\n  \n" + long + "\nlast-without-newline"
	var got []string
	err := datasets.EachLine(strings.NewReader(in), "mem://f", func(n int, raw []byte) error {
		got = append(got, fmt.Sprintf("%d:%d", n, len(strings.TrimSpace(string(raw)))))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("[1:1 4:%d 5:20]", len(long))
	if fmt.Sprint(got) != want {
		t.Fatalf("lines %v, want %v (blank lines skipped, numbers kept)", got, want)
	}
	stop := errors.New("stop")
	if err := datasets.EachLine(strings.NewReader("a\nb\n"), "mem://f", func(int, []byte) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("callback error not returned: %v", err)
	}
}

func TestWriteRows(t *testing.T) {
	type row struct {
		N int64 `parquet:"n"`
	}
	rows := make([]row, 1000)
	for i := range rows {
		rows[i].N = int64(i)
	}
	env := datasets.Env{Store: blobtest.NewMemory()}
	var progress []int64
	info, err := datasets.WriteRows(context.Background(), env, "k", rows, map[string]string{"a": "b"}, func(n int64) { progress = append(progress, n) })
	if err != nil {
		t.Fatal(err)
	}
	if info.Rows != 1000 || fmt.Sprint(progress) != "[256 512 768 1000]" {
		t.Fatalf("info %+v, progress %v", info, progress)
	}
	back, err := pq.ReadAll[row](context.Background(), env.Store, "k")
	if err != nil || len(back) != 1000 || back[999].N != 999 {
		t.Fatalf("read back %d rows: %v", len(back), err)
	}
}

func TestPartSources(t *testing.T) {
	plan := datasets.Plan{Dataset: "d", Sources: []catalog.Source{{Name: "a", SHA256: "aa"}, {Name: "b", SHA256: "bb"}}}
	got, err := datasets.PartSources(plan, datasets.Part{Label: "p", Inputs: []string{"bb", "aa"}})
	if err != nil || len(got) != 2 || got[0].Name != "b" || got[1].Name != "a" {
		t.Fatalf("PartSources = %v, %v; want b, a in the inputs' order", got, err)
	}
	if _, err := datasets.PartSources(plan, datasets.Part{Label: "p", Inputs: []string{"aa", "cc"}}); err == nil ||
		!strings.Contains(err.Error(), "d: part p: input cc is not among the plan's sources") {
		t.Fatalf("missing input: err = %v", err)
	}
}

// TestEachLineRejectsInvalidUTF8 is finding 3 of issue 11: a source line
// that is not valid UTF-8 (the bytes \xff\xfe inside a JSON string) is bad
// input naming the file, the line and the byte, and the line never reaches
// the builder.
func TestEachLineRejectsInvalidUTF8(t *testing.T) {
	in := "{\"q\": \"fine\"}\n{\"q\": \"a\xff\xfeb\"}\n{\"q\": \"after\"}\n"
	var seen []int
	err := datasets.EachLine(strings.NewReader(in), "mem://f.json", func(n int, raw []byte) error {
		seen = append(seen, n)
		return nil
	})
	var ie *datasets.InputError
	if !errors.As(err, &ie) {
		t.Fatalf("EachLine = %v, want an *InputError", err)
	}
	if ie.File != "mem://f.json" || ie.Line != 2 || !strings.Contains(ie.Msg, "UTF-8") || !strings.Contains(ie.Msg, "byte 9") {
		t.Errorf("error %q: want mem://f.json line 2, not valid UTF-8 at byte 9", ie)
	}
	if fmt.Sprint(seen) != "[1]" {
		t.Errorf("lines given to the builder: %v, want [1]", seen)
	}
}

// TestWriteRowsChecksTheSchemaRules: rows a builder computed (not read line
// by line) are checked before anything is written: every string is UTF-8
// and every *_json column holds JSON; a violation is bad input naming the
// row's source file and line when the row has them, and nothing is written.
func TestWriteRowsChecksTheSchemaRules(t *testing.T) {
	type row struct {
		ID         string   `parquet:"id"`
		Note       *string  `parquet:"note,optional"`
		TurnsJSON  string   `parquet:"turns_json"`
		Tags       []string `parquet:"tags,list"`
		SourceFile string   `parquet:"source_file"`
		SourceLine int32    `parquet:"source_line"`
	}
	bad := "x\xffy"
	tests := []struct {
		name string
		row  row
		says string
	}{
		{"invalid UTF-8", row{ID: bad, TurnsJSON: "[]", SourceFile: "s.json", SourceLine: 7}, "s.json:7: row 1 of k: column id: not valid UTF-8 at byte 2"},
		{"invalid UTF-8 behind a pointer", row{ID: "a", Note: &bad, TurnsJSON: "[]", SourceFile: "s.json", SourceLine: 7}, "column note: not valid UTF-8"},
		{"invalid UTF-8 in a list", row{ID: "a", TurnsJSON: "[]", Tags: []string{"ok", bad}}, "k: row 1 of k: column tags: not valid UTF-8"},
		{"not JSON", row{ID: "a", TurnsJSON: "[{", SourceFile: "s.json", SourceLine: 7}, "s.json:7: row 1 of k: column turns_json: not JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := datasets.Env{Store: blobtest.NewMemory()}
			rows := []row{{ID: "fine", TurnsJSON: "[]"}, tc.row}
			_, err := datasets.WriteRows(context.Background(), env, "k", rows, nil, func(int64) {})
			var ie *datasets.InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("WriteRows = %v, want an *InputError saying %q", err, tc.says)
			}
			if _, err := env.Store.Head(context.Background(), "k"); !errors.Is(err, blob.ErrNotFound) {
				t.Errorf("a part was written: Head = %v", err)
			}
		})
	}
}

func TestLocate(t *testing.T) {
	dir := t.TempDir()
	fixtures := func() source.Location { return source.FS(fstest.MapFS{}, "embedded://toy") }
	tests := []struct {
		src     string
		wantURI string // the location's URI of "f", or "" when Locate fails
		wantErr error
	}{
		{"", "embedded://toy/f", nil},
		{"embedded://toy", "embedded://toy/f", nil},
		{dir, filepath.Join(dir, "f"), nil},
		{"https://example.invalid/data/", "https://example.invalid/data/f", nil},
		{filepath.Join(dir, "missing"), "", source.ErrNotFound},
		{"s3://bucket/prefix", "", source.ErrInvalid}, // no S3 configuration in env
		{"embedded://other", "", source.ErrNotFound},  // another builder's fixtures: a relative directory
	}
	for _, tc := range tests {
		loc, err := datasets.Locate(context.Background(), datasets.Env{}, tc.src, "embedded://toy", fixtures)
		switch {
		case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
			t.Errorf("Locate(%q) = %v, want %v", tc.src, err, tc.wantErr)
		case tc.wantErr == nil && (err != nil || loc.URI("f") != tc.wantURI):
			t.Errorf("Locate(%q) = %v, %v, want %s", tc.src, loc, err, tc.wantURI)
		}
	}
}

func TestStageAll(t *testing.T) {
	ctx := context.Background()
	env := datasets.Env{Store: blobtest.NewMemory()}
	loc := source.FS(fstest.MapFS{"b.jsonl": {Data: []byte("bb\n")}, "a.jsonl": {Data: []byte("a\n")}}, "embedded://toy")
	srcs, err := datasets.StageAll(ctx, env, loc, []string{"b.jsonl", "a.jsonl"})
	if err != nil || len(srcs) != 2 || srcs[0].Name != "b.jsonl" || srcs[1].Name != "a.jsonl" || srcs[0].Bytes != 3 ||
		srcs[1].URI != "embedded://toy/a.jsonl" {
		t.Fatalf("StageAll = %+v, %v; want both, in the order given", srcs, err)
	}
	for _, s := range srcs {
		if ok, err := blob.Exists(ctx, env.Store, datasets.StagedKey(s.SHA256)); err != nil || !ok {
			t.Errorf("%s is not staged (%v)", s.Name, err)
		}
	}
	if srcs, err := datasets.StageAll(ctx, env, loc, []string{"a.jsonl", "missing.jsonl"}); srcs != nil || !errors.Is(err, source.ErrNotFound) {
		t.Errorf("StageAll with a missing file = %+v, %v; want nothing and the file's error", srcs, err)
	}
}
