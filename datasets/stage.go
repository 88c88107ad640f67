package datasets

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/limits"
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
	w := io.MultiWriter(tmp, h)
	if !binarySource(name) {
		// A line over the limit fails here, after reading the limit, not
		// after copying (and uploading) the whole file.
		w = io.MultiWriter(w, &lineGuard{uri: loc.URI(name), max: limits.Get().LineBytes, line: 1})
	}
	n, err := io.Copy(w, rc)
	var ie *InputError
	if errors.As(err, &ie) {
		return catalog.Source{}, ie
	}
	if errors.Is(err, limits.ErrTooLarge) { // the source's error names the file and the limit
		return catalog.Source{}, err
	}
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

// binarySource reports whether a source file is binary by its name (not
// read line by line, so its "lines" are not bounded).
func binarySource(name string) bool {
	for _, ext := range []string{".parquet", ".arrow", ".gz", ".zst", ".zip", ".tar", ".bz2", ".xz", ".bin", ".npy"} {
		if strings.HasSuffix(strings.ToLower(name), ext) {
			return true
		}
	}
	return false
}

// lineGuard watches the bytes of a text source as they are copied and
// fails (an *InputError naming the file and line) once a line passes max
// bytes: EachLine's bound, applied while staging.
type lineGuard struct {
	uri      string
	max, cur int64
	line     int
}

func (g *lineGuard) Write(p []byte) (int, error) {
	for rest := p; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			g.cur += int64(len(rest))
			break
		}
		if g.cur+int64(i)+1 > g.max {
			return 0, g.tooLong()
		}
		g.cur, g.line, rest = 0, g.line+1, rest[i+1:]
	}
	if g.cur > g.max {
		return 0, g.tooLong()
	}
	return len(p), nil
}

func (g *lineGuard) tooLong() error {
	return &InputError{File: g.uri, Line: g.line, Msg: fmt.Sprintf(
		"line is longer than %d bytes, the limit (limits.max_line_bytes, BENCHLINE_MAX_LINE_BYTES); it was not read further", g.max)}
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
