package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func token(t *testing.T) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func TestNetworkUnreachable(t *testing.T) {
	s := newTestSandbox(t, Config{})
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	acceptedOne := make(chan struct{}, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
			select {
			case acceptedOne <- struct{}{}:
			default:
			}
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	// The loopback address plus every address of the host's interfaces.
	targets := []string{"127.0.0.1"}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && !ipn.IP.IsLoopback() {
				targets = append(targets, ipn.IP.String())
			}
		}
	}
	// Sanity: the listener is reachable from the host.
	if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err != nil {
		t.Fatalf("host cannot reach its own listener: %v", err)
	} else {
		c.Close()
	}
	// The baseline must include the host's own connection: wait until the
	// listener has counted it.
	select {
	case <-acceptedOne:
	case <-time.After(30 * time.Second):
		t.Fatal("the listener never accepted the host's own connection")
	}
	base := accepted.Load()
	code := fmt.Sprintf(`
import socket
ok = 0
for host in %q.split():
    s = socket.socket(); s.settimeout(2)
    try:
        s.connect((host, %d)); print("CONNECTED", host); ok += 1
    except OSError as e:
        print("refused", host, e)
print("ok", ok)
`, strings.Join(targets, " "), port)
	r := run(t, s, Cmd{Args: py(code)})
	if r.Status != StatusOK || strings.Contains(r.Stdout, "CONNECTED") {
		t.Fatalf("sandbox reached the host: %v\n%s%s", r, r.Stdout, r.Stderr)
	}
	if got := accepted.Load() - base; got != 0 {
		t.Fatalf("listener accepted %d connections from the sandbox", got)
	}
	if !strings.Contains(r.Stdout, "refused 127.0.0.1") {
		t.Fatalf("unexpected output: %s", r.Stdout)
	}
}

func TestDNSFails(t *testing.T) {
	s := newTestSandbox(t, Config{})
	r := run(t, s, Cmd{Args: py(`
import socket, sys
try:
    print(socket.getaddrinfo("example.com", 80)); sys.exit(0)
except OSError as e:
    print("dns failed", e); sys.exit(3)
`)})
	if r.Status != StatusFailed || r.ExitCode != 3 {
		t.Fatalf("DNS resolution worked in the sandbox: %v %s", r, r.Stdout)
	}
}

func TestEnvironmentNotLeaked(t *testing.T) {
	s := newTestSandbox(t, Config{})
	secret := "benchline-secret-" + token(t)
	t.Setenv("BENCHLINE_TEST_SECRET", secret)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	r := run(t, s, Cmd{Args: []string{"/bin/sh", "-c", `env; cat /proc/*/environ 2>/dev/null | tr '\0' '\n'`},
		Env: []string{"EXTRA=1"}})
	if r.Status != StatusOK {
		t.Fatalf("run: %v %s", r, r.Stderr)
	}
	if strings.Contains(r.Stdout, secret) {
		t.Fatalf("secret leaked into the sandbox:\n%s", r.Stdout)
	}
	allowed := map[string]bool{"PATH": true, "HOME": true, "TMPDIR": true, "LANG": true, "PWD": true, "EXTRA": true, "SHLVL": true, "_": true, "OLDPWD": true}
	for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		k, _, _ := strings.Cut(line, "=")
		if !allowed[k] {
			t.Errorf("unexpected variable in the sandbox: %q", line)
		}
	}
}

func TestHiddenAndUnreadablePaths(t *testing.T) {
	s := newTestSandbox(t, Config{})
	// A world-readable secret in the host's /tmp must not be visible.
	hostTmp, err := os.CreateTemp("", "benchline-host-secret-*")
	if err != nil {
		t.Fatal(err)
	}
	hostTmp.WriteString("secret")
	hostTmp.Close()
	os.Chmod(hostTmp.Name(), 0o644)
	defer os.Remove(hostTmp.Name())
	home, _ := os.UserHomeDir()
	repo := repoRoot(t)
	if _, err := os.Stat(filepath.Join(repo, "go.mod")); err != nil {
		t.Fatalf("repo root %s: %v", repo, err)
	}
	paths := []string{
		"/etc/shadow", "/etc/gshadow", "/root", "/home", home,
		filepath.Join(home, ".aws/credentials"), filepath.Join(home, ".ssh"),
		filepath.Join(home, ".config"), repo, filepath.Join(repo, "go.mod"),
		hostTmp.Name(), "/var/run/docker.sock", "/run",
		"/sys/class/net", "/opt",
	}
	code := `
import os, sys
for p in sys.argv[1:]:
    try:
        if os.path.isdir(p):
            print("READ", p, os.listdir(p))
        else:
            with open(p, "rb") as f:
                print("READ", p, f.read(64))
    except OSError as e:
        print("denied", p, type(e).__name__)
`
	r := run(t, s, Cmd{Args: append(py(code), paths...)})
	if r.Status != StatusOK {
		t.Fatalf("run: %v %s", r, r.Stderr)
	}
	for _, line := range strings.Split(r.Stdout, "\n") {
		if strings.HasPrefix(line, "READ ") {
			t.Errorf("sandbox could read a hidden path: %s", line)
		}
	}
	if n := strings.Count(r.Stdout, "denied "); n != len(paths) {
		t.Errorf("expected every path denied, got:\n%s", r.Stdout)
	}
}

