package datasets

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/source"
)

// StagedKey is where a staged source file with this sha256 is kept.
func StagedKey(sha string) string { return "staging/sources/" + sha }

// Stage copies a source file into the store under its content hash, so that
// every activity of a build reads the same bytes even if the origin changes
// meanwhile. It streams through a temporary file: memory stays bounded.
func Stage(ctx context.Context, env Env, loc source.Location, name string) (catalog.Source, error) {
	rc, err := loc.Open(ctx, name)
	if err != nil {
		return catalog.Source{}, err
	}
	defer rc.Close()
	tmp, err := os.CreateTemp("", "benchline-stage-*")
	if err != nil {
		return catalog.Source{}, fmt.Errorf("datasets: stage: %w", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), rc)
	if err != nil {
		return catalog.Source{}, fmt.Errorf("datasets: read %s: %w", loc.URI(name), err)
	}
	src := catalog.Source{Name: name, URI: source.PublicURI(loc, name), SHA256: hex.EncodeToString(h.Sum(nil)), Bytes: n}
	if ok, err := blob.Exists(ctx, env.Store, StagedKey(src.SHA256)); err != nil {
		return src, fmt.Errorf("datasets: stage %s: %w", loc.URI(name), err)
	} else if ok {
		return src, nil
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return src, fmt.Errorf("datasets: stage: %w", err)
	}
	if err := env.Store.Put(ctx, StagedKey(src.SHA256), tmp, n); err != nil {
		return src, fmt.Errorf("datasets: stage %s: %w", loc.URI(name), err)
	}
	return src, nil
}

// StageAll stages the files names of loc (Stage), in order.
func StageAll(ctx context.Context, env Env, loc source.Location, names []string) ([]catalog.Source, error) {
	var out []catalog.Source
	for _, n := range names {
		s, err := Stage(ctx, env, loc, n)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// OpenStaged opens a staged source by its sha256.
func OpenStaged(ctx context.Context, env Env, sha string) (io.ReadCloser, error) {
	rc, err := env.Store.Get(ctx, StagedKey(sha))
	if errors.Is(err, blob.ErrNotFound) {
		return nil, fmt.Errorf("datasets: staged source %s is missing (was staging deleted mid-build?): %w", sha, err)
	}
	return rc, err
}
