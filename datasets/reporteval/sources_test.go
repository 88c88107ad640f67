package reporteval_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/benchline/benchline/datasets/reporteval"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/webfetch"
	scorer "github.com/benchline/benchline/scorers/reporteval"
)

// TestSourcesServeEveryReference fetches every reference of every fixture
// report through webfetch, with sources.benchline.test mapped to a local
// SourcesHandler, and gets the source page's text.
func TestSourcesServeEveryReference(t *testing.T) {
	srv := httptest.NewServer(reporteval.SourcesHandler())
	defer srv.Close()
	f, err := webfetch.New(blobtest.NewMemory(), webfetch.Config{
		Resolve:    map[string]string{reporteval.SourcesHost: srv.Listener.Addr().String()},
		AllowHosts: []string{reporteval.SourcesHost},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	fetched := 0
	for _, s := range readSources(t) {
		for n, u := range scorer.References(s.Report) {
			r, err := f.Fetch(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join("fixtures", "sources", s.Slug, fmt.Sprintf("%d.md", n)))
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != webfetch.OK || r.Text != string(want) || r.ContentType != "text/markdown" || r.FinalURL != u {
				t.Errorf("%s: %s %s %q", u, r.Status, r.ContentType, r.Reason)
			}
			fetched++
		}
	}
	if fetched == 0 {
		t.Fatal("no reference fetched")
	}
	r, err := f.Fetch(ctx, "http://"+reporteval.SourcesHost+"/urban-heat/99")
	if err != nil || r.Status != webfetch.NotFound {
		t.Errorf("a missing page gave %s %q (%v), want not_found", r.Status, r.Reason, err)
	}
}

func TestSourcesHandler(t *testing.T) {
	h := reporteval.SourcesHandler()
	for _, tc := range []struct {
		name, method, host, path string
		code                     int
	}{
		{"a page", http.MethodGet, reporteval.SourcesHost, "/grid-storage/1", http.StatusOK},
		{"a page with a port", http.MethodHead, reporteval.SourcesHost + ":8080", "/grid-storage/1", http.StatusOK},
		{"another host", http.MethodGet, "example.test", "/grid-storage/1", http.StatusNotFound},
		{"the .md name", http.MethodGet, reporteval.SourcesHost, "/grid-storage/1.md", http.StatusNotFound},
		{"no such slug", http.MethodGet, reporteval.SourcesHost, "/no-such-topic/1", http.StatusNotFound},
		{"number zero", http.MethodGet, reporteval.SourcesHost, "/grid-storage/0", http.StatusNotFound},
		{"escaping the tree", http.MethodGet, reporteval.SourcesHost, "/../reports.jsonl", http.StatusNotFound},
		{"a post", http.MethodPost, reporteval.SourcesHost, "/grid-storage/1", http.StatusMethodNotAllowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, "http://"+tc.host+tc.path, nil)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != tc.code {
				t.Fatalf("%s %s%s = %d, want %d", tc.method, tc.host, tc.path, w.Code, tc.code)
			}
			if tc.code == http.StatusOK && (w.Header().Get("Content-Type") != "text/markdown; charset=utf-8" || w.Header().Get("Content-Length") == "") {
				t.Errorf("headers %v", w.Header())
			}
		})
	}
}