func TestNoWritesOutsideWorkDir(t *testing.T) {
	s := newTestSandbox(t, Config{})
	wd, err := s.NewWorkDir(map[string][]byte{"in.txt": []byte("hello")})
	if err != nil {
		t.Fatal(err)
	}
	defer wd.Remove()
	tok := token(t)
	hostTmpTarget := filepath.Join(os.TempDir(), "benchline-escape-"+tok)
	code := `
import os, sys
for p in sys.argv[1:]:
    try:
        with open(p, "w") as f: f.write("x")
        print("WROTE", p)
    except OSError as e:
        print("denied", p, type(e).__name__)
print("in", open("in.txt").read())
`
	targets := []string{"/usr/x-" + tok, "/etc/x-" + tok, "/x-" + tok, "/proc/x-" + tok, "/usr/local/x-" + tok}
	// /dev and /tmp are private tmpfs mounts: writable, never the host's.
	private := []string{hostTmpTarget, "/dev/x-" + tok, "/tmp/scratch-" + tok}
	r := run(t, s, Cmd{Dir: wd.Path, Args: append(py(code), append(append(targets, private...), "out-"+tok)...)})
	if r.Status != StatusOK {
		t.Fatalf("run: %v %s", r, r.Stderr)
	}
	for _, p := range targets {
		if !strings.Contains(r.Stdout, "denied "+p) {
			t.Errorf("write to %s was not denied:\n%s", p, r.Stdout)
		}
		if _, err := os.Stat(p); err == nil {
			t.Errorf("host file %s created by the sandbox", p)
			os.Remove(p)
		}
	}
	for _, p := range private {
		if _, err := os.Stat(p); err == nil {
			os.Remove(p)
			t.Errorf("sandbox wrote to the host's %s", p)
		}
	}
	if !strings.Contains(r.Stdout, "in hello") {
		t.Errorf("work dir input not readable: %s", r.Stdout)
	}
	if b, err := os.ReadFile(filepath.Join(wd.Path, "out-"+tok)); err != nil || string(b) != "x" {
		t.Errorf("write to the work dir not visible on the host: %v", err)
	}
}

func TestUnprivileged(t *testing.T) {
	s := newTestSandbox(t, Config{})
	r := run(t, s, Cmd{Args: []string{"/bin/sh", "-c",
		`id -u; id -g; grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs):' /proc/self/status; ls /proc | grep -cE '^[0-9]+$'`}})
	if r.Status != StatusOK {
		t.Fatalf("run: %v %s", r, r.Stderr)
	}
	lines := strings.Fields(r.Stdout)
	want := []string{"65534", "65534", "CapPrm:", "0000000000000000", "CapEff:", "0000000000000000"}
	for i, w := range want {
		if i >= len(lines) || lines[i] != w {
			t.Fatalf("not unprivileged: got %q", r.Stdout)
		}
	}
	if !strings.Contains(r.Stdout, "NoNewPrivs:\t1") && !strings.Contains(r.Stdout, "NoNewPrivs: 1") {
		// Fields() split it: check the token sequence instead.
		if !strings.Contains(strings.Join(lines, " "), "NoNewPrivs: 1") {
			t.Errorf("no_new_privs not set: %q", r.Stdout)
		}
	}
	// Only the sandbox's own processes are visible (pid namespace): bwrap's
	// reaper, sh, ls, grep — not the host's.
	if n := lines[len(lines)-1]; len(n) > 1 {
		t.Errorf("sandbox sees %s processes: host pid namespace visible?", n)
	}
}

