// Package source opens the inputs of a dataset build: a local directory, an
// http(s) URL, an s3:// URL, or a file system embedded in the binary.
//
// A Location is a directory-like place that holds named files. Builders ask a
// Location for the files they know by name; Locations that can be listed
// (local, s3, embedded) also report which names exist.
package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/benchline/benchline/internal/blob"
)

// ErrNotFound is returned (wrapped) when a named file is not at a Location.
var ErrNotFound = errors.New("source: file not found")

// Location is where a build's source files are.
type Location interface {
	// Open returns the named file (a slash-separated path below the location).
	Open(ctx context.Context, name string) (io.ReadCloser, error)
	// List returns the names of all files below the location, sorted, or
	// ErrNotListable.
	List(ctx context.Context) ([]string, error)
	// URI names a file for provenance and error messages.
	URI(name string) string
}

// ErrNotListable is returned by List for locations such as plain http URLs.
var ErrNotListable = errors.New("source: location cannot be listed")

// S3Opener opens a Store for a bucket named in an s3:// URL; it lets the
// caller reuse its endpoint and credentials.
type S3Opener func(ctx context.Context, bucket, prefix string) (blob.Store, error)

// Parse turns a user's --source argument into a Location: "s3://bucket/prefix",
// "http(s)://host/path/", or a local directory path.
func Parse(ctx context.Context, uri string, openS3 S3Opener) (Location, error) {
	switch {
	case strings.HasPrefix(uri, "s3://"):
		u, err := url.Parse(uri)
		if err != nil {
			return nil, fmt.Errorf("source: parse %q: %w", uri, err)
		}
		if openS3 == nil {
			return nil, fmt.Errorf("source: %s: no S3 configuration", uri)
		}
		prefix := strings.Trim(u.Path, "/")
		st, err := openS3(ctx, u.Host, prefix)
		if err != nil {
			return nil, fmt.Errorf("source: %s: %w", uri, err)
		}
		return &storeLoc{store: st, base: "s3://" + path.Join(u.Host, prefix)}, nil
	case strings.HasPrefix(uri, "http://") || strings.HasPrefix(uri, "https://"):
		return &httpLoc{base: strings.TrimSuffix(uri, "/"), client: &http.Client{Timeout: 5 * time.Minute}}, nil
	default:
		abs, err := filepath.Abs(uri)
		if err != nil {
			return nil, fmt.Errorf("source: %s: %w", uri, err)
		}
		st, err := os.Stat(abs)
		if err != nil {
			return nil, fmt.Errorf("source: %w", err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("source: %s is not a directory", abs)
		}
		return &fsLoc{fsys: os.DirFS(abs), base: abs}, nil
	}
}

// FS returns a Location over an fs.FS (for fixtures embedded in the binary);
// base names it in URIs, e.g. "embedded://bfcl".
func FS(fsys fs.FS, base string) Location { return &fsLoc{fsys: fsys, base: base} }

type fsLoc struct {
	fsys fs.FS
	base string
}

func (l *fsLoc) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	f, err := l.fsys.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("source: %s: %w", l.URI(name), ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	return f, nil
}

func (l *fsLoc) List(ctx context.Context) ([]string, error) {
	var names []string
	err := fs.WalkDir(l.fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			names = append(names, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("source: list %s: %w", l.base, err)
	}
	sort.Strings(names)
	return names, nil
}

func (l *fsLoc) URI(name string) string {
	if strings.Contains(l.base, "://") {
		return l.base + "/" + name
	}
	return filepath.Join(l.base, filepath.FromSlash(name))
}

type httpLoc struct {
	base   string
	client *http.Client
}

func (l *httpLoc) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.URI(name), nil)
	if err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	resp, err := l.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("source: get %s: %w", l.URI(name), err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		resp.Body.Close()
		return nil, fmt.Errorf("source: %s: %w", l.URI(name), ErrNotFound)
	case resp.StatusCode != http.StatusOK:
		resp.Body.Close()
		return nil, fmt.Errorf("source: get %s: HTTP %s", l.URI(name), resp.Status)
	}
	return resp.Body, nil
}

func (l *httpLoc) List(ctx context.Context) ([]string, error) { return nil, ErrNotListable }
func (l *httpLoc) URI(name string) string                     { return l.base + "/" + name }

type storeLoc struct {
	store blob.Store
	base  string
}

func (l *storeLoc) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	rc, err := l.store.Get(ctx, name)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, fmt.Errorf("source: %s: %w", l.URI(name), ErrNotFound)
	}
	return rc, err
}

func (l *storeLoc) List(ctx context.Context) ([]string, error) {
	infos, err := l.store.List(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("source: list %s: %w", l.base, err)
	}
	names := make([]string, 0, len(infos))
	for _, i := range infos {
		names = append(names, i.Key)
	}
	return names, nil
}

func (l *storeLoc) URI(name string) string { return l.base + "/" + name }
