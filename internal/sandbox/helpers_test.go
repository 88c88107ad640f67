package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

const python = "/usr/bin/python3"

// newTestSandbox returns a Sandbox or FAILS (never skips) when bwrap is not
// installed: the sandbox is a security boundary and its tests must run.
func newTestSandbox(t testing.TB, cfg Config) *Sandbox {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("sandbox unavailable: %v\nInstall the toolchain with `make setup` (deploy/dev/setup.sh).", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	// A bwrap that cannot build its sandbox here (a container without the
	// options of docs/DEPLOY.md) fails every test at once, saying so.
	if cfg.Bwrap == "" {
		if err := s.Check(context.Background()); err != nil {
			t.Fatalf("sandbox unusable here: %v", err)
		}
	}
	return s
}

// slow skips slow security tests under -short only.
func slow(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("slow security test; skipped with -short")
	}
}

func run(t *testing.T, s *Sandbox, c Cmd) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := s.Run(ctx, c)
	if err != nil {
		t.Fatalf("Run(%q): %v (result %v, stderr %q)", c.Args, err, r, r.Stderr)
	}
	return r
}

func py(code string) []string { return []string{python, "-c", code} }

// rlimitConfig is the rlimit-only fallback, run as a uid of this test
// process alone. RLIMIT_NPROC counts every process of the sandbox uid on
// the host: under the shared 65534, a fork bomb or a burst of runs in
// another process (a second test binary, a dev worker) made this one's runs
// fail to fork ("Creating new namespace failed: Resource temporarily
// unavailable"), and the reverse. Like 65534, the uid needs no account.
func rlimitConfig() Config {
	uid := 2_000_000_000 + os.Getpid()
	return Config{DisableCgroups: true, UID: uid, GID: uid}
}

// sandboxes returns the cgroup-backed sandbox (when this host allows one)
// and the rlimit-only fallback, so that both enforcement paths are tested.
func sandboxes(t *testing.T) map[string]*Sandbox {
	t.Helper()
	out := map[string]*Sandbox{"rlimit": newTestSandbox(t, rlimitConfig())}
	if s := newTestSandbox(t, Config{}); s.CgroupVersion() > 0 {
		out["cgroup"] = s
	} else {
		t.Logf("no writable cgroups on this host: only the rlimit fallback is tested")
	}
	return out
}

// procsWithToken lists host pids whose command line contains token.
func procsWithToken(token string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	self := os.Getpid()
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if strings.Contains(string(b), token) {
			if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
				if i := strings.LastIndexByte(string(st), ')'); i > 0 && i+2 < len(st) && st[i+2] == 'Z' {
					continue // zombie: already dead, waiting for a reaper
				}
			}
			out = append(out, pid)
		}
	}
	return out
}

// leftoverCgroups lists run cgroups of this process still present.
func leftoverCgroups(s *Sandbox) []string {
	if s.cg == nil {
		return nil
	}
	var out []string
	prefix := "benchline-sb-" + strconv.Itoa(os.Getpid()) + "-"
	for _, parent := range s.cg.parents {
		ents, _ := os.ReadDir(parent)
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), prefix) {
				out = append(out, filepath.Join(parent, e.Name()))
			}
		}
	}
	return out
}

// repoRoot is the checkout this test runs from.
func repoRoot(t *testing.T) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// waitFor polls cond until it holds or timeout passes, and reports whether
// it held. The timeout only bounds a failing test: a passing one goes on as
// soon as cond holds.
func waitFor(timeout time.Duration, cond func() bool) bool {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		<-tick.C
	}
	return true
}

// liveness ticks every 50ms in the test process and records the largest
// gap between ticks: a liveness check of the host, not a benchmark.
type liveness struct {
	stop chan struct{}
	done chan time.Duration
}

func startLiveness() *liveness {
	l := &liveness{stop: make(chan struct{}), done: make(chan time.Duration, 1)}
	go func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		last, worst := time.Now(), time.Duration(0)
		for {
			select {
			case <-l.stop:
				l.done <- worst
				return
			case now := <-tick.C:
				worst = max(worst, now.Sub(last))
				last = now
			}
		}
	}()
	return l
}

func (l *liveness) maxGap() time.Duration { close(l.stop); return <-l.done }
