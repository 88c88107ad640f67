package integration

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/toolpref"
	"github.com/benchline/benchline/internal/config"
)

// TestBuildOldReleasesOverHTTP builds the hand-written folders in the
// shape of gorilla's two v3 releases (datasets/bfcl/testdata/releases)
// with `benchline dataset build bfcl`, from a directory and from an http
// URL, on the real stack: over http the v3 file names are probed, the
// malformed item is skipped and named, and the command prints the same
// skip line as the directory's build, for the same version. toolpref
// over the same URL skips the same item.
func TestBuildOldReleasesOverHTTP(t *testing.T) {
	bin := buildBinary(t)
	cfg := stack.Stack.Config
	env := append(os.Environ(),
		"TEMPORAL_ADDRESS="+cfg.Temporal.Address, "BENCHLINE_TASK_QUEUE="+cfg.Temporal.TaskQueue,
		"BENCHLINE_S3_ENDPOINT="+cfg.S3.Endpoint, "BENCHLINE_S3_BUCKET="+cfg.S3.Bucket,
		"AWS_ACCESS_KEY_ID="+config.DevAccessKey, "AWS_SECRET_ACCESS_KEY="+config.DevSecretKey, "AWS_REGION=us-east-1")
	build := func(t *testing.T, source string) (version, skipLine string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "dataset", "build", "bfcl", "--source", source)
		cmd.Env = env
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("dataset build bfcl --source %s: %v\n%s%s", source, err, out.String(), errOut.String())
		}
		m := regexp.MustCompile(`bfcl@([0-9a-f]+): `).FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("no version in the output:\n%s", out.String())
		}
		for _, l := range strings.Split(out.String(), "\n") {
			// A reused version says its own build's counts.
			if l, ok := strings.CutPrefix(l, "the version's build "); ok || strings.HasPrefix(l, "skipped ") {
				skipLine = l
			}
		}
		return m[1], skipLine
	}

	tests := []struct {
		dir     string
		skipped string // the malformed item, named in the skip line
		reason  string
		line    string
		probed  []string // v3 names the URL must have been asked for
	}{
		{"v3-first", "parallel_multiple_1", "malformed ground truth", "skipped 6 items: chatable 1 (not supported), exec_simple 1 (not supported), " +
			"multi_turn 1 (not supported), parallel_multiple_1 (malformed ground truth), rest 1 (not supported), sql 1 (not supported)",
			[]string{"/BFCL_v3_simple.json", "/possible_answer/BFCL_v3_simple.json", "/BFCL_v3_javascript.json",
				"/BFCL_v3_parallel_multiple.json", "/BFCL_v3_exec_simple.json", "/BFCL_v3_chatable.json", "/BFCL_v3_multi_turn_base.json"}},
		{"v3-later", "javascript_1", "ground truth calls an undefined function", "skipped 2 items: javascript_1 (ground truth calls an undefined function), multi_turn 1 (not supported)",
			[]string{"/BFCL_v3_simple.json", "/BFCL_v3_javascript.json", "/possible_answer/BFCL_v3_javascript.json"}},
	}
	for _, tc := range tests {
		t.Run(tc.dir, func(t *testing.T) {
			dir, _ := filepath.Abs(filepath.Join("../../datasets/bfcl/testdata/releases", tc.dir))
			var mu sync.Mutex
			asked := map[string]int{} // path -> status
			files := http.FileServer(http.Dir(dir))
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
				files.ServeHTTP(rec, r)
				mu.Lock()
				asked[r.URL.Path] = rec.status
				mu.Unlock()
			}))
			defer srv.Close()

			fromDir, dirLine := build(t, dir)
			fromURL, urlLine := build(t, srv.URL+"/")
			if fromURL != fromDir || urlLine != dirLine || urlLine != tc.line {
				t.Fatalf("over http: %s with skip line %q; from the directory: %s with %q; want %q", fromURL, urlLine, fromDir, dirLine, tc.line)
			}
			mu.Lock()
			for _, p := range tc.probed {
				if asked[p] != http.StatusOK {
					t.Errorf("%s: asked %v, status %d; want it probed and found (asked: %v)", p, asked[p] != 0, asked[p], asked)
				}
			}
			mu.Unlock()
			m := verifiedManifest(t, "bfcl", fromURL)
			if m.Stats["skipped_item: "+tc.skipped+" ("+tc.reason+")"] != 1 {
				t.Errorf("manifest stats %v do not name %s", m.Stats, tc.skipped)
			}

			res, err := buildVia(t, toolpref.Name, datasets.Request{Source: srv.URL + "/"})
			if err != nil {
				t.Fatal(err)
			}
			if s := datasets.SkipSummary(res.Stats); !strings.Contains(s, tc.skipped+" ("+tc.reason+")") {
				t.Errorf("toolpref over http skipped %q, want %s among it", s, tc.skipped)
			}
		})
	}
}

// statusWriter records the status a handler answers with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}
