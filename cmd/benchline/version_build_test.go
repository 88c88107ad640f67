package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/buildinfo"
)

// TestPlainGoBuildVersionShowsTheCommit (issue 34): `go build` of
// cmd/benchline in a git clone, with no -ldflags, gives a binary whose
// --version names the clone's commit and time (the Go build information's
// vcs.revision and vcs.time); built with -buildvcs=false it says how to
// get a commit instead of a bare "unknown". The clone is made from this
// checkout's HEAD (a git worktree, as the engineers' checkouts are, gets
// no VCS stamp from Go: its .git is a file). GOFLAGS is set for the child
// builds, because a machine's `go env` may set -buildvcs=false (this one
// does).
func TestPlainGoBuildVersionShowsTheCommit(t *testing.T) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed: cannot clone the checkout to build from")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go is not on PATH: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute) // a deadline against hangs, not a speed check
	defer cancel()
	run := func(dir string, env []string, name string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
		}
		return strings.TrimSpace(out.String())
	}
	top := strings.TrimSpace(run(".", nil, gitBin, "rev-parse", "--show-toplevel"))
	clone := filepath.Join(t.TempDir(), "benchline")
	run(".", nil, gitBin, "clone", "--quiet", "--no-hardlinks", top, clone)
	head := run(clone, nil, gitBin, "rev-parse", "HEAD")
	// The checkout's uncommitted changes and new files go on top, so the
	// code under test is the checkout's; Go then marks the commit modified.
	modified := false
	if diff := run(".", nil, gitBin, "diff", "HEAD", "--binary"); diff != "" {
		modified = true
		patch := filepath.Join(t.TempDir(), "wip.patch")
		if err := os.WriteFile(patch, []byte(diff+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		run(clone, nil, gitBin, "apply", "--whitespace=nowarn", patch)
	}
	if others := run(top, nil, gitBin, "ls-files", "--others", "--exclude-standard"); others != "" {
		for _, f := range strings.Split(others, "\n") {
			modified = true
			b, err := os.ReadFile(filepath.Join(top, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(clone, f)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(clone, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	commit := head
	if modified {
		commit += "+modified"
	}
	when := run(clone, []string{"TZ=UTC"}, gitBin, "log", "-1", "--format=%cd", "--date=format-local:%Y-%m-%dT%H:%M:%SZ")

	bin := filepath.Join(t.TempDir(), "benchline")
	run(clone, []string{"GOFLAGS=-buildvcs=auto"}, goBin, "build", "-o", bin, "./cmd/benchline")
	got := run(clone, nil, bin, "--version")
	if !strings.Contains(got, "(commit "+commit+", built "+when+", go1.") || strings.Contains(got, buildinfo.NotStampedHint) {
		t.Errorf("--version of a plain go build = %q, want commit %s built %s", got, commit, when)
	}

	run(clone, []string{"GOFLAGS=-buildvcs=false"}, goBin, "build", "-o", bin, "./cmd/benchline")
	got = run(clone, nil, bin, "--version")
	if !strings.Contains(got, "commit unknown") || !strings.HasSuffix(got, "; "+buildinfo.NotStampedHint) {
		t.Errorf("--version of a build without VCS information = %q, want the hint %q", got, buildinfo.NotStampedHint)
	}
}
