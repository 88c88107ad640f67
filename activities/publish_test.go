package activities

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/release"
	"github.com/benchline/benchline/internal/runs"
)

// publishAll runs the publishing activities in the workflow's order.
func publishAll(t *testing.T, a *Publish, in PlanPublishInput) (FinishPublishResult, error) {
	t.Helper()
	ctx := context.Background()
	plan, err := a.PlanPublish(ctx, in)
	if err != nil {
		return FinishPublishResult{}, err
	}
	if !plan.Published {
		for _, f := range plan.Layout.Files {
			cin := CopyReleaseFileInput{Dest: plan.Dest, Dataset: plan.Layout.Dataset, Version: plan.Layout.Version, SrcDir: plan.Layout.SrcDir, File: f}
			if err := a.CopyReleaseFile(ctx, cin); err != nil {
				if aerr := a.AbortPublish(ctx, AbortPublishInput{Dest: plan.Dest, Layout: plan.Layout}); aerr != nil {
					t.Errorf("abort: %v", aerr)
				}
				return FinishPublishResult{}, err
			}
		}
	}
	return a.FinishPublish(ctx, FinishPublishInput(plan))
}

// TestPublishToDirectory publishes a version to a local directory through
// the activities: files at their layout paths with the manifest's bytes, a
// card, latest; again: reused, nothing rewritten; a corrupt version: a
// non-retryable error naming the file, no release, no staging, latest kept.
func TestPublishToDirectory(t *testing.T) {
	ctx := context.Background()
	store := blobtest.NewMemory()
	m := publishRows(t, store)
	a := &Publish{Store: store, Descriptions: map[string]string{"d": "A test dataset."}}
	dest := filepath.Join(t.TempDir(), "rel")

	res, err := publishAll(t, a, PlanPublishInput{Ref: "d", Dest: dest})
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dest, "d", "v0001")
	if res.Release != root || res.Files != 2 || res.Rows != 60 || res.Reused || !res.LatestMoved {
		t.Errorf("result %+v", res)
	}
	for i, f := range m.Files {
		got, err := os.ReadFile(filepath.Join(root, "data", fmt.Sprintf("test-%05d-of-00002.parquet", i)))
		want, _ := blob.GetBytes(ctx, store, catalog.Dir("d", "0001")+f.Path)
		if err != nil || string(got) != string(want) {
			t.Errorf("file %d: %v, %d bytes, want %d", i, err, len(got), len(want))
		}
	}
	card, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	fm, body, err := release.ParseCard(string(card))
	if err != nil || len(fm.Configs) != 1 || fm.Configs[0].DataFiles[0].Path != "data/test-*.parquet" || fm.License != "other" ||
		!strings.Contains(body, "A test dataset.") || !strings.Contains(body, "| id | string | false |") {
		t.Errorf("card (%v):\n%s", err, card)
	}

	res, err = publishAll(t, a, PlanPublishInput{Ref: "d@0001", Dest: dest})
	if err != nil || !res.Reused || res.LatestMoved {
		t.Errorf("second publish %+v, %v", res, err)
	}

	// A second version whose part 1 is corrupt.
	m2 := m
	m2.Version = "0002"
	for i, f := range m.Files {
		b, _ := blob.GetBytes(ctx, store, catalog.Dir("d", "0001")+f.Path)
		if err := blob.PutBytes(ctx, store, catalog.PartKey("d", "0002", i), b); err != nil {
			t.Fatal(err)
		}
	}
	if err := catalog.Publish(ctx, store, m2, "# card", catalog.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	overwriteSameSize(t, store, catalog.PartKey("d", "0002", 1))
	_, err = publishAll(t, a, PlanPublishInput{Ref: "d@0002", Dest: dest})
	if !isInvalidInput(err) || !strings.Contains(err.Error(), "data/part-00001.parquet") || !strings.Contains(err.Error(), "sha256") {
		t.Fatalf("publish of a corrupt version: %v", err)
	}
	// A truncated part: its size is checked before the copy.
	b, _ := blob.GetBytes(ctx, store, catalog.PartKey("d", "0002", 1))
	if err := blob.PutBytes(ctx, store, catalog.PartKey("d", "0002", 1), b[:len(b)/2]); err != nil {
		t.Fatal(err)
	}
	_, err = publishAll(t, a, PlanPublishInput{Ref: "d@0002", Dest: dest})
	if !isInvalidInput(err) || !strings.Contains(err.Error(), "data/part-00001.parquet is ") {
		t.Fatalf("publish of a truncated version: %v", err)
	}
	for _, p := range []string{"v0002", ".staging-v0002"} {
		if _, err := os.Stat(filepath.Join(dest, "d", p)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s after a failed publish: %v", p, err)
		}
	}
	var l catalog.Latest
	if err := blob.GetJSON(ctx, release.DirStore{Root: dest}, release.LatestKey("d"), &l); err != nil || l.Version != "0001" {
		t.Errorf("latest %+v, %v", l, err)
	}
}

