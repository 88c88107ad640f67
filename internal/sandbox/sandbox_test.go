package sandbox

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestCapWriter(t *testing.T) {
	tests := []struct {
		name      string
		limit     int
		writes    []string
		want      string
		truncated bool
		exceeded  int
	}{
		{"under", 10, []string{"abc", "def"}, "abcdef", false, 0},
		{"exact", 6, []string{"abc", "def"}, "abcdef", false, 0},
		{"over in one write", 4, []string{"abcdef"}, "abcd" + fmt.Sprintf(TruncationMarker, 4), true, 1},
		{"over across writes", 4, []string{"ab", "cd", "ef", "gh"}, "abcd" + fmt.Sprintf(TruncationMarker, 4), true, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			w := &capWriter{limit: tc.limit, onExceed: func() { n++ }}
			for _, s := range tc.writes {
				if got, err := w.Write([]byte(s)); err != nil || got != len(s) {
					t.Fatalf("Write = %d, %v", got, err)
				}
			}
			got, tr := w.result()
			if got != tc.want || tr != tc.truncated || n != tc.exceeded {
				t.Errorf("got %q %v (exceeded %d), want %q %v (%d)", got, tr, n, tc.want, tc.truncated, tc.exceeded)
			}
			if cap(w.buf) > 2*tc.limit+16 {
				t.Errorf("buffer grew to %d for limit %d", cap(w.buf), tc.limit)
			}
		})
	}
}

func TestLimitsWithDefaults(t *testing.T) {
	l := Limits{WallTime: 3 * time.Second, MemoryBytes: 1 << 20}.WithDefaults()
	if l.CPUTime != 3*time.Second || l.MemoryBytes != 1<<20 || l.Processes != DefaultLimits.Processes {
		t.Errorf("WithDefaults = %+v", l)
	}
}

func TestRunExitStatuses(t *testing.T) {
	s := newTestSandbox(t, Config{})
	tests := []struct {
		name     string
		cmd      Cmd
		status   Status
		exitCode int
		stdout   string
	}{
		{"ok", Cmd{Args: []string{"/bin/sh", "-c", "echo hi"}}, StatusOK, 0, "hi\n"},
		{"exit 3", Cmd{Args: []string{"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}}, StatusFailed, 3, "out\n"},
		{"killed by own signal", Cmd{Args: []string{"/bin/sh", "-c", "kill -SEGV $$"}}, StatusFailed, 128 + 11, ""},
		{"stdin", Cmd{Args: []string{"/bin/cat"}, Stdin: []byte("from stdin")}, StatusOK, 0, "from stdin"},
		{"no stdin is EOF", Cmd{Args: []string{"/bin/cat"}}, StatusOK, 0, ""},
		{"env", Cmd{Args: []string{"/bin/sh", "-c", "echo $FOO"}, Env: []string{"FOO=bar"}}, StatusOK, 0, "bar\n"},
		{"cwd is work dir", Cmd{Args: []string{"pwd"}}, StatusOK, 0, WorkPath + "\n"},
		{"python", Cmd{Args: py("print(6*7)")}, StatusOK, 0, "42\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, s, tc.cmd)
			if r.Status != tc.status || r.ExitCode != tc.exitCode || r.Stdout != tc.stdout {
				t.Errorf("got %v stdout %q stderr %q, want %s/%d/%q", r, r.Stdout, r.Stderr, tc.status, tc.exitCode, tc.stdout)
			}
			if r.Wall <= 0 || r.PeakMemoryBytes <= 0 {
				t.Errorf("missing measurements: %v", r)
			}
		})
	}
}

func TestEnforcementReported(t *testing.T) {
	s := newTestSandbox(t, rlimitConfig())
	r := run(t, s, Cmd{Args: []string{"true"}})
	if r.Enforcement.Memory != "rlimit-as" || r.Enforcement.Processes != "rlimit-nproc" || r.Enforcement.CPUTime != "rlimit" {
		t.Errorf("fallback enforcement = %+v", r.Enforcement)
	}
	s = newTestSandbox(t, Config{})
	r = run(t, s, Cmd{Args: []string{"true"}})
	if v := s.CgroupVersion(); v > 0 {
		want := fmt.Sprintf("cgroup-v%d", v)
		if r.Enforcement.Memory != want || r.Enforcement.Processes != want {
			t.Errorf("enforcement = %+v, want %s", r.Enforcement, want)
		}
	}
}

func TestConcurrentRuns(t *testing.T) {
	s := newTestSandbox(t, Config{})
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := s.Run(context.Background(), Cmd{Args: []string{"/bin/sh", "-c", fmt.Sprintf("echo run-%d > f; sleep 0.2; cat f", i)}})
			if err != nil || r.Status != StatusOK || strings.TrimSpace(r.Stdout) != fmt.Sprintf("run-%d", i) {
				errs <- fmt.Sprintf("run %d: %v %v %q", i, r, err, r.Stdout)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if left := leftoverCgroups(s); len(left) > 0 {
		t.Errorf("cgroups left behind: %v", left)
	}
}

// Runs in quick succession under the rlimit fallback: each run's pid-1
// reaper must be reaped at once, or its zombie counts against RLIMIT_NPROC
// of the sandbox uid and a later run cannot fork ("Can't fork for pid 1").
func TestRapidRunsUnderProcessRlimit(t *testing.T) {
	s := newTestSandbox(t, rlimitConfig())
	lim := Limits{Processes: 16}
	for i := range 3 * lim.Processes {
		r, err := s.Run(context.Background(), Cmd{Args: []string{"/bin/true"}, Limits: lim})
		if err != nil || r.Status != StatusOK {
			t.Fatalf("run %d: %v %v", i, r, err)
		}
	}
}

// CPU time and peak memory are the program's, under both enforcement
// paths (the rlimit path reads them from the reaped pid-1 reaper).
func TestResourceUsageReported(t *testing.T) {
	code := "import time\nb = bytearray(96 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass"
	for name, s := range sandboxes(t) {
		t.Run(name, func(t *testing.T) {
			r := run(t, s, Cmd{Args: py(code)})
			if r.Status != StatusOK {
				t.Fatalf("%v %s", r, r.Stderr)
			}
			if r.CPU < 300*time.Millisecond {
				t.Errorf("CPU = %v, want >= 300ms", r.CPU)
			}
			if r.PeakMemoryBytes < 96<<20 {
				t.Errorf("peak memory = %d, want >= 96 MiB", r.PeakMemoryBytes)
			}
		})
	}
}
