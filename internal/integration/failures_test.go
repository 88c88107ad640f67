package integration

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/wfclient"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"

	"github.com/benchline/benchline/activities"
	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/bfcl"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/workflows"
)

// failFastBound is how long a failure that must not be retried may take
// on the real stack: far below the span of an activity's retries (12
// attempts backing off to a minute), and generous for a loaded 2-core
// machine, where 45 s could pass with nothing retried.
const failFastBound = 2 * time.Minute

// buildFailsAtOnce starts a build that must fail without retrying and
// checks, on the real stack, that the client gets a non-retryable
// InvalidInput error saying every one of says within a bound far below the
// retries' span, and that the workflow is closed as failed (not left
// running after the client gives up).
func buildFailsAtOnce(t *testing.T, dataset string, req datasets.Request, says ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), failFastBound)
	defer cancel()
	start := time.Now()
	_, err := wfclient.BuildDataset(ctx, stack.Client, stack.Stack.Config, workflows.BuildDatasetInput{Dataset: dataset, Request: req})
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
	desc, err := stack.Client.DescribeWorkflowExecution(context.Background(), wfclient.BuildWorkflowID(dataset, req), "")
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
			"404 Not Found", srv.URL+"/nothing-here/BFCL_v")
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
// the file and line; the build fails at once, writes nothing under
// datasets/ and leaves no staged source behind.
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
	var before [2][]blob.Info
	for i, prefix := range []string{"datasets/", "staging/sources/"} {
		if before[i], err = stack.Store.List(ctx, prefix); err != nil {
			t.Fatal(err)
		}
	}
	buildFailsAtOnce(t, bfcl.Name, datasets.Request{Source: dir},
		filepath.Join(dir, "BFCL_v4_multiple.json")+":2:", "not valid UTF-8")
	for i, prefix := range []string{"datasets/", "staging/sources/"} {
		after, err := stack.Store.List(ctx, prefix)
		if err != nil {
			t.Fatal(err)
		}
		if len(after) != len(before[i]) {
			t.Errorf("a failed build left %d objects under %s", len(after)-len(before[i]), prefix)
		}
	}
}

// TestEvalCorruptPartFailsAtOnce is finding 2 of issue 11 on the real
// stack: a published part overwritten with random bytes of the same size
// (which catalog.Verify's size check cannot see) ends an evaluation at
// once, non-retryably, naming the file; the progress never sits at 0/0.
func TestEvalCorruptPartFailsAtOnce(t *testing.T) {
	ctx := context.Background()
	built, err := buildVia(t, bfcl.Name, datasets.Request{Source: bfcl.Embedded})
	if err != nil {
		t.Fatal(err)
	}
	m, err := catalog.ReadManifest(ctx, stack.Store, built.Dataset, built.Version)
	if err != nil {
		t.Fatal(err)
	}
	f := m.Files[0]
	key := catalog.Dir(m.Name, m.Version) + f.Path
	good, err := blob.GetBytes(ctx, stack.Store, key)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // other tests evaluate this version
		if err := blob.PutBytes(context.Background(), stack.Store, key, good); err != nil {
			t.Errorf("restore %s: %v", key, err)
		}
	})
	bad := make([]byte, len(good))
	r := rand.New(rand.NewPCG(11, 12))
	for i := range bad {
		bad[i] = byte(r.Uint32())
	}
	if err := blob.PutBytes(ctx, stack.Store, key, bad); err != nil {
		t.Fatal(err)
	}
	if err := catalog.Verify(ctx, stack.Store, m); err != nil {
		t.Fatalf("the size check sees the corruption (the test means the same size): %v", err)
	}

	wctx, cancel := context.WithTimeout(ctx, failFastBound)
	defer cancel()
	in := workflows.EvaluateModelInput{Request: runs.Request{Dataset: "bfcl@" + m.Version, Model: "baseline/reference", Limit: 5}}
	run, plan, err := wfclient.StartEval(wctx, stack.Client, stack.Stack.Config, stack.Store, in)
	if err != nil {
		t.Fatal(err)
	}
	_, err = wfclient.WaitEval(wctx, stack.Client, run, plan.RunID, time.Hour, nil)
	if err == nil {
		t.Fatal("evaluation of a corrupt version succeeded")
	}
	if wctx.Err() != nil {
		t.Fatalf("evaluation still not finished after %v: %v", failFastBound, err)
	}
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) || ae.Type() != activities.ErrTypeInvalidInput || !ae.NonRetryable() {
		t.Errorf("error %v is not a non-retryable %s", err, activities.ErrTypeInvalidInput)
	}
	if !strings.Contains(err.Error(), f.Path) || !strings.Contains(err.Error(), "bfcl@"+m.Version) {
		t.Errorf("error %q does not name bfcl@%s and %s", err, m.Version, f.Path)
	}
	desc, err := stack.Client.DescribeWorkflowExecution(ctx, run.GetID(), "")
	if err != nil {
		t.Fatal(err)
	}
	if st := desc.GetWorkflowExecutionInfo().GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_FAILED {
		t.Errorf("workflow status %v, want failed", st)
	}
}
