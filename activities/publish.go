package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/names"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/release"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/internal/source"
)

// Publish are the activities that copy a dataset version to a release
// location (internal/release): plan the layout, copy and verify each file,
// then write the card and move latest.
type Publish struct {
	Store      blob.Store
	Benchmarks *benchmark.Registry
	// OpenS3 opens the destination bucket of an s3:// release with the
	// worker's S3 endpoint and credentials.
	OpenS3 source.S3Opener
	// Descriptions are the registered benchmarks' one-line descriptions,
	// by dataset name, for the card.
	Descriptions map[string]string
}

// PlanPublishInput names a version (NAME, NAME@latest or NAME@VERSION) and
// a destination (s3://bucket/prefix or an absolute local directory).
type PlanPublishInput struct {
	Ref  string
	Dest string
	// Run, when set, publishes that evaluation run's per-sample results as
	// a details release (release.DetailsName) instead of Ref.
	Run string `json:",omitempty"`
}

// PlanPublishResult is the release's layout; Published is true when the
// release is already there with the same layout (nothing is copied again).
type PlanPublishResult struct {
	Dest      release.Dest
	Layout    release.Layout
	Published bool
}

// target is where a release's files are written: the destination's store,
// the prefix files are staged under and the prefix of the visible release.
type target struct {
	dest  release.Dest
	store blob.Store
	stage string
	final string
}

func (a *Publish) target(ctx context.Context, d release.Dest, dataset, version string) (target, error) {
	t := target{dest: d, final: release.Root(dataset, version)}
	if d.IsS3() {
		if a.OpenS3 == nil {
			return t, invalid(fmt.Errorf("%w: %s: this worker has no S3 settings", release.ErrDest, d))
		}
		s, err := a.OpenS3(ctx, d.Bucket, d.Prefix)
		if err != nil {
			return t, destError(d, err)
		}
		// S3 has no rename: files go to their final keys, and the release
		// becomes visible with its card and release.json, written after
		// every file was verified, then latest.
		t.store, t.stage = s, t.final
		return t, nil
	}
	t.store, t.stage = release.DirStore{Root: d.Dir}, release.StagingRoot(dataset, version)
	return t, nil
}

// PlanPublish resolves the version, lays out its release and checks the
// destination: a local directory must be creatable and writable. A
// missing dataset or version, a malformed or unwritable destination, and a
// release already there with another layout fail at once.
func (a *Publish) PlanPublish(ctx context.Context, in PlanPublishInput) (PlanPublishResult, error) {
	d, err := release.ParseDest(in.Dest)
	if err != nil {
		return PlanPublishResult{}, invalid(err)
	}
	if in.Run != "" {
		err = names.RunID(in.Run)
	} else {
		_, _, err = names.ParseRef(in.Ref)
	}
	if err != nil {
		return PlanPublishResult{}, invalid(fmt.Errorf("publish: %w", err))
	}
	var l release.Layout
	if in.Run != "" {
		l, err = a.planRun(ctx, in.Run)
	} else {
		l, err = a.planVersion(ctx, in.Ref)
	}
	if err != nil {
		return PlanPublishResult{}, err
	}
	t, err := a.target(ctx, d, l.Dataset, l.Version)
	if err != nil {
		return PlanPublishResult{}, err
	}
	if !d.IsS3() {
		dir := filepath.Join(d.Dir, l.Dataset)
		for _, p := range []string{t.stage, t.final} {
			if err := release.NoLinks(d.Dir, filepath.Join(d.Dir, filepath.FromSlash(p))); err != nil {
				return PlanPublishResult{}, invalid(err)
			}
		}
		if err := checkWritableDir(dir); err != nil {
			return PlanPublishResult{}, destError(d, err)
		}
	}
	if _, err := destLatest(ctx, t, l.Dataset); err != nil {
		return PlanPublishResult{}, err
	}
	res := PlanPublishResult{Dest: d, Layout: l}
	var old release.Layout
	err = blob.GetJSON(ctx, t.store, t.final+release.LayoutPath, &old)
	switch {
	case errors.Is(err, blob.ErrNotFound):
		if !d.IsS3() {
			if _, err := os.Lstat(filepath.Join(d.Dir, filepath.FromSlash(t.final))); err == nil {
				return res, invalid(fmt.Errorf("publish: %s@%s: %s already exists and is not a release (it has no %s); remove it or publish elsewhere",
					l.Dataset, l.Version, d.URI(t.final), release.LayoutPath))
			}
		}
	case err != nil:
		return res, destError(d, err)
	case reflect.DeepEqual(old, l):
		res.Published = true
	default:
		return res, invalid(fmt.Errorf("publish: %s@%s: %s already holds a release with another layout; remove it or publish elsewhere",
			l.Dataset, l.Version, d.URI(t.final)))
	}
	return res, nil
}