func TestForkBomb(t *testing.T) {
	slow(t)
	for name, s := range sandboxes(t) {
		t.Run(name, func(t *testing.T) {
			tok := token(t)
			live := startLiveness()
			// Each process forks two more forever; the marker finds survivors.
			r := run(t, s, Cmd{
				Args:   []string{"/bin/bash", "-c", `b(){ b | b & }; b; sleep 30 # ` + tok},
				Limits: Limits{WallTime: 5 * time.Second, Processes: 32, CPUTime: 5 * time.Second},
			})
			gap := live.maxGap()
			t.Logf("%v; worst tick gap %v", r, gap)
			if r.Status == StatusOK {
				t.Errorf("fork bomb finished ok: %v", r)
			}
			if left := procsWithToken(tok); len(left) > 0 {
				t.Errorf("processes left behind: %v", left)
			}
			if gap > 3*time.Second {
				t.Errorf("host unresponsive during fork bomb: worst tick gap %v", gap)
			}
		})
	}
}

func TestMemoryBomb(t *testing.T) {
	slow(t)
	code := `
chunks = []
for i in range(4096):
    chunks.append(bytearray(1 << 20))  # 1 MiB, touched
print("allocated", len(chunks))
`
	for name, s := range sandboxes(t) {
		t.Run(name, func(t *testing.T) {
			live := startLiveness()
			r := run(t, s, Cmd{Args: py(code), Limits: Limits{MemoryBytes: 128 << 20, WallTime: 20 * time.Second}})
			gap := live.maxGap()
			t.Logf("%v; worst tick gap %v; stderr tail %q", r, gap, lastLine(r.Stderr))
			if r.Status == StatusOK || strings.Contains(r.Stdout, "allocated") {
				t.Fatalf("4 GiB allocated under a 128 MiB limit: %v", r)
			}
			if name == "cgroup" {
				if r.Status != StatusMemory || r.LimitHit != LimitMemory {
					t.Errorf("status %s, want memory", r.Status)
				}
				if r.PeakMemoryBytes > 140<<20 {
					t.Errorf("peak %d bytes exceeds the 128 MiB limit", r.PeakMemoryBytes)
				}
			} else if !strings.Contains(r.Stderr, "MemoryError") {
				t.Errorf("rlimit fallback: want a MemoryError, got %q", r.Stderr)
			}
			if gap > 3*time.Second {
				t.Errorf("host unresponsive during memory bomb: worst tick gap %v", gap)
			}
		})
	}
}

func TestCPULimit(t *testing.T) {
	slow(t)
	tests := []struct {
		name string
		args []string
	}{
		{"busy loop", py("while True: pass")},
		// Two processes each under the per-process RLIMIT_CPU: only the
		// cgroup's summed accounting catches them before the wall limit.
		{"two busy processes", []string{"/bin/sh", "-c", "python3 -c 'while True: pass' & python3 -c 'while True: pass'"}},
	}
	// The verdict is in CPU time, not wall time: on a loaded host a second
	// of CPU can take many seconds of wall time. The wall limit is far
	// off, so only the CPU limit can end the run in time.
	for name, s := range sandboxes(t) {
		for _, tc := range tests {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				r := run(t, s, Cmd{Args: tc.args, Limits: Limits{CPUTime: time.Second, WallTime: time.Minute, CPUs: 2}})
				t.Logf("%v", r)
				if r.Status != StatusTimeout {
					t.Fatalf("status %s, want timeout", r.Status)
				}
				if name == "cgroup" || tc.name == "busy loop" {
					if r.LimitHit != LimitCPU {
						t.Errorf("limit hit %q, want cpu", r.LimitHit)
					}
					if r.CPU > 2*time.Second {
						t.Errorf("the CPU limit of 1s let the run use %v of CPU", r.CPU)
					}
				}
			})
		}
	}
}

func TestWallLimitKillsTree(t *testing.T) {
	slow(t)
	for name, s := range sandboxes(t) {
		t.Run(name, func(t *testing.T) {
			tok := token(t)
			// A child in its own session that ignores SIGTERM/SIGHUP, and a
			// sleeping parent.
			script := `setsid sh -c 'trap "" TERM HUP; sleep 300; : ` + tok + `' & sleep 300 # ` + tok
			r := run(t, s, Cmd{Args: []string{"/bin/sh", "-c", script}, Limits: Limits{WallTime: time.Second}})
			if r.Status != StatusTimeout || r.LimitHit != LimitWall {
				t.Fatalf("got %v, want wall timeout", r)
			}
			if r.Wall > 5*time.Second {
				t.Errorf("wall limit 1s, run took %v", r.Wall)
			}
			if left := procsWithToken(tok); len(left) > 0 {
				t.Errorf("processes left behind: %v", left)
			}
			if left := leftoverCgroups(s); len(left) > 0 {
				t.Errorf("cgroups left behind: %v", left)
			}
		})
	}
}

