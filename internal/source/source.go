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
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/limits"
)

// Errors retrying cannot fix. Each is returned wrapped, with a message
// naming the path or URL; Permanent reports whether an error is one of them.
var (
	// ErrNotFound is returned when a source location (a --source
	// directory) or a named file in it does not exist: a missing local
	// path, HTTP 404 or 410, an S3 key that is not there.
	ErrNotFound = errors.New("source: file not found")
	// ErrRefused is returned when the source refuses to be read: HTTP 401,
	// 403 and every other 4xx answer but 408 and 429, or a local file the
	// worker may not read.
	ErrRefused = errors.New("source: refused")
	// ErrInvalid is returned for a --source argument that cannot name a
	// source: a malformed URL, a path that is not a directory, an s3:// URL
	// without S3 configuration, a URL that redirects more than
	// MaxRedirects times; and for a file of a local directory that is not
	// a regular file inside it (a FIFO, a socket, a device, a symbolic link
	// leading out of the directory).
	ErrInvalid = errors.New("source: not a usable source")
)

// Permanent reports whether err is a source failure that retrying cannot
// fix (it wraps ErrNotFound, ErrRefused, ErrInvalid, or limits.ErrTooLarge:
// a file over limits.max_source_bytes). Other failures (a 5xx answer, a
// network error, S3 down) may pass on a retry.
func Permanent(err error) bool {
	return errors.Is(err, ErrNotFound) || errors.Is(err, ErrRefused) || errors.Is(err, ErrInvalid) ||
		errors.Is(err, limits.ErrTooLarge)
}

// HTTPError is an answer other than 200 OK to the GET of a source file.
// It wraps ErrNotFound (404, 410) or ErrRefused (other 4xx but 408 and
// 429); other statuses (5xx, 408, 429) wrap nothing: they may pass.
type HTTPError struct {
	URL    string
	Code   int
	Status string // e.g. "404 Not Found"
}

func (e *HTTPError) Error() string { return fmt.Sprintf("source: GET %s: HTTP %s", e.URL, e.Status) }

// Unwrap returns the sentinel of the status's class, or nil.
func (e *HTTPError) Unwrap() error {
	switch {
	case e.Code == http.StatusNotFound || e.Code == http.StatusGone:
		return ErrNotFound
	case e.Code == http.StatusRequestTimeout || e.Code == http.StatusTooManyRequests:
		return nil
	case e.Code >= 400 && e.Code < 500:
		return ErrRefused
	}
	return nil
}

// Location is where a build's source files are.
type Location interface {
	// Open returns the named file (a slash-separated path below the
	// location). Its reader fails, with an error wrapping
	// limits.ErrTooLarge, past limits.max_source_bytes; a file known to be
	// larger (its size, an http Content-Length, an S3 object's length) is
	// refused by Open at once.
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
			return nil, fmt.Errorf("source: parse %q: %w (%w)", uri, ErrInvalid, err)
		}
		if openS3 == nil {
			return nil, fmt.Errorf("source: %s: no S3 configuration: %w", uri, ErrInvalid)
		}
		prefix := strings.Trim(u.Path, "/")
		st, err := openS3(ctx, u.Host, prefix)
		if err != nil {
			return nil, fmt.Errorf("source: %s: %w", uri, err)
		}
		return &storeLoc{store: st, base: "s3://" + path.Join(u.Host, prefix)}, nil
	case strings.HasPrefix(uri, "http://") || strings.HasPrefix(uri, "https://"):
		return &httpLoc{base: strings.TrimSuffix(uri, "/"), client: httpClient}, nil
	default:
		abs, err := filepath.Abs(uri)
		if err != nil {
			return nil, fmt.Errorf("source: %s: %w (%w)", uri, ErrInvalid, err)
		}
		st, err := os.Stat(abs)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("source: directory %s (%s) does not exist on the worker: %w", uri, abs, ErrNotFound)
		case errors.Is(err, fs.ErrPermission):
			return nil, fmt.Errorf("source: directory %s (%s): %w (%w)", uri, abs, ErrRefused, err)
		case err != nil:
			return nil, fmt.Errorf("source: %s: %w", uri, err)
		case !st.IsDir():
			return nil, fmt.Errorf("source: %s (%s) is not a directory: %w", uri, abs, ErrInvalid)
		}
		return &dirLoc{fsLoc{fsys: os.DirFS(abs), base: abs}}, nil
	}
}

