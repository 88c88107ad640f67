package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"

	"github.com/benchline/benchline/activities"
	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/bfcl"
	"github.com/benchline/benchline/datasets/datasetstest"
	"github.com/benchline/benchline/datasets/toolpref"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/s3blob"
	"github.com/benchline/benchline/internal/wfclient"
	"github.com/benchline/benchline/workflows"
)

// The source-layer cases of issues 33 and 34 on the real stack: a FIFO
// and symbolic links in a --source directory, source files over
// limits.max_source_bytes (a declared Content-Length, a body without one,
// an S3 object, a local file) and a URL that redirects forever. Each build
// must end, before a deadline far below what the bad input used to cost
// (a FIFO: 3 hours; a 10 GiB body: the 5-minute time-out, retried; a
// redirect loop: 12 attempts, 6 minutes), with a non-retryable
// InvalidInput error naming the file or URL, publish nothing and leave
// nothing staged.

// sourceDeadline bounds each case's build: a deadline against a hang on a
// loaded machine, not a performance check.
const sourceDeadline = 90 * time.Second

// buildRefused builds dataset from req on the task queue queue ("" for the
// shared worker's) and checks that it fails within sourceDeadline as
// non-retryable InvalidInput saying every one of says and none of never,
// that the workflow is closed as failed, and that nothing was published
// or left staged.
func buildRefused(t *testing.T, queue, dataset string, req datasets.Request, says, never []string) {
	t.Helper()
	id := wfclient.BuildWorkflowID(dataset, req)
	terminateOnCleanup(t, id)
	cfg := stack.Stack.Config
	if queue != "" {
		cfg.Temporal.TaskQueue = queue
	}
	before := map[string]int{}
	for _, prefix := range []string{"datasets/", "staging/sources/"} {
		infos, err := stack.Store.List(context.Background(), prefix)
		if err != nil {
			t.Fatal(err)
		}
		before[prefix] = len(infos)
	}
	ctx, cancel := context.WithTimeout(context.Background(), sourceDeadline)
	defer cancel()
	start := time.Now()
	_, err := wfclient.BuildDataset(ctx, stack.Client, cfg, workflows.BuildDatasetInput{Dataset: dataset, Request: req})
	if err == nil {
		t.Fatal("build succeeded")
	}
	if ctx.Err() != nil {
		t.Fatalf("build still not finished after %v (it hangs or is retried): %v", time.Since(start).Round(time.Second), err)
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
	for _, s := range never {
		if strings.Contains(err.Error(), s) {
			t.Errorf("build error %q gives away %q", err, s)
		}
	}
	desc, err := stack.Client.DescribeWorkflowExecution(context.Background(), id, "")
	if err != nil {
		t.Fatal(err)
	}
	if st := desc.GetWorkflowExecutionInfo().GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_FAILED {
		t.Errorf("workflow status %v, want failed", st)
	}
	for prefix, n := range before {
		infos, err := stack.Store.List(context.Background(), prefix)
		if err != nil {
			t.Fatal(err)
		}
		if len(infos) != n {
			t.Errorf("the failed build left %d objects under %s", len(infos)-n, prefix)
		}
	}
}

// bfclFixtures copies the BFCL fixtures to a fresh directory.
func bfclFixtures(t *testing.T) string {
	return datasetstest.SourceDir(t, "../../datasets/bfcl/fixtures", nil)
}

// TestBoundedSourcesLocal: a FIFO named like a BFCL category, and
// symbolic links leading out of the source directory (named like a
// supported category, like an unsupported one, for bfcl and toolpref),
// end the build at once naming the file; nothing is read through them.
func TestBoundedSourcesLocal(t *testing.T) {
	outside := t.TempDir()
	passwd := filepath.Join(outside, "passwd")
	writeFiles(t, outside, map[string]string{"passwd": "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"})

	t.Run("fifo", func(t *testing.T) {
		dir := bfclFixtures(t)
		fifo := filepath.Join(dir, "BFCL_v4_multiple.json")
		if err := os.Remove(fifo); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Fatal(err)
		}
		// Should a reader block in open() (the code before the fix), a
		// writer that comes and goes lets it go when the test ends.
		t.Cleanup(func() {
			if fd, err := syscall.Open(fifo, syscall.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				syscall.Close(fd)
			}
		})
		buildRefused(t, "", bfcl.Name, datasets.Request{Source: dir}, []string{fifo, "named pipe (FIFO)"}, nil)
	})
	for _, tc := range []struct{ dataset, name string }{
		{bfcl.Name, "BFCL_v4_simple_python.json"}, // read and staged before the fix
		{bfcl.Name, "BFCL_v4_memory.json"},        // counted as skipped items before the fix
		{toolpref.Name, "BFCL_v4_memory.json"},
	} {
		t.Run(tc.dataset+"/link-out/"+tc.name, func(t *testing.T) {
			dir := bfclFixtures(t)
			if tc.dataset == toolpref.Name {
				dir = datasetstest.SourceDir(t, "../../datasets/toolpref/fixtures", nil)
			}
			link := filepath.Join(dir, tc.name)
			os.Remove(link)
			if err := os.Symlink(passwd, link); err != nil {
				t.Fatal(err)
			}
			buildRefused(t, "", tc.dataset, datasets.Request{Source: dir},
				[]string{link, "symbolic link to " + passwd, "leads out of the source directory"}, []string{"root:x:0"})
		})
	}
	t.Run("link-inside", func(t *testing.T) {
		// A link that stays inside the directory is followed: the build
		// gives the version of the files themselves.
		want, err := buildVia(t, bfcl.Name, datasets.Request{Source: bfcl.Embedded})
		if err != nil {
			t.Fatal(err)
		}
		dir := bfclFixtures(t)
		if err := os.Rename(filepath.Join(dir, "BFCL_v4_multiple.json"), filepath.Join(dir, "multiple.data")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("multiple.data", filepath.Join(dir, "BFCL_v4_multiple.json")); err != nil {
			t.Fatal(err)
		}
		got, err := buildVia(t, bfcl.Name, datasets.Request{Source: dir})
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != want.Version || got.Rows != want.Rows {
			t.Errorf("built %s (%d rows), want %s (%d rows)", got.Version, got.Rows, want.Version, want.Rows)
		}
	})
}

// TestBoundedSourcesHTTP: a source URL declaring a 10 GiB body is refused
// before its body is read, at the default limit (1 GiB); a URL that
// redirects forever is refused after 10 redirects, named without its
// credentials or the redirects' signatures.
func TestBoundedSourcesHTTP(t *testing.T) {
	dir, _ := filepath.Abs("../../datasets/bfcl/fixtures")
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/huge/BFCL_v4_simple_python.json":
			w.Header().Set("Content-Length", fmt.Sprint(int64(10<<30)))
			line := bytes.Repeat([]byte("{}\n"), 20<<10)
			for r.Context().Err() == nil {
				if _, err := w.Write(line); err != nil {
					return
				}
			}
		case strings.HasPrefix(r.URL.Path, "/loop/"):
			http.Redirect(w, r, r.URL.Path+"?X-Amz-Signature=s3cr3t-sig", http.StatusFound)
		default:
			http.StripPrefix("/huge", files).ServeHTTP(w, r)
		}
	}))
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })

	t.Run("declared-10GiB", func(t *testing.T) {
		buildRefused(t, "", bfcl.Name, datasets.Request{Source: srv.URL + "/huge/"},
			[]string{srv.URL + "/huge/BFCL_v4_simple_python.json", "declares 10737418240 bytes", "limits.max_source_bytes"}, nil)
	})
	t.Run("redirect-loop", func(t *testing.T) {
		base := strings.Replace(srv.URL, "http://", "http://reader:pa55word@", 1) + "/loop/"
		buildRefused(t, "", bfcl.Name, datasets.Request{Source: base},
			[]string{srv.URL + "/loop/BFCL_v", "more than 10 redirects"}, []string{"s3cr3t-sig", "pa55word"})
	})
}

