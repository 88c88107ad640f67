package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/limits"
)

// TestParseMissingDirectory: a --source directory that does not exist is a
// permanent failure (ErrNotFound) naming the path, not an error a retry
// could fix.
func TestParseMissingDirectory(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file.json")
	if err := os.WriteFile(file, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		uri  string
		want error
	}{
		{"missing relative", "./no-such-dir", ErrNotFound},
		{"missing absolute", filepath.Join(dir, "no-such-dir"), ErrNotFound},
		{"a file, not a directory", file, ErrInvalid},
		{"s3 without configuration", "s3://bucket/prefix", ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(context.Background(), tc.uri, nil)
			if err == nil {
				t.Fatalf("Parse(%q) succeeded", tc.uri)
			}
			if !errors.Is(err, tc.want) || !Permanent(err) {
				t.Fatalf("Parse(%q) = %v: want an error wrapping %v, permanent", tc.uri, err, tc.want)
			}
			if !strings.Contains(err.Error(), strings.TrimPrefix(tc.uri, "./")) {
				t.Errorf("error %q does not name %s", err, tc.uri)
			}
		})
	}
	if _, err := Parse(context.Background(), dir, nil); err != nil {
		t.Fatalf("Parse of an existing directory: %v", err)
	}
}

// TestHTTPStatuses: an http source says what the server answered, with the
// URL; not found and refusals are permanent, 5xx, 408 and 429 are not.
func TestHTTPStatuses(t *testing.T) {
	tests := []struct {
		code      int
		want      error // nil: not permanent
		permanent bool
	}{
		{http.StatusNotFound, ErrNotFound, true},
		{http.StatusGone, ErrNotFound, true},
		{http.StatusForbidden, ErrRefused, true},
		{http.StatusUnauthorized, ErrRefused, true},
		{http.StatusBadRequest, ErrRefused, true},
		{http.StatusInternalServerError, nil, false},
		{http.StatusServiceUnavailable, nil, false},
		{http.StatusTooManyRequests, nil, false},
		{http.StatusRequestTimeout, nil, false},
	}
	for _, tc := range tests {
		t.Run(http.StatusText(tc.code), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "no", tc.code)
			}))
			defer srv.Close()
			loc, err := Parse(context.Background(), srv.URL+"/data/", nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = loc.Open(context.Background(), "BFCL_v4_multiple.json")
			if err == nil {
				t.Fatal("Open succeeded")
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("error %v does not wrap %v", err, tc.want)
			}
			if Permanent(err) != tc.permanent {
				t.Errorf("Permanent(%v) = %v, want %v", err, Permanent(err), tc.permanent)
			}
			var he *HTTPError
			if !errors.As(err, &he) || he.Code != tc.code {
				t.Errorf("error %v is not an *HTTPError with code %d", err, tc.code)
			}
			for _, want := range []string{srv.URL + "/data/BFCL_v4_multiple.json", http.StatusText(tc.code)} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}

// TestProbe: at an http location where no probed name exists, Probe's
// error says so with the status and URL of the first probe; where some
// exist it returns those; a server error is returned as it is.
func TestProbe(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok/b.json":
			w.Write([]byte("{}\n"))
		case "/down/a.json":
			http.Error(w, "down", http.StatusBadGateway)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	names := []string{"a.json", "b.json", "c.json", "d.json"}

	loc, _ := Parse(ctx, srv.URL+"/nothing-here/", nil)
	found, err := Probe(ctx, loc, names)
	if err == nil || !errors.Is(err, ErrNotFound) {
		t.Fatalf("Probe where nothing exists = %v, %v: want ErrNotFound", found, err)
	}
	for _, want := range []string{"404 Not Found", srv.URL + "/nothing-here/a.json", "a.json, b.json, c.json and 1 more"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}

	loc, _ = Parse(ctx, srv.URL+"/ok", nil)
	found, err = Probe(ctx, loc, names)
	if err != nil || len(found) != 1 || found[0] != "b.json" {
		t.Fatalf("Probe = %v, %v; want [b.json]", found, err)
	}

	loc, _ = Parse(ctx, srv.URL+"/down", nil)
	if _, err = Probe(ctx, loc, names); err == nil || Permanent(err) || !strings.Contains(err.Error(), "502") {
		t.Fatalf("Probe of a failing server = %v: want the 502, not permanent", err)
	}
}

// statusErr is an S3 client's error carrying the HTTP status, as the AWS
// SDK's response errors do.
type statusErr int

func (e statusErr) Error() string       { return fmt.Sprintf("api error: status %d", int(e)) }
func (e statusErr) HTTPStatusCode() int { return int(e) }

// failingStore fails every call with err.
type failingStore struct {
	blob.Store
	err error
}

func (s failingStore) Get(context.Context, string) (io.ReadCloser, error) { return nil, s.err }
func (s failingStore) List(context.Context, string) ([]blob.Info, error)  { return nil, s.err }
func (s failingStore) Head(context.Context, string) (blob.Info, error)    { return blob.Info{}, s.err }

// TestS3Statuses: an s3:// source whose bucket refuses the worker's
// credentials (403) or does not exist (404) is a permanent failure naming
// the URL; a server error is not.
func TestS3Statuses(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		want      error
		permanent bool
	}{
		{"access denied", fmt.Errorf("s3blob: get k: %w", statusErr(403)), ErrRefused, true},
		{"no such bucket", fmt.Errorf("s3blob: list: %w", statusErr(404)), ErrNotFound, true},
		{"no such key", fmt.Errorf("s3blob: get k: %w", blob.ErrNotFound), ErrNotFound, true},
		{"server error", fmt.Errorf("s3blob: get k: %w", statusErr(500)), nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			open := func(context.Context, string, string) (blob.Store, error) {
				return failingStore{blobtest.NewMemory(), tc.err}, nil
			}
			loc, err := Parse(context.Background(), "s3://bucket/mirror", open)
			if err != nil {
				t.Fatal(err)
			}
			_, oerr := loc.Open(context.Background(), "a.json")
			_, lerr := loc.List(context.Background())
			for _, err := range []error{oerr, lerr} {
				if err == nil {
					t.Fatal("no error")
				}
				if tc.want != nil && !errors.Is(err, tc.want) {
					t.Errorf("error %v does not wrap %v", err, tc.want)
				}
				if Permanent(err) != tc.permanent {
					t.Errorf("Permanent(%v) = %v, want %v", err, Permanent(err), tc.permanent)
				}
				if !strings.Contains(err.Error(), "s3://bucket/mirror") {
					t.Errorf("error %q does not name the URL", err)
				}
			}
		})
	}
}

// TestListBoundsTheFiles: a directory holding more files than
// limits.max_source_files is refused, as bad input naming the directory
// and the setting; one at the limit is listed.
func TestListBoundsTheFiles(t *testing.T) {
	defer limits.Set(limits.Limits{})
	limits.Set(limits.Limits{SourceFiles: 5})
	dir := t.TempDir()
	for i := range 5 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.json", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	loc, err := Parse(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if names, err := loc.List(context.Background()); err != nil || len(names) != 5 {
		t.Fatalf("5 files at a limit of 5: %v %v", names, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "f5.json"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = loc.List(context.Background())
	if !errors.Is(err, ErrInvalid) || !Permanent(err) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "limits.max_source_files") {
		t.Fatalf("6 files at a limit of 5: %v", err)
	}
}