// MaxRedirects is how many redirects the GET of a source file follows;
// one more is bad input (a redirect loop does not heal on a retry).
const MaxRedirects = 10

// httpClient fetches http(s) sources: 10 s to connect and to handshake, 30 s
// for the response's headers, 5 minutes for a whole file, MaxRedirects
// redirects.
var httpClient = &http.Client{Timeout: 5 * time.Minute, CheckRedirect: checkRedirect, Transport: &http.Transport{
	Proxy:                 http.ProxyFromEnvironment,
	DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	TLSHandshakeTimeout:   10 * time.Second,
	ResponseHeaderTimeout: 30 * time.Second,
	IdleConnTimeout:       90 * time.Second,
}}

// checkRedirect refuses the redirect past MaxRedirects, with an error
// naming the first and the last URL without their credentials and query
// (a redirect's query often carries a signature).
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) <= MaxRedirects { // via: the requests made so far
		return nil
	}
	return fmt.Errorf("source: GET %s: more than %d redirects (the last to %s): %w",
		RedactURL(via[0].URL), MaxRedirects, RedactURL(req.URL), ErrInvalid)
}

// RedactURL returns u without its user information and with its query, if
// any, replaced by "REDACTED": how a URL that may carry a secret is named
// in an error.
func RedactURL(u *url.URL) string {
	c := *u
	c.User = nil
	if c.RawQuery != "" || c.ForceQuery {
		c.RawQuery = "REDACTED"
	}
	c.Fragment, c.RawFragment = "", ""
	return c.String()
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
	if errors.Is(err, fs.ErrPermission) {
		return nil, fmt.Errorf("source: %s: %w (%w)", l.URI(name), ErrRefused, err)
	}
	if err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	return bounded(f, l.URI(name)), nil
}

func (l *fsLoc) List(ctx context.Context) ([]string, error) {
	var names []string
	max := limits.Get().SourceFiles
	err := fs.WalkDir(l.fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			if len(names) == max {
				return tooMany(l.base, max)
			}
			names = append(names, p)
		}
		return ctx.Err()
	})
	if errors.Is(err, ErrInvalid) {
		return nil, err
	}
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

// PublicURI names file name of loc in what a build publishes (manifests,
// cards, releases, rows that record their source): the URI for locations
// that have one (http(s), s3://, embedded://), and for a local directory
// only the name relative to it, so that nothing published carries the
// builder's file system (the sha256 and size beside it identify the file).
// Errors keep naming the full path (Location.URI).
func PublicURI(loc Location, name string) string {
	if _, ok := loc.(*dirLoc); ok {
		return name
	}
	return loc.URI(name)
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
	if errors.Is(err, ErrInvalid) { // too many redirects: checkRedirect's error names the URLs
		return nil, errors.Unwrap(err)
	}
	if err != nil {
		return nil, fmt.Errorf("source: get %s: %w", l.URI(name), err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, &HTTPError{URL: l.URI(name), Code: resp.StatusCode, Status: resp.Status}
	}
	if max := limits.Get().SourceBytes; resp.ContentLength > max {
		resp.Body.Close()
		return nil, fmt.Errorf("source: GET %s: the server declares %d bytes (Content-Length), more than the limit of %d (limits.max_source_bytes, BENCHLINE_MAX_SOURCE_BYTES); nothing was read: %w",
			l.URI(name), resp.ContentLength, max, limits.ErrTooLarge)
	}
	return bounded(resp.Body, l.URI(name)), nil
}

func (l *httpLoc) List(ctx context.Context) ([]string, error) { return nil, ErrNotListable }
func (l *httpLoc) URI(name string) string                     { return l.base + "/" + name }

type storeLoc struct {
	store blob.Store
	base  string
}

func (l *storeLoc) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	info, err := l.store.Head(ctx, name)
	if err != nil {
		return nil, storeError("head "+l.URI(name), err)
	}
	if max := limits.Get().SourceBytes; info.Size > max {
		return nil, fmt.Errorf("source: %s is %d bytes, more than the limit of %d (limits.max_source_bytes, BENCHLINE_MAX_SOURCE_BYTES); it was not read: %w",
			l.URI(name), info.Size, max, limits.ErrTooLarge)
	}
	rc, err := l.store.Get(ctx, name)
	if err != nil {
		return nil, storeError("get "+l.URI(name), err)
	}
	return bounded(rc, l.URI(name)), nil
}

