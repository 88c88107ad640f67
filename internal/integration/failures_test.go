package integration

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"

	"github.com/benchline/benchline/activities"
	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/bfcl"
	"github.com/benchline/benchline/internal/app"
	"github.com/benchline/benchline/workflows"
)

// buildFailsAtOnce starts a build that must fail without retrying and
// checks, on the real stack, that the client gets a non-retryable
// InvalidInput error saying every one of says within a bound far below the
// retries' span, and that the workflow is closed as failed (not left
// running after the client gives up).
func buildFailsAtOnce(t *testing.T, dataset string, req datasets.Request, says ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	start := time.Now()
	_, err := app.BuildDataset(ctx, stack.Client, stack.Stack.Config, workflows.BuildDatasetInput{Dataset: dataset, Request: req})
	if err == nil {
		t.Fatal("build succeeded")
	}
	if ctx.Err() != nil {
		t.Fatalf("build still not finished after %v: %v", time.Since(start).Round(time.Second), err)
	}
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) || ae.Type() != activities.ErrTypeInvalidInput || !ae.NonRetryable() {
		t.Errorf("build error %v is not a non-retryable %s", err, activities.ErrTypeInvalidInput)
	}
	for _, s := range says {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("build error %q does not say %q", err, s)
		}
	}
	desc, err := stack.Client.DescribeWorkflowExecution(context.Background(), app.BuildWorkflowID(dataset, req), "")
	if err != nil {
		t.Fatal(err)
	}
	if st := desc.GetWorkflowExecutionInfo().GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_FAILED {
		t.Errorf("workflow status %v, want failed", st)
	}
}

// TestBuildMissingSourceFailsAtOnce is finding 1 of issue 11: a --source
// directory that does not exist ends the build at once with its path.
func TestBuildMissingSourceFailsAtOnce(t *testing.T) {
	abs, _ := filepath.Abs("no-such-dir")
	buildFailsAtOnce(t, bfcl.Name, datasets.Request{Source: "./no-such-dir"}, abs, "does not exist")
}

// TestBuildURLSourceStatuses is finding 4 of issue 11: a URL that answers
// 404 is reported with the status and the URL, at once; a URL that answers
// 5xx is retried (Temporal's bounded retries), so a server that recovers
// gives the same version as the files themselves.
func TestBuildURLSourceStatuses(t *testing.T) {
	dir, _ := filepath.Abs("../../datasets/bfcl/fixtures")
	var failing atomic.Int64
	failing.Store(2)
	var failed atomic.Int64
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/flaky/") && failing.Add(-1) >= 0 {
			failed.Add(1)
			http.Error(w, "try later", http.StatusServiceUnavailable)
			return
		}
		http.StripPrefix("/flaky", files).ServeHTTP(w, r)
	}))
	defer srv.Close()

	t.Run("404", func(t *testing.T) {
		buildFailsAtOnce(t, bfcl.Name, datasets.Request{Source: srv.URL + "/nothing-here/"},
			"404 Not Found", srv.URL+"/nothing-here/BFCL_v4_")
	})
	t.Run("503 then files", func(t *testing.T) {
		want, err := buildVia(t, bfcl.Name, datasets.Request{Source: bfcl.Embedded})
		if err != nil {
			t.Fatal(err)
		}
		got, err := buildVia(t, bfcl.Name, datasets.Request{Source: srv.URL + "/flaky/"})
		if err != nil {
			t.Fatalf("build from a URL that answered 503 twice, then the files: %v", err)
		}
		if got.Version != want.Version || got.Rows != want.Rows {
			t.Errorf("built %s (%d rows), want %s (%d rows)", got.Version, got.Rows, want.Version, want.Rows)
		}
		if failed.Load() != 2 {
			t.Errorf("the server answered 503 %d times, want 2", failed.Load())
		}
	})
}

// TestBuildInvalidUTF8PublishesNothing is finding 3 of issue 11: a source
// line with the bytes \xff\xfe inside a JSON string is bad input naming
// the file and line; the build fails at once and writes nothing under
// datasets/.
func TestBuildInvalidUTF8PublishesNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	q, err := os.ReadFile("../../datasets/bfcl/fixtures/BFCL_v4_multiple.json")
	if err != nil {
		t.Fatal(err)
	}
	a, err := os.ReadFile("../../datasets/bfcl/fixtures/possible_answer/BFCL_v4_multiple.json")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(q), "\n")
	if len(lines) < 2 || !strings.Contains(lines[1], `"content": "`) {
		t.Fatalf("fixture line 2 has no content string: %q", lines[1])
	}
	lines[1] = strings.Replace(lines[1], `"content": "`, "\"content\": \"\xff\xfe", 1)
	writeFiles(t, dir, map[string]string{
		"BFCL_v4_multiple.json":                 strings.Join(lines, ""),
		"possible_answer/BFCL_v4_multiple.json": string(a),
	})
	before, err := stack.Store.List(ctx, "datasets/")
	if err != nil {
		t.Fatal(err)
	}
	buildFailsAtOnce(t, bfcl.Name, datasets.Request{Source: dir},
		filepath.Join(dir, "BFCL_v4_multiple.json")+":2:", "invalid UTF-8")
	after, err := stack.Store.List(ctx, "datasets/")
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Errorf("a failed build wrote %d objects under datasets/", len(after)-len(before))
	}
}
