package integration

import (
	"context"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/bfcl"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/s3blob"
)

// TestBuildFromEverySourceKind builds the BFCL fixtures from a directory, an
// http URL and an s3:// URL: the same files give the same version id.
func TestBuildFromEverySourceKind(t *testing.T) {
	ctx := context.Background()
	dir, _ := filepath.Abs("../../datasets/bfcl/fixtures")

	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()

	// Upload the fixtures to another bucket on the same S3 server.
	cfg := stack.Stack.Config.S3
	cfg.Bucket = "bfcl-sources"
	src, err := s3blob.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := src.EnsureBucket(ctx); err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		return blob.PutBytes(ctx, src, "mirror/bfcl/"+filepath.ToSlash(rel), b)
	})
	if err != nil {
		t.Fatal(err)
	}

	want, err := buildVia(t, bfcl.Name, datasets.Request{Source: bfcl.Embedded})
	if err != nil {
		t.Fatal(err)
	}
	for _, source := range []string{dir, srv.URL + "/", "s3://bfcl-sources/mirror/bfcl"} {
		t.Run(source, func(t *testing.T) {
			res, err := buildVia(t, bfcl.Name, datasets.Request{Source: source})
			if err != nil {
				t.Fatal(err)
			}
			if res.Version != want.Version || res.Rows != want.Rows {
				t.Fatalf("from %s: %s with %d rows, want %s with %d", source, res.Version, res.Rows, want.Version, want.Rows)
			}
		})
	}
	t.Run("missing URL", func(t *testing.T) {
		_, err := buildVia(t, bfcl.Name, datasets.Request{Source: srv.URL + "/nothing-here/"})
		if err == nil {
			t.Fatal("build from an empty URL succeeded")
		}
	})
}