func TestChildOutlivingParentIsKilled(t *testing.T) {
	slow(t)
	s := newTestSandbox(t, Config{})
	tok := token(t)
	// The parent exits at once with status 0; its detached child would sleep on.
	script := `setsid sh -c 'sleep 300; : ` + tok + `' > /dev/null 2>&1 & echo started`
	r := run(t, s, Cmd{Args: []string{"/bin/sh", "-c", script}, Limits: Limits{WallTime: 10 * time.Second}})
	if r.Status != StatusOK || r.Wall > 5*time.Second {
		t.Fatalf("got %v, want ok promptly", r)
	}
	// Run waits for bwrap's reaper, whose exit tears the pid namespace
	// down, so the child is normally gone already; a survivor would sleep
	// for 300 s, far past the deadline.
	if !waitFor(10*time.Second, func() bool { return len(procsWithToken(tok)) == 0 }) {
		t.Errorf("child outlived the sandbox: %v", procsWithToken(tok))
	}
}

func TestOutputFlood(t *testing.T) {
	slow(t)
	s := newTestSandbox(t, Config{})
	t.Run("killed", func(t *testing.T) {
		live := startLiveness()
		// Would write gigabytes (yes never stops) if not stopped.
		r := run(t, s, Cmd{Args: []string{"/bin/sh", "-c", "yes 0123456789abcdef"},
			Limits: Limits{OutputBytes: 64 << 10, WallTime: 20 * time.Second}})
		gap := live.maxGap()
		if r.Status != StatusOutputLimit || r.LimitHit != LimitOutput || !r.StdoutTruncated {
			t.Fatalf("got %v, want output-limit", r)
		}
		if len(r.Stdout) > 64<<10+100 || !strings.HasSuffix(r.Stdout, fmt.Sprintf(TruncationMarker, 64<<10)) {
			t.Errorf("stdout %d bytes, want the 64 KiB limit plus marker", len(r.Stdout))
		}
		if gap > 3*time.Second {
			t.Errorf("host unresponsive: worst tick gap %v", gap)
		}
	})
	t.Run("discarded", func(t *testing.T) {
		// 200 MB to stderr, then exit 0: kept running, output truncated.
		r := run(t, s, Cmd{Args: py("import sys\nfor _ in range(200): sys.stderr.write('x' * (1 << 20))"),
			DiscardExcessOutput: true, Limits: Limits{OutputBytes: 2048, WallTime: 30 * time.Second}})
		if r.Status != StatusOK || !r.StderrTruncated || r.StdoutTruncated || len(r.Stderr) > 2048+100 {
			t.Fatalf("got %v (stderr %d bytes), want ok with truncated stderr", r, len(r.Stderr))
		}
	})
}