func TestPlanPublishFailures(t *testing.T) {
	store := blobtest.NewMemory()
	publishRows(t, store)
	a := &Publish{Store: store}
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ ref, dest, want string }{
		{"d@0009", t.TempDir(), "d@0009"},
		{"nope", t.TempDir(), "nope has no published version"},
		{"d", "rel", "must be an absolute path"},
		{"d", "http://x/y", "want s3://bucket/prefix or a local directory"},
		{"d", filepath.Join(file, "sub"), "is not writable"},
		{"d", "s3://b/p", "no S3 settings"},
		{"d@../../../runs/X", t.TempDir(), "invalid name"},
		{"../d@latest", t.TempDir(), "invalid name"},
	} {
		_, err := a.PlanPublish(context.Background(), PlanPublishInput{Ref: tc.ref, Dest: tc.dest})
		if !isInvalidInput(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("PlanPublish(%s, %s) = %v, want non-retryable with %q", tc.ref, tc.dest, err, tc.want)
		}
	}
}

// TestPublishStaysInsideDest is finding 5 of issue 23: a local publish
// through a symlinked DEST/NAME (or DEST/NAME/vV) is refused before
// anything is written, nothing lands where the link points, and no
// staging folder is left; a garbage latest at the destination and a
// version directory that is not a release fail at once, naming them, and
// leave no staging folder either.
func TestPublishStaysInsideDest(t *testing.T) {
	ctx := context.Background()
	store := blobtest.NewMemory()
	publishRows(t, store)
	a := &Publish{Store: store}
	elsewhere := t.TempDir()
	for _, link := range []string{"d", "d/v0001", "d/.staging-v0001"} {
		dest := t.TempDir()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dest, link)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(elsewhere, filepath.Join(dest, link)); err != nil {
			t.Fatal(err)
		}
		_, err := publishAll(t, a, PlanPublishInput{Ref: "d@0001", Dest: dest})
		if !isInvalidInput(err) || !strings.Contains(err.Error(), "symbolic link") || !strings.Contains(err.Error(), filepath.Join(dest, link)) {
			t.Errorf("publish through DEST/%s -> elsewhere: %v", link, err)
		}
		if ents, _ := os.ReadDir(elsewhere); len(ents) > 0 {
			t.Fatalf("publish through DEST/%s wrote %d entries outside DEST", link, len(ents))
		}
	}
	// A DirStore never writes through a link, whoever calls it.
	dest := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(dest, "d")); err != nil {
		t.Fatal(err)
	}
	if err := blob.PutBytes(ctx, release.DirStore{Root: dest}, "d/x", []byte("x")); !errors.Is(err, release.ErrDest) {
		t.Errorf("DirStore.Put through a link: %v", err)
	}

	garbage := t.TempDir()
	if err := blob.PutBytes(ctx, release.DirStore{Root: garbage}, "d/latest", []byte("\x00garbage")); err != nil {
		t.Fatal(err)
	}
	_, err := publishAll(t, a, PlanPublishInput{Ref: "d@0001", Dest: garbage})
	if !isInvalidInput(err) || !strings.Contains(err.Error(), filepath.Join(garbage, "d", "latest")) || !strings.Contains(err.Error(), "not a latest pointer") {
		t.Errorf("publish onto a garbage latest: %v", err)
	}
	notRelease := t.TempDir()
	if err := os.MkdirAll(filepath.Join(notRelease, "d", "v0001"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = publishAll(t, a, PlanPublishInput{Ref: "d@0001", Dest: notRelease})
	if !isInvalidInput(err) || !strings.Contains(err.Error(), "already exists and is not a release") {
		t.Errorf("publish onto a version directory that is not a release: %v", err)
	}
	for _, d := range []string{garbage, notRelease} {
		if _, err := os.Stat(filepath.Join(d, "d", ".staging-v0001")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("staging left in %s: %v", d, err)
		}
	}
}

type statusErr int

func (e statusErr) Error() string       { return fmt.Sprintf("HTTP %d", int(e)) }
func (e statusErr) HTTPStatusCode() int { return int(e) }

func TestDestError(t *testing.T) {
	d := release.Dest{Bucket: "b", Prefix: "p"}
	for _, tc := range []struct {
		err       error
		permanent bool
	}{
		{fs.ErrPermission, true},
		{&fs.PathError{Op: "open", Path: "/x", Err: syscall.EROFS}, true},
		{&fs.PathError{Op: "mkdir", Path: "/f/x", Err: syscall.ENOTDIR}, true},
		{fmt.Errorf("put: %w", statusErr(403)), true},
		{fmt.Errorf("put: %w", statusErr(404)), true},
		{fmt.Errorf("put: %w", statusErr(503)), false},
		{fmt.Errorf("put: %w", statusErr(429)), false},
		{errors.New("connection reset"), false},
		{&fs.PathError{Op: "write", Path: "/x", Err: syscall.ENOSPC}, false},
	} {
		err := destError(d, tc.err)
		if isInvalidInput(err) != tc.permanent {
			t.Errorf("destError(%v) = %v: permanent %v, want %v", tc.err, err, isInvalidInput(err), tc.permanent)
		}
		if tc.permanent && !strings.Contains(err.Error(), "s3://b/p") {
			t.Errorf("destError(%v) = %v does not name the destination", tc.err, err)
		}
	}
}

// TestPublishRun publishes a finished run's result shards as a details
// release, and refuses a run that does not exist or has not finished.
func TestPublishRun(t *testing.T) {
	ctx := context.Background()
	store := blobtest.NewMemory()
	a := &Publish{Store: store}
	const run = "r0123456789abcde"
	seed := 7
	plan := runs.Plan{RunID: run, Dataset: "bfcl", DatasetVersion: "v9", Model: "baseline/noisy-0.3", TaskVersion: "2",
		Seed: &seed, ShardSize: 30, Samples: 60, Shards: 2, Judges: map[string]string{"judge": "baseline/judge"}}
	if err := blob.PutJSON(ctx, store, runs.PlanKey(run), plan); err != nil {
		t.Fatal(err)
	}
	for s := range 2 {
		rows := make([]item, 30)
		for i := range rows {
			rows[i].ID = fmt.Sprintf("s%d-%02d", s, i)
		}
		w := pq.NewWriter[item](ctx, store, runs.ShardKey(run, s), pq.Options{})
		if err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	dest := t.TempDir()
	if _, err := a.PlanPublish(ctx, PlanPublishInput{Run: run, Dest: dest}); !isInvalidInput(err) || !strings.Contains(err.Error(), "has not finished") {
		t.Fatalf("publish of an unfinished run: %v", err)
	}
	if _, err := a.PlanPublish(ctx, PlanPublishInput{Run: "rnosuch", Dest: dest}); !isInvalidInput(err) || !strings.Contains(err.Error(), "run rnosuch does not exist") {
		t.Fatalf("publish of a missing run: %v", err)
	}
	sum := aggregate.Summary{RunID: run, Baseline: true, Metrics: []aggregate.MetricStat{{Name: "accuracy", N: 60, Mean: 0.7, CILow: 0.6, CIHigh: 0.8}}}
	if err := blob.PutJSON(ctx, store, runs.SummaryKey(run), sum); err != nil {
		t.Fatal(err)
	}
	p, err := a.PlanPublish(ctx, PlanPublishInput{Run: run, Dest: dest})
	if err != nil {
		t.Fatal(err)
	}
	res, err := publishAll(t, a, PlanPublishInput{Run: run, Dest: dest})
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dest, "details-bfcl-baseline_noisy_0_3", "v"+run)
	if res.Release != root || res.Files != 2 || res.Rows != 60 || p.Layout.Dataset != "details-bfcl-baseline_noisy_0_3" {
		t.Errorf("result %+v, layout %+v", res, p.Layout)
	}
	card, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	fm, body, err := release.ParseCard(string(card))
	if err != nil || len(fm.Configs) != 1 || fm.DatasetInfo[0].Splits[0].NumExamples != 60 {
		t.Errorf("card front matter %+v, %v", fm, err)
	}
	for _, want := range []string{"model `baseline/noisy-0.3` on dataset `bfcl@v9`", "deterministic baseline, not an LLM",
		"| accuracy | 0.7000 | [0.6000, 0.8000] | 60 |", "benchline eval --dataset bfcl@v9 --model baseline/noisy-0.3 --judge judge=baseline/judge --seed 7 --shard-size 30"} {
		if !strings.Contains(body, want) {
			t.Errorf("card lacks %q:\n%s", want, body)
		}
	}
	for s := range 2 {
		got, _ := os.ReadFile(filepath.Join(root, "data", fmt.Sprintf("test-%05d-of-00002.parquet", s)))
		want, _ := blob.GetBytes(ctx, store, runs.ShardKey(run, s))
		if len(want) == 0 || string(got) != string(want) {
			t.Errorf("shard %d: %d bytes copied, %d in the run", s, len(got), len(want))
		}
	}
}

// TestPublishVariantKeepsLatest: a release of a variant (a version built
// with parameters) does not move the destination's latest.
func TestPublishVariantKeepsLatest(t *testing.T) {
	ctx := context.Background()
	store := blobtest.NewMemory()
	m := publishRows(t, store)
	a := &Publish{Store: store}
	dest := filepath.Join(t.TempDir(), "rel")
	if _, err := publishAll(t, a, PlanPublishInput{Ref: "d", Dest: dest}); err != nil {
		t.Fatal(err)
	}
	v := m
	v.Version, v.Variant = "0009", true
	for i, f := range m.Files {
		b, _ := blob.GetBytes(ctx, store, catalog.Dir("d", "0001")+f.Path)
		if err := blob.PutBytes(ctx, store, catalog.PartKey("d", "0009", i), b); err != nil {
			t.Fatal(err)
		}
	}
	if err := catalog.Publish(ctx, store, v, "# card", catalog.PublishOptions{Tag: "var"}); err != nil {
		t.Fatal(err)
	}
	res, err := publishAll(t, a, PlanPublishInput{Ref: "d@var", Dest: dest})
	if err != nil || res.LatestMoved {
		t.Fatalf("variant release: %+v, %v", res, err)
	}
	var l catalog.Latest
	if err := blob.GetJSON(ctx, release.DirStore{Root: dest}, release.LatestKey("d"), &l); err != nil || l.Version != "0001" {
		t.Errorf("latest %+v, %v; want 0001", l, err)
	}
}
