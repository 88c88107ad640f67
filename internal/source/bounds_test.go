package source

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/limits"
)

// openWithin opens name at loc and reads it whole, failing the test (not
// hanging it) if that has not ended within a minute: the bound is a
// deadline against a hang, not a performance check.
func openWithin(t *testing.T, loc Location, name string) ([]byte, error) {
	t.Helper()
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		rc, err := loc.Open(context.Background(), name)
		if err != nil {
			done <- result{nil, err}
			return
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		done <- result{b, err}
	}()
	select {
	case r := <-done:
		return r.b, r.err
	case <-time.After(time.Minute):
		t.Fatalf("opening %s did not end within a minute: it blocks", loc.URI(name))
		return nil, nil
	}
}

// TestLocalReadsOnlyRegularFilesInside: in a --source directory, a file
// that is not a regular file (a FIFO, a socket, a directory) or a symbolic
// link leading out of the directory is refused at once, as bad input
// naming the file; a link that stays inside is followed.
func TestLocalReadsOnlyRegularFilesInside(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "passwd")
	if err := os.WriteFile(secret, []byte("root:x:0:0:root:/root:/bin/bash\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, name string) {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	write("BFCL_v3_simple.json", "{\"id\": \"inside\"}\n")
	write("possible_answer/BFCL_v4_simple.json", "{\"id\": \"answer\"}\n")
	if err := syscall.Mkfifo(filepath.Join(dir, "BFCL_v4_multiple.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	link(secret, "BFCL_v4_memory.json")                                           // absolute, out
	link(filepath.Join("..", filepath.Base(outside), "passwd"), "toolpref.jsonl") // relative, out
	link(outside, "possible_answer-out")                                          // a directory outside
	link("BFCL_v3_simple.json", "BFCL_v4_simple.json")                            // inside: followed
	link("../BFCL_v3_simple.json", "possible_answer/BFCL_v4_live.json")           // inside, from below
	link("loop.json", "loop.json")
	if err := os.Mkdir(filepath.Join(dir, "BFCL_v4_dir.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	sock, err := net.Listen("unix", filepath.Join(dir, "BFCL_v4_socket.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()

	loc, err := Parse(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"BFCL_v4_simple.json", "possible_answer/BFCL_v4_live.json"} {
		b, err := openWithin(t, loc, name)
		if err != nil || string(b) != "{\"id\": \"inside\"}\n" {
			t.Errorf("%s, a link inside the directory: %q, %v", name, b, err)
		}
	}
	tests := []struct{ name, says string }{
		{"BFCL_v4_multiple.json", "named pipe"},
		{"BFCL_v4_memory.json", "symbolic link to " + secret},
		{"toolpref.jsonl", "leads out of the source directory"},
		{"possible_answer-out/passwd", "leads out of"},
		{"loop.json", "loops"},
		{"BFCL_v4_dir.json", "a directory"},
		{"BFCL_v4_socket.json", "a socket"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := openWithin(t, loc, tc.name)
			if err == nil {
				t.Fatalf("read %q", b)
			}
			if !errors.Is(err, ErrInvalid) || !Permanent(err) {
				t.Errorf("error %v: want ErrInvalid, permanent", err)
			}
			for _, want := range []string{filepath.Join(dir, tc.name), tc.says} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
	// Listing names every entry but directories, whatever it is: only
	// reading one is refused.
	names, err := loc.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names, " "); !strings.Contains(got, "BFCL_v4_multiple.json") || !strings.Contains(got, "BFCL_v4_memory.json") {
		t.Errorf("List = %v", names)
	}
}

// TestSourceBytesBound: a source file larger than limits.max_source_bytes
// is refused as bad input naming it and the setting: at once when its
// size is known (a local file, a declared Content-Length, an S3 object),
// and, for a body without a declared length, after reading the limit and
// one byte, no further. A file at the limit is read whole.
func TestSourceBytesBound(t *testing.T) {
	const max = 4096
	defer limits.Set(limits.Limits{})
	limits.Set(limits.Limits{SourceBytes: max})
	ctx := context.Background()
	checkTooLarge := func(t *testing.T, err error, names string) {
		t.Helper()
		if !errors.Is(err, limits.ErrTooLarge) || !Permanent(err) {
			t.Fatalf("error %v: want limits.ErrTooLarge, permanent", err)
		}
		for _, want := range []string{names, "limits.max_source_bytes", fmt.Sprint(max)} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
	}

	t.Run("local", func(t *testing.T) {
		dir := t.TempDir()
		for name, size := range map[string]int{"at.json": max, "over.json": max + 1} {
			if err := os.WriteFile(filepath.Join(dir, name), bytes.Repeat([]byte("x"), size), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		loc, err := Parse(ctx, dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		if b, err := openWithin(t, loc, "at.json"); err != nil || len(b) != max {
			t.Errorf("at the limit: %d bytes, %v", len(b), err)
		}
		_, err = loc.Open(ctx, "over.json")
		checkTooLarge(t, err, filepath.Join(dir, "over.json"))
	})

	t.Run("http declared", func(t *testing.T) {
		var sent atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", fmt.Sprint(int64(10<<30)))
			w.WriteHeader(http.StatusOK)
			chunk := make([]byte, 64<<10)
			for sent.Load() < 10<<30 {
				n, err := w.Write(chunk)
				sent.Add(int64(n))
				if err != nil {
					return
				}
			}
		}))
		defer srv.Close()
		loc, _ := Parse(ctx, srv.URL+"/data/", nil)
		rc, err := loc.Open(ctx, "big.json")
		if err == nil {
			rc.Close()
			t.Fatal("a declared 10 GiB body was opened")
		}
		checkTooLarge(t, err, srv.URL+"/data/big.json")
		if !strings.Contains(err.Error(), "10737418240") {
			t.Errorf("error %q does not say the declared length", err)
		}
	})

	t.Run("http undeclared", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			size := max
			if r.URL.Path == "/data/over.json" {
				size = 100 * max // chunked, no Content-Length
			}
			for i := 0; i < size; i += 512 {
				w.Write(bytes.Repeat([]byte("y"), 512))
				w.(http.Flusher).Flush()
			}
		}))
		defer srv.Close()
		loc, _ := Parse(ctx, srv.URL+"/data/", nil)
		if b, err := openWithin(t, loc, "at.json"); err != nil || len(b) != max {
			t.Errorf("at the limit: %d bytes, %v", len(b), err)
		}
		rc, err := loc.Open(ctx, "over.json")
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		n, err := io.Copy(io.Discard, rc)
		checkTooLarge(t, err, srv.URL+"/data/over.json")
		if n != max {
			t.Errorf("read %d bytes before failing, want the limit, %d", n, max)
		}
	})

	t.Run("s3", func(t *testing.T) {
		mem := blobtest.NewMemory()
		blob.PutBytes(ctx, mem, "at.json", bytes.Repeat([]byte("z"), max))
		blob.PutBytes(ctx, mem, "over.json", bytes.Repeat([]byte("z"), max+1))
		loc, err := Parse(ctx, "s3://bucket/mirror", func(context.Context, string, string) (blob.Store, error) { return mem, nil })
		if err != nil {
			t.Fatal(err)
		}
		if b, err := openWithin(t, loc, "at.json"); err != nil || len(b) != max {
			t.Errorf("at the limit: %d bytes, %v", len(b), err)
		}
		_, err = loc.Open(ctx, "over.json")
		checkTooLarge(t, err, "s3://bucket/mirror/over.json")
	})
}

// TestBoundedReader: the reader of every source fails past the limit,
// having returned exactly the limit's bytes, and keeps failing.
func TestBoundedReader(t *testing.T) {
	defer limits.Set(limits.Limits{})
	limits.Set(limits.Limits{SourceBytes: 10})
	for _, size := range []int{0, 9, 10, 11, 1000} {
		rc := bounded(io.NopCloser(bytes.NewReader(bytes.Repeat([]byte("a"), size))), "mem://f")
		b, err := io.ReadAll(rc)
		if size <= 10 {
			if err != nil || len(b) != size {
				t.Errorf("%d bytes: %d, %v", size, len(b), err)
			}
			continue
		}
		if !errors.Is(err, limits.ErrTooLarge) || len(b) != 10 {
			t.Errorf("%d bytes: read %d, %v; want 10 and ErrTooLarge", size, len(b), err)
		}
		if _, err := rc.Read(make([]byte, 4)); !errors.Is(err, limits.ErrTooLarge) {
			t.Errorf("a read past the limit: %v", err)
		}
	}
}

// TestRedirectLoop: a source URL that redirects forever is bad input (not
// retried) after MaxRedirects redirects, named without its credentials or
// its query (a redirect's query may hold a signature).
func TestRedirectLoop(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := requests.Add(1)
		http.Redirect(w, r, fmt.Sprintf("/data/loop.json?X-Amz-Signature=s3cr3t&n=%d", n), http.StatusFound)
	}))
	defer srv.Close()
	loc, err := Parse(context.Background(), strings.Replace(srv.URL, "http://", "http://reader:pa55word@", 1)+"/data/", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = openWithin(t, loc, "loop.json")
	if err == nil {
		t.Fatal("a redirect loop was read")
	}
	if !errors.Is(err, ErrInvalid) || !Permanent(err) {
		t.Errorf("error %v: want ErrInvalid, permanent", err)
	}
	for _, want := range []string{srv.URL + "/data/loop.json", "redirects"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	for _, secret := range []string{"s3cr3t", "pa55word", "reader"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error %q gives away %q", err, secret)
		}
	}
	if n := requests.Load(); n != MaxRedirects+1 {
		t.Errorf("%d requests, want %d", n, MaxRedirects+1)
	}
}