// planVersion lays out a dataset version's release.
func (a *Publish) planVersion(ctx context.Context, ref string) (release.Layout, error) {
	m, err := catalog.Resolve(ctx, a.Store, ref)
	if err != nil {
		return release.Layout{}, classify(err)
	}
	l, err := release.Plan(m, a.configOf(m.Name))
	if err != nil {
		return release.Layout{}, invalid(err)
	}
	l.SrcDir = catalog.Dir(m.Name, m.Version)
	l.Variant = m.Variant
	return l, nil
}

// planRun lays out a finished run's per-sample results (its result shards,
// hashed here since no manifest records their sha256) as the version
// run-id of the dataset release.DetailsName(dataset, model).
func (a *Publish) planRun(ctx context.Context, run string) (release.Layout, error) {
	var plan runs.Plan
	if err := blob.GetJSON(ctx, a.Store, runs.PlanKey(run), &plan); errors.Is(err, blob.ErrNotFound) {
		return release.Layout{}, invalid(fmt.Errorf("publish: run %s does not exist", run))
	} else if err != nil {
		return release.Layout{}, err
	}
	if ok, err := blob.Exists(ctx, a.Store, runs.SummaryKey(run)); err != nil {
		return release.Layout{}, err
	} else if !ok {
		return release.Layout{}, invalid(fmt.Errorf("publish: run %s has not finished (no %s)", run, runs.SummaryKey(run)))
	}
	m := catalog.Manifest{Name: release.DetailsName(plan.Dataset, plan.Model), Version: run}
	for i := range plan.Shards {
		key := runs.ShardKey(run, i)
		rows, err := pq.Rows(ctx, a.Store, key)
		if err != nil {
			return release.Layout{}, classify(err)
		}
		rc, err := a.Store.Get(ctx, key)
		if err != nil {
			return release.Layout{}, err
		}
		h := sha256.New()
		n, err := io.Copy(h, rc)
		rc.Close()
		if err != nil {
			return release.Layout{}, fmt.Errorf("publish: read %s: %w", key, err)
		}
		m.Files = append(m.Files, catalog.File{Path: strings.TrimPrefix(key, runs.Dir(run)), Rows: rows, Bytes: n, SHA256: hex.EncodeToString(h.Sum(nil))})
		m.Rows += rows
	}
	l, err := release.Plan(m, nil)
	if err != nil {
		return release.Layout{}, invalid(err)
	}
	l.SrcDir, l.Run = runs.Dir(run), run
	return l, nil
}

// configOf is the builder's part-to-config mapping (datasets.Configured),
// or nil for one config.
func (a *Publish) configOf(dataset string) func(string) string {
	if a.Benchmarks == nil {
		return nil
	}
	b, err := a.Benchmarks.Builder(dataset) // a task file's has one config
	if err != nil {
		return nil
	}
	c, ok := b.(datasets.Configured)
	if !ok {
		return nil
	}
	return func(label string) string {
		if label == "" { // a manifest written before parts had labels
			return release.DefaultConfig
		}
		return c.ConfigOf(label)
	}
}

// checkWritableDir creates dir and a file in it, and removes the file.
func checkWritableDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// CopyReleaseFileInput is one file of a release to copy.
type CopyReleaseFileInput struct {
	Dest    release.Dest
	Dataset string
	Version string
	// SrcDir is the key prefix of File.Src (release.Layout.SrcDir); empty
	// means the dataset version's catalog.Dir.
	SrcDir string `json:",omitempty"`
	File   release.File
}