func (l *storeLoc) List(ctx context.Context) ([]string, error) {
	infos, err := l.store.List(ctx, "")
	if err != nil {
		return nil, storeError("list "+l.base, err)
	}
	if max := limits.Get().SourceFiles; len(infos) > max {
		return nil, tooMany(l.base, max)
	}
	names := make([]string, 0, len(infos))
	for _, i := range infos {
		names = append(names, i.Key)
	}
	return names, nil
}

func (l *storeLoc) URI(name string) string { return l.base + "/" + name }

// tooMany is the error of a location holding more files than the limit.
func tooMany(base string, max int) error {
	return fmt.Errorf("source: %s holds more than %d files, the limit (limits.max_source_files, BENCHLINE_MAX_SOURCE_FILES): %w", base, max, ErrInvalid)
}

// storeError names what failed (op, with the URL) and classes an object
// store's error: a missing key or bucket (blob.ErrNotFound, HTTP 404) is
// ErrNotFound, HTTP 401 or 403 (the worker's credentials refused) is
// ErrRefused; anything else may pass on a retry. The status comes from the
// S3 client's error (an HTTPStatusCode method), so this package does not
// link the AWS SDK.
func storeError(op string, err error) error {
	var st interface{ HTTPStatusCode() int }
	code := 0
	if errors.As(err, &st) {
		code = st.HTTPStatusCode()
	}
	switch {
	case errors.Is(err, blob.ErrNotFound) || errors.Is(err, blob.ErrNoBucket) || code == http.StatusNotFound:
		return fmt.Errorf("source: %s: %w (%w)", op, ErrNotFound, err)
	case errors.Is(err, blob.ErrDenied) || code == http.StatusUnauthorized || code == http.StatusForbidden:
		return fmt.Errorf("source: %s: %w (%w)", op, ErrRefused, err)
	}
	return fmt.Errorf("source: %s: %w", op, err)
}

// Probe opens each of names at loc and returns, in order, those that
// exist: how builders find their files where a location cannot be listed
// (plain http URLs). When none exists, the error wraps ErrNotFound and says
// what the location answered for the first name (e.g. "GET …: HTTP 404 Not
// Found"), so that a wrong URL is reported as such. Any other failure (a
// 5xx answer, a refusal) is returned as it is.
func Probe(ctx context.Context, loc Location, names []string) ([]string, error) {
	var found []string
	var first error
	for _, n := range names {
		rc, err := loc.Open(ctx, n)
		if errors.Is(err, ErrNotFound) {
			if first == nil {
				first = err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		rc.Close()
		found = append(found, n)
	}
	if len(found) == 0 && first != nil {
		tried := strings.Join(names, ", ")
		if len(names) > 3 {
			tried = fmt.Sprintf("%s and %d more", strings.Join(names[:3], ", "), len(names)-3)
		}
		return nil, fmt.Errorf("source: none of the %d files probed at %s exists (%s): %w", len(names), loc.URI(""), tried, first)
	}
	return found, nil
}