// TestBoundedSourcesSetting: on a worker started with
// BENCHLINE_MAX_SOURCE_BYTES=1 MiB, a body without a declared length stops
// past 1 MiB, and an s3:// object or a local file over 1 MiB is refused
// before it is read.
func TestBoundedSourcesSetting(t *testing.T) {
	const max = 1 << 20
	bin := filepath.Join(t.TempDir(), "benchline")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/benchline").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	queue := "bounded-sources-1mib"
	startProcWorker(t, bin, workerEnv(queue, stack.BaselineURL, fmt.Sprintf("BENCHLINE_MAX_SOURCE_BYTES=%d", max)), "worker", "--queues", "main")
	// A line of "{}" over and over: valid lines, so that only the size
	// limit can stop it.
	lines := bytes.Repeat([]byte("{}\n"), 2*max/3)

	t.Run("http-undeclared", func(t *testing.T) {
		dir, _ := filepath.Abs("../../datasets/bfcl/fixtures")
		files := http.FileServer(http.Dir(dir))
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/endless/BFCL_v4_simple_python.json" {
				http.StripPrefix("/endless", files).ServeHTTP(w, r)
				return
			}
			for r.Context().Err() == nil { // chunked: no Content-Length, no end
				if _, err := w.Write(lines[:64<<10]); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		}))
		t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
		file := srv.URL + "/endless/BFCL_v4_simple_python.json"
		buildRefused(t, queue, bfcl.Name, datasets.Request{Source: srv.URL + "/endless/"},
			[]string{file, fmt.Sprintf("is larger than %d bytes", max), "limits.max_source_bytes"}, nil)
	})
	t.Run("s3", func(t *testing.T) {
		ctx := context.Background()
		cfg := stack.Stack.Config.S3
		cfg.Bucket = "bounded-sources"
		src, err := s3blob.New(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := src.EnsureBucket(ctx); err != nil {
			t.Fatal(err)
		}
		dir := bfclFixtures(t)
		writeFiles(t, dir, map[string]string{"BFCL_v4_simple_python.json": string(lines)})
		err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			return blob.PutBytes(ctx, src, "big/"+filepath.ToSlash(rel), b)
		})
		if err != nil {
			t.Fatal(err)
		}
		buildRefused(t, queue, bfcl.Name, datasets.Request{Source: "s3://bounded-sources/big"},
			[]string{"s3://bounded-sources/big/BFCL_v4_simple_python.json", fmt.Sprintf("is %d bytes, more than the limit of %d", len(lines), max)}, nil)
	})
	t.Run("local", func(t *testing.T) {
		dir := bfclFixtures(t)
		file := filepath.Join(dir, "BFCL_v4_simple_python.json")
		writeFiles(t, dir, map[string]string{"BFCL_v4_simple_python.json": string(lines)})
		buildRefused(t, queue, bfcl.Name, datasets.Request{Source: dir},
			[]string{file, fmt.Sprintf("is %d bytes, more than the limit of %d", len(lines), max)}, nil)
	})
}