// CopyReleaseFile copies one data file of the version to its place in the
// release's staging area, then reads the copy back and checks its size
// and sha256 against the manifest. A copy already there and verified is
// left alone, so a retry copies only what is missing. A source whose bytes
// do not hash to the manifest's sha256 (a corrupt version) fails at once,
// naming the file, and its copy is deleted; a copy that reads back wrong
// is deleted and retried.
func (a *Publish) CopyReleaseFile(ctx context.Context, in CopyReleaseFileInput) error {
	t, err := a.target(ctx, in.Dest, in.Dataset, in.Version)
	if err != nil {
		return err
	}
	f := in.File
	key := t.stage + f.Path
	uri := in.Dest.URI(key)
	if ok, err := hasCopy(ctx, t.store, key, f); err != nil {
		return destError(in.Dest, err)
	} else if ok {
		return nil
	}
	stop := heartbeatEvery(ctx, 5*time.Second, nil)
	defer stop()
	src := in.SrcDir + f.Src
	if in.SrcDir == "" {
		src = catalog.Dir(in.Dataset, in.Version) + f.Src
	}
	info, err := a.Store.Head(ctx, src)
	if errors.Is(err, blob.ErrNotFound) {
		return invalid(fmt.Errorf("%w: %s@%s: file %s is missing", catalog.ErrMismatch, in.Dataset, in.Version, src))
	}
	if err != nil {
		return fmt.Errorf("publish: read %s: %w", src, err)
	}
	if info.Size != f.Bytes {
		return invalid(fmt.Errorf("%w: %s@%s: file %s is %d bytes, manifest says %d: the version is corrupt, nothing was released",
			catalog.ErrMismatch, in.Dataset, in.Version, src, info.Size, f.Bytes))
	}
	rc, err := a.Store.Get(ctx, src)
	if err != nil {
		return fmt.Errorf("publish: read %s: %w", src, err)
	}
	h := sha256.New()
	err = t.store.Put(ctx, key, io.TeeReader(rc, h), f.Bytes)
	rc.Close()
	if err != nil {
		return destError(in.Dest, fmt.Errorf("publish: copy %s to %s: %w", f.Src, uri, err))
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != f.SHA256 {
		_ = t.store.Delete(context.WithoutCancel(ctx), key)
		return invalid(fmt.Errorf("%w: %s@%s: file %s has sha256 %s, manifest says %s: the version is corrupt, nothing was released",
			catalog.ErrMismatch, in.Dataset, in.Version, src, sum, f.SHA256))
	}
	if ok, err := hasCopy(ctx, t.store, key, f); err != nil {
		return destError(in.Dest, err)
	} else if !ok {
		_ = t.store.Delete(context.WithoutCancel(ctx), key)
		return fmt.Errorf("publish: the copy of %s at %s does not read back with sha256 %s (retried)", f.Src, uri, f.SHA256)
	}
	return nil
}

// hasCopy reports whether key holds f's bytes: its size and sha256.
func hasCopy(ctx context.Context, s blob.Store, key string, f release.File) (bool, error) {
	info, err := s.Head(ctx, key)
	if errors.Is(err, blob.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if info.Size != f.Bytes {
		return false, nil
	}
	rc, err := s.Get(ctx, key)
	if err != nil {
		return false, err
	}
	defer rc.Close()
	h := sha256.New()
	if _, err := io.Copy(h, rc); err != nil {
		return false, fmt.Errorf("publish: read back %s: %w", key, err)
	}
	return hex.EncodeToString(h.Sum(nil)) == f.SHA256, nil
}

// FinishPublishInput is a release whose files are all copied and verified.
type FinishPublishInput struct {
	Dest   release.Dest
	Layout release.Layout
	// Published is PlanPublish's: the release was already there.
	Published bool
}

// FinishPublishResult says where the release is and whether this publish
// wrote it or found it.
type FinishPublishResult struct {
	Release     string // the release's URI (s3://… or a directory)
	Files       int
	Rows        int64
	Reused      bool // the release was already there: nothing was copied or written
	LatestMoved bool // latest named another version (or none) before; never for a variant
	// Latest is what the destination's latest named before and after
	// (rows from the releases' release.json, build times from the store's
	// manifests when it has them); zero for a variant and in older
	// histories.
	Latest catalog.LatestMove `json:",omitzero"`
}

// FinishPublish makes a release visible: it checks every staged file's
// size once more, writes README.md and release.json, renames a local
// directory's staging folder to the release's (atomic), and writes latest
// last. It is idempotent: a release already visible is not written again.
func (a *Publish) FinishPublish(ctx context.Context, in FinishPublishInput) (FinishPublishResult, error) {
	l := in.Layout
	t, err := a.target(ctx, in.Dest, l.Dataset, l.Version)
	if err != nil {
		return FinishPublishResult{}, err
	}
	res := FinishPublishResult{Release: strings.TrimSuffix(in.Dest.URI(t.final), "/"), Files: len(l.Files), Rows: l.Rows, Reused: in.Published}
	visible, err := blob.Exists(ctx, t.store, t.final+release.LayoutPath)
	if err != nil {
		return res, destError(in.Dest, err)
	}
	if !visible {
		if err := a.writeRelease(ctx, t, l); err != nil {
			if isNonRetryable(err) && !in.Dest.IsS3() && t.stage != t.final {
				// Over for good: leave no staging folder behind.
				if rerr := removeStaging(in.Dest, t); rerr != nil {
					err = fmt.Errorf("%w (and the staging folder could not be removed: %v)", err, rerr)
				}
			}
			return res, err
		}
	}
	cur, err := destLatest(ctx, t, l.Dataset)
	if err != nil {
		return res, err
	}
	if l.Variant {
		return res, nil
	}
	// The release's latest follows the same rule as the store's: it names
	// the last default version published there, an older or smaller one
	// included; the move is returned for the output to say.
	to := a.pointed(ctx, l.Dataset, l.Version, l.Rows)
	res.Latest.To = &to
	if cur.Version != "" {
		from := to
		if cur.Version != l.Version {
			var old release.Layout
			rows := int64(-1) // its release.json is gone
			if err := blob.GetJSON(ctx, t.store, release.Root(l.Dataset, cur.Version)+release.LayoutPath, &old); err == nil {
				rows = old.Rows
			}
			from = a.pointed(ctx, l.Dataset, cur.Version, rows)
		}
		res.Latest.From = &from
	}
	if cur.Version != l.Version {
		if err := blob.PutJSON(ctx, t.store, release.LatestKey(l.Dataset), catalog.Latest{Version: l.Version}); err != nil {
			return res, destError(in.Dest, fmt.Errorf("publish: write %s: %w", in.Dest.URI(release.LatestKey(l.Dataset)), err))
		}
		res.LatestMoved = true
	}
	return res, nil
}

// pointed describes a release's version for a latest move: its rows, and
// its build time when the store has its manifest (a run's details release,
// or a version of another store, has none: the move then cannot tell
// whether it goes back).
func (a *Publish) pointed(ctx context.Context, dataset, version string, rows int64) catalog.Pointed {
	p := catalog.Pointed{Version: version, Rows: rows}
	if m, err := catalog.ReadManifest(ctx, a.Store, dataset, version); err == nil {
		p.CreatedAt = m.CreatedAt
	}
	return p
}

// writeRelease checks the staged files, writes the card and the layout,
// and (for a local directory) renames the staging folder into place.
func (a *Publish) writeRelease(ctx context.Context, t target, l release.Layout) error {
	for _, f := range l.Files {
		info, err := t.store.Head(ctx, t.stage+f.Path)
		if errors.Is(err, blob.ErrNotFound) {
			return fmt.Errorf("publish: %s is missing from the staged release", t.dest.URI(t.stage+f.Path))
		}
		if err != nil {
			return destError(t.dest, err)
		}
		if info.Size != f.Bytes {
			return fmt.Errorf("publish: %s is %d bytes, manifest says %d", t.dest.URI(t.stage+f.Path), info.Size, f.Bytes)
		}
	}
	card, err := a.card(ctx, l)
	if err != nil {
		return err
	}
	if err := blob.PutBytes(ctx, t.store, t.stage+release.CardPath, []byte(card)); err != nil {
		return destError(t.dest, fmt.Errorf("publish: write card: %w", err))
	}
	if err := blob.PutJSON(ctx, t.store, t.stage+release.LayoutPath, l); err != nil {
		return destError(t.dest, fmt.Errorf("publish: write %s: %w", release.LayoutPath, err))
	}
	if t.stage == t.final {
		return nil
	}
	from := filepath.Join(t.dest.Dir, filepath.FromSlash(t.stage))
	to := filepath.Join(t.dest.Dir, filepath.FromSlash(t.final))
	if err := release.NoLinks(t.dest.Dir, to); err != nil {
		return invalid(err)
	}
	if err := os.Rename(from, to); err != nil {
		if errors.Is(err, syscall.EEXIST) || errors.Is(err, syscall.ENOTEMPTY) {
			return invalid(fmt.Errorf("publish: %s already exists and is not this release (it has no %s); remove it or publish elsewhere",
				to, release.LayoutPath))
		}
		return destError(t.dest, fmt.Errorf("publish: rename %s to %s: %w", from, to, err))
	}
	return nil
}

// destLatest reads the destination's latest pointer of dataset (the zero
// Latest when there is none). One that is not a latest pointer (not JSON,
// or no version) fails at once, naming it: a retry cannot repair it, and
// overwriting what someone else put there is not ours to decide.
func destLatest(ctx context.Context, t target, dataset string) (catalog.Latest, error) {
	var cur catalog.Latest
	key := release.LatestKey(dataset)
	b, err := blob.GetBytes(ctx, t.store, key)
	if errors.Is(err, blob.ErrNotFound) {
		return cur, nil
	}
	if err != nil {
		return cur, destError(t.dest, err)
	}
	if len(b) > 64<<10 || json.Unmarshal(b, &cur) != nil || names.RunID(cur.Version) != nil {
		return cur, invalid(fmt.Errorf("publish: %s is not a latest pointer ({\"version\": \"...\"}): %q; remove it or publish elsewhere",
			t.dest.URI(key), excerptBytes(b, 60)))
	}
	return cur, nil
}

// excerptBytes is the start of b, for messages.
func excerptBytes(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// removeStaging deletes a local destination's staging folder, never
// through a link.
func removeStaging(d release.Dest, t target) error {
	dir := filepath.Join(d.Dir, filepath.FromSlash(t.stage))
	if err := release.NoLinks(d.Dir, dir); err != nil {
		return err
	}
	return os.RemoveAll(dir)
}

// card renders the release's README.md from the version's manifest, its
// catalog card's licence and name, the registered description and the
// Parquet schema of its first file.
func (a *Publish) card(ctx context.Context, l release.Layout) (string, error) {
	if l.Run != "" {
		return a.detailsCard(ctx, l)
	}
	m, err := catalog.ReadManifest(ctx, a.Store, l.Dataset, l.Version)
	if err != nil {
		return "", classify(err)
	}
	info := release.CardInfo{PrettyName: l.Dataset, Description: a.Descriptions[l.Dataset]}
	if b, err := blob.GetBytes(ctx, a.Store, catalog.CardKey(l.Dataset, l.Version)); err == nil {
		if i := strings.Index(string(b), "\n## Task file\n"); i >= 0 {
			info.Sections = string(b[i+1:]) // a task file's version shows it (datasets/taskfile.Builder.CardFromStore)
		}
		if fm, _, err := release.ParseCard(string(b)); err == nil {
			info.License = fm.License
			if fm.PrettyName != "" {
				info.PrettyName = fm.PrettyName
			}
		}
	}
	if lic := m.Params["license"]; lic != "" {
		info.License = lic
	}
	if len(m.Files) > 0 {
		key := catalog.Dir(m.Name, m.Version) + m.Files[0].Path
		info.Columns, err = pq.Columns(ctx, catalog.Checked(a.Store, m), key)
		if err != nil {
			return "", classify(err)
		}
	}
	card, err := release.Card(l, m, info)
	if err != nil {
		return "", invalid(err)
	}
	return card, nil
}

// AbortPublishInput is a release whose copy failed for good.
type AbortPublishInput struct {
	Dest   release.Dest
	Layout release.Layout
}

// AbortPublish deletes what a failed publish staged: a local directory's
// staging folder, or an S3 release's data files while the release has no
// release.json (a visible release is never touched). latest is not touched.
func (a *Publish) AbortPublish(ctx context.Context, in AbortPublishInput) error {
	l := in.Layout
	t, err := a.target(ctx, in.Dest, l.Dataset, l.Version)
	if err != nil {
		return err
	}
	if !in.Dest.IsS3() {
		if err := removeStaging(in.Dest, t); err != nil {
			return destError(in.Dest, err)
		}
		return nil
	}
	if visible, err := blob.Exists(ctx, t.store, t.final+release.LayoutPath); err != nil || visible {
		return err
	}
	for _, f := range l.Files {
		if err := t.store.Delete(ctx, t.stage+f.Path); err != nil {
			return destError(in.Dest, err)
		}
	}
	return nil
}

// destError makes a destination's permanent refusals non-retryable (no
// permission, a read-only file system, a path through a file; an S3 bucket
// that does not exist or refuses the credentials), naming the
// destination. Other errors are returned for bounded retries.
func destError(d release.Dest, err error) error {
	if err == nil || isNonRetryable(err) {
		return err
	}
	var status interface{ HTTPStatusCode() int }
	permanent := errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.ENOTDIR) ||
		errors.Is(err, syscall.EEXIST) || errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, release.ErrDest)
	if errors.As(err, &status) {
		switch status.HTTPStatusCode() {
		case 400, 401, 403, 404:
			permanent = true
		}
	}
	if !permanent {
		return err
	}
	if errors.Is(err, release.ErrDest) {
		return invalid(err)
	}
	return invalid(fmt.Errorf("%w: %s is not writable: %w", release.ErrDest, d, err))
}

// detailsCard renders a run's details card from its plan and summary and
// the schema of its first result shard.
func (a *Publish) detailsCard(ctx context.Context, l release.Layout) (string, error) {
	var plan runs.Plan
	if err := blob.GetJSON(ctx, a.Store, runs.PlanKey(l.Run), &plan); err != nil {
		return "", err
	}
	var sum aggregate.Summary
	if err := blob.GetJSON(ctx, a.Store, runs.SummaryKey(l.Run), &sum); err != nil {
		return "", err
	}
	d := release.Details{Run: l.Run, Dataset: plan.Dataset, DatasetVersion: plan.DatasetVersion, Model: plan.Model,
		Baseline: sum.Baseline, Judges: plan.Judges, TaskVersion: plan.TaskVersion, Samples: plan.Samples, CreatedAt: plan.CreatedAt}
	for _, m := range sum.Metrics {
		d.Metrics = append(d.Metrics, release.DetailsMetric{Name: m.Name, Mean: m.Mean, CILow: m.CILow, CIHigh: m.CIHigh, N: int64(m.N)})
	}
	args := []string{"benchline", "eval", "--dataset", plan.Dataset + "@" + plan.DatasetVersion, "--model", plan.Model}
	for _, role := range sortedRoles(plan.Judges) {
		args = append(args, "--judge", role+"="+plan.Judges[role])
	}
	if plan.Seed != nil {
		args = append(args, "--seed", fmt.Sprint(*plan.Seed))
	}
	if plan.Limit > 0 {
		args = append(args, "--limit", fmt.Sprint(plan.Limit))
	}
	if plan.ShardSize != runs.DefaultShardSize {
		args = append(args, "--shard-size", fmt.Sprint(plan.ShardSize))
	}
	d.Command = strings.Join(args, " ")
	info := release.CardInfo{PrettyName: fmt.Sprintf("%s on %s (benchline details)", plan.Model, plan.Dataset), License: "other"}
	if len(l.Files) > 0 {
		cols, err := pq.Columns(ctx, a.Store, l.SrcDir+l.Files[0].Src)
		if err != nil {
			return "", classify(err)
		}
		info.Columns = cols
	}
	card, err := release.DetailsCard(l, d, info)
	if err != nil {
		return "", invalid(err)
	}
	return card, nil
}

func sortedRoles(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