func TestFileSizeLimit(t *testing.T) {
	slow(t)
	s := newTestSandbox(t, Config{})
	wd, err := s.NewWorkDir(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer wd.Remove()
	r := run(t, s, Cmd{Dir: wd.Path, Args: []string{"/bin/sh", "-c", "head -c 1000000000 /dev/zero > big"},
		Limits: Limits{FileSizeBytes: 1 << 20}})
	if r.Status != StatusFailed {
		t.Errorf("status %s, want failed (SIGXFSZ/EFBIG)", r.Status)
	}
	st, err := os.Stat(filepath.Join(wd.Path, "big"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > 1<<20 {
		t.Errorf("file grew to %d bytes past the 1 MiB limit", st.Size())
	}
}

func TestHostLivenessUnderCombinedAttack(t *testing.T) {
	slow(t)
	s := newTestSandbox(t, Config{})
	sandboxFor := func(int) *Sandbox { return s }
	if s.CgroupVersion() == 0 {
		// No cgroups (a container): the rlimit fallback, each attack under a
		// uid of its own (rlimitConfig's, plus the attack's index).
		// RLIMIT_NPROC counts every process of a uid, so attacks sharing
		// one would see the fork bomb take the others' processes and fail
		// to start: the fallback's documented limit (docs/sandbox.md,
		// docs/DEPLOY.md: a retried sandbox error, never a score), not what
		// this test measures, which is the host's liveness and each
		// attack's containment.
		base := rlimitConfig()
		sbs := make([]*Sandbox, 4)
		for i := range sbs {
			sbs[i] = newTestSandbox(t, Config{DisableCgroups: true, UID: base.UID + i, GID: base.GID + i})
		}
		s = sbs[0]
		sandboxFor = func(i int) *Sandbox { return sbs[i] }
	}
	live := startLiveness()
	attacks := [][]string{
		py("while True: pass"),
		py("x = []\nwhile True: x.append(bytearray(1 << 20))"),
		{"/bin/bash", "-c", "b(){ b | b & }; b; sleep 30"},
		{"/bin/sh", "-c", "yes"},
	}
	var wg sync.WaitGroup
	results := make([]Result, len(attacks))
	for i, a := range attacks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], _ = sandboxFor(i).Run(context.Background(), Cmd{Args: a,
				Limits: Limits{WallTime: 4 * time.Second, MemoryBytes: 128 << 20, Processes: 32, OutputBytes: 1 << 20}})
		}()
	}
	wg.Wait()
	gap := live.maxGap()
	for i, r := range results {
		t.Logf("attack %d: %v", i, r)
		if r.Status == StatusOK || r.Status == StatusSandboxError {
			t.Errorf("attack %d: status %s", i, r.Status)
		}
	}
	if gap > 3*time.Second {
		t.Errorf("host unresponsive: worst tick gap %v", gap)
	}
	if left := leftoverCgroups(s); len(left) > 0 {
		t.Errorf("cgroups left behind: %v", left)
	}
}

func TestInfrastructureErrors(t *testing.T) {
	_, err := New(Config{Bwrap: "/nonexistent/bwrap"})
	if !errors.Is(err, ErrBwrapMissing) || !IsInfrastructure(err) || !strings.Contains(err.Error(), "make setup") {
		t.Errorf("New with missing bwrap: %v", err)
	}
	s := newTestSandbox(t, Config{})
	tests := []struct {
		name    string
		cmd     Cmd
		wantErr error
	}{
		{"missing interpreter", Cmd{Args: []string{"/nonexistent/python"}}, ErrInfrastructure},
		{"missing bind source", Cmd{Args: []string{"/bin/true"}, Binds: []Bind{{Src: "/nonexistent", Dst: "/x"}}}, ErrInfrastructure},
		{"empty args", Cmd{}, ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := s.Run(context.Background(), tc.cmd)
			if !errors.Is(err, tc.wantErr) || r.Status != StatusSandboxError {
				t.Errorf("got %v / %v, want %v and sandbox-error", r, err, tc.wantErr)
			}
		})
	}
	t.Run("program cannot fake an infrastructure error", func(t *testing.T) {
		r, err := s.Run(context.Background(), Cmd{Args: []string{"/bin/sh", "-c",
			"echo 'bwrap: execvp /x: No such file or directory' >&2; exit 1"}})
		if err != nil || r.Status != StatusFailed {
			t.Errorf("got %v / %v, want failed", r, err)
		}
	})
	t.Run("canceled context", func(t *testing.T) {
		// Cancel once the program is running (it writes a readiness file),
		// so the test takes the kill path, not the "not started" one.
		wd, err := s.NewWorkDir(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer wd.Remove()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		type outcome struct {
			r   Result
			err error
		}
		done := make(chan outcome, 1)
		go func() {
			r, err := s.Run(ctx, Cmd{Dir: wd.Path, Args: []string{"/bin/sh", "-c", "touch ready; exec sleep 60"},
				Limits: Limits{WallTime: 2 * time.Minute}})
			done <- outcome{r, err}
		}()
		ready := filepath.Join(wd.Path, "ready")
		if !waitFor(time.Minute, func() bool { _, err := os.Stat(ready); return err == nil }) {
			t.Fatal("the program never wrote its readiness file")
		}
		cancel()
		canceledAt := time.Now()
		o := <-done
		if !errors.Is(o.err, context.Canceled) || o.r.Status != StatusSandboxError {
			t.Errorf("got %v / %v, want canceled", o.r, o.err)
		}
		// The kill ends the run; without it, sleep would run on for a minute.
		if d := time.Since(canceledAt); d > 20*time.Second {
			t.Errorf("run ended %v after the cancel", d)
		}
	})
}
