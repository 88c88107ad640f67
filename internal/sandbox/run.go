package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchline/benchline/internal/childproc"
)

// NobodyID is the default uid and gid of sandboxed programs.
const NobodyID = 65534

// Config configures a Sandbox. The zero value is usable.
type Config struct {
	// Bwrap is the bwrap binary (default: "bwrap" from PATH, then /usr/bin/bwrap).
	Bwrap string
	// UID and GID run the sandboxed program (default 65534, nobody). They
	// must not be 0: RLIMIT_NPROC is only enforced for non-root real uids.
	UID, GID int
	// WorkRoot is the host directory under which per-run work directories
	// are created. Every ancestor must be searchable by UID. The default is
	// /dev/shm when it is a tmpfs with at least 1 GiB free (creating and
	// deleting a directory per run on ext4 costs the worker more CPU than
	// the rest of its part of a run), else os.TempDir().
	WorkRoot string
	// DisableCgroups forces the rlimit-only fallback (used by tests and on
	// hosts where cgroups must not be touched).
	DisableCgroups bool
}

// Sandbox runs programs in bubblewrap. It is safe for concurrent use.
type Sandbox struct {
	bwrap    string
	uid, gid int
	workRoot string
	cg       *cgroupDriver
	fsArgs   []string // static filesystem arguments
	etcDir   string   // sanitised copy of /etc, mounted at /etc
	seq      atomic.Uint64
}

// New checks that bwrap is present and detects the cgroup hierarchies the
// worker can use. A missing bwrap is reported as ErrBwrapMissing (which also
// matches ErrInfrastructure).
func New(cfg Config) (*Sandbox, error) {
	s := &Sandbox{bwrap: cfg.Bwrap, uid: cfg.UID, gid: cfg.GID, workRoot: cfg.WorkRoot}
	if s.uid <= 0 {
		s.uid = NobodyID
	}
	if s.gid <= 0 {
		s.gid = NobodyID
	}
	if s.workRoot == "" {
		s.workRoot = DefaultWorkRoot()
	}
	if s.bwrap == "" {
		p, err := exec.LookPath("bwrap")
		if err != nil {
			p = "/usr/bin/bwrap"
		}
		s.bwrap = p
	}
	if st, err := os.Stat(s.bwrap); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return nil, infraErr("find bwrap", fmt.Errorf("%w (looked for %q)", ErrBwrapMissing, s.bwrap))
	}
	if _, err := os.Stat("/bin/sh"); err != nil {
		return nil, infraErr("find /bin/sh", err)
	}
	// bwrap's monitor exits before its pid-1 reaper, which the kernel then
	// hands to the nearest subreaper. Be that subreaper, so Run reaps it at
	// once: a zombie left to a slow init would still count against
	// RLIMIT_NPROC of the sandbox uid and fail the next runs.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return nil, infraErr("become child subreaper", err)
	}
	var err error
	if !cfg.DisableCgroups {
		s.cg = detectCgroups()
	}
	if s.etcDir, err = prepareEtc("/etc", s.workRoot); err != nil {
		return nil, infraErr("prepare /etc", err)
	}
	s.fsArgs = rootfsArgs(s.etcDir)
	return s, nil
}

// Close removes the sandbox's copy of /etc. Runs in flight must have
// ended. A worker killed before Close leaves the copy behind; the next
// Sandbox created under the same work root removes it.
func (s *Sandbox) Close() error {
	if s == nil || s.etcDir == "" {
		return nil
	}
	if err := os.RemoveAll(s.etcDir); err != nil {
		return fmt.Errorf("sandbox: remove /etc copy: %w", err)
	}
	s.etcDir = ""
	return nil
}

// DefaultWorkRoot picks a tmpfs for work directories when one with room
// is at hand (Docker's default /dev/shm is only 64 MiB: too small for
// programs that may write files of up to Limits.FileSizeBytes) and that
// may hold programs: Docker and podman mount /dev/shm noexec, where a
// compiled C++ program could not start.
func DefaultWorkRoot() string {
	const shm = "/dev/shm"
	var st unix.Statfs_t
	if err := unix.Statfs(shm, &st); err == nil && st.Type == unix.TMPFS_MAGIC && st.Flags&unix.ST_NOEXEC == 0 &&
		uint64(st.Bavail)*uint64(st.Bsize) >= 1<<30 && unix.Access(shm, unix.W_OK|unix.X_OK) == nil {
		return shm
	}
	return os.TempDir()
}

// CgroupVersion returns 1 or 2 if per-run cgroups are used, 0 if limits fall
// back to rlimits.
func (s *Sandbox) CgroupVersion() int {
	if s.cg == nil {
		return 0
	}
	return s.cg.version
}

// Enforcement returns the mechanisms that enforce l's limits on this host.
func (s *Sandbox) Enforcement(l Limits) Enforcement {
	e := Enforcement{WallTime: "timer+pidns-kill", FileSize: "rlimit", Output: "capture"}
	if m := s.cg.mechanism("memory"); m != "" {
		e.Memory = m
	} else if l.AddressSpaceBytes >= 0 {
		e.Memory = "rlimit-as"
	} else {
		e.Memory = "none"
	}
	if m := s.cg.mechanism("pids"); m != "" {
		e.Processes = m
	} else {
		e.Processes = "rlimit-nproc"
	}
	if m := s.cg.mechanism("cpuacct"); m != "" {
		e.CPUTime = m + "+rlimit"
	} else {
		e.CPUTime = "rlimit"
	}
	return e
}

// sensitiveEtc are left out of the sandbox's /etc even when they are
// world-readable: defense in depth.
var sensitiveEtc = []string{
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers",
	"/etc/sudoers.d", "/etc/ssh", "/etc/ssl/private", "/etc/security/opasswd",
	"/etc/credstore", "/etc/credstore.encrypted", "/etc/docker", "/etc/containerd",
}

// rootfsArgs builds the read-only minimal root: /usr, the merged-/usr
// symlinks, and at /etc the sanitised copy made by prepareEtc. /root,
// /home, /work, /opt, /var, /run, /srv, /mnt, /sys and the host /tmp are
// simply not mounted.
func rootfsArgs(etcDir string) []string {
	args := []string{"--ro-bind", "/usr", "/usr"}
	for _, p := range []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		st, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			if t, err := os.Readlink(p); err == nil {
				args = append(args, "--symlink", t, p)
			}
		} else if st.IsDir() {
			args = append(args, "--ro-bind", p, p)
		}
	}
	return append(args, "--ro-bind", etcDir, "/etc")
}

// WorkDir is a host directory for one program, owned by the sandbox uid
// and mounted read-write at WorkPath.
type WorkDir struct {
	Path string
}

// Remove deletes the directory and everything in it.
func (w *WorkDir) Remove() error {
	if w == nil || w.Path == "" {
		return nil
	}
	if err := os.RemoveAll(w.Path); err != nil {
		return fmt.Errorf("sandbox: remove work dir: %w", err)
	}
	return nil
}

// NewWorkDir creates a work directory holding files (relative path ->
// content), owned by the sandbox uid. The caller must Remove it.
func (s *Sandbox) NewWorkDir(files map[string][]byte) (*WorkDir, error) {
	dir, err := os.MkdirTemp(s.workRoot, "benchline-sb-")
	if err != nil {
		return nil, infraErr("create work dir", err)
	}
	w := &WorkDir{Path: dir}
	fail := func(err error) (*WorkDir, error) {
		_ = w.Remove()
		return nil, infraErr("create work dir", err)
	}
	for name, data := range files {
		clean := filepath.Clean(name)
		if filepath.IsAbs(clean) || clean == "." || strings.HasPrefix(clean, "..") {
			_ = w.Remove()
			return nil, fmt.Errorf("sandbox: %w: bad file name %q", ErrInvalid, name)
		}
		p := filepath.Join(dir, clean)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fail(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return fail(err)
		}
	}
	err = filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, s.uid, s.gid)
	})
	if err != nil {
		return fail(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return fail(err)
	}
	return w, nil
}

// gateScript holds the program until the worker has put it into its
// cgroups (cgroup v1 has no clone-into-cgroup), then sets its rlimits and
// becomes bwrap. The gate already runs as the sandbox uid (the worker
// starts it with those credentials), so it sets the limits on itself with
// the shell's ulimit: the worker's root lacks CAP_SYS_RESOURCE on some hosts
// and could not prlimit a process of another uid. %s is the list of
// ulimit commands (numbers only).
const gateScript = `read -r _ <&3 || exit 125; exec 3<&-; %s || { echo "sandbox gate: cannot set rlimits" >&2; exit 125; }; exec "$@"`

const statusFD = 4 // bwrap --json-status-fd inside the gate's fd table

func (s *Sandbox) bwrapArgs(dir string, c Cmd, l Limits) []string {
	args := []string{
		"--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
		"--hostname", "sandbox",
		"--clearenv",
		"--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin",
		"--setenv", "HOME", "/tmp",
		"--setenv", "TMPDIR", "/tmp",
		"--setenv", "LANG", "C.UTF-8",
	}
	for _, kv := range c.Env {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			args = append(args, "--setenv", k, v)
		}
	}
	args = append(args, s.fsArgs...)
	args = append(args,
		"--dev", "/dev",
		"--proc", "/proc",
		"--size", strconv.FormatInt(l.TmpBytes, 10), "--tmpfs", "/tmp",
		"--bind", dir, WorkPath,
	)
	// Extra binds come in as file descriptors opened by the worker (fds 5,
	// 6, ...), so their host paths need not be reachable by the sandbox uid
	// (e.g. a tool cache under /root).
	for i, b := range c.Binds {
		args = append(args, "--ro-bind-fd", strconv.Itoa(statusFD+1+i), b.Dst)
	}
	// Everything outside the work dir, /tmp and /dev is read-only, including
	// bwrap's own root tmpfs.
	args = append(args, "--remount-ro", "/", "--chdir", WorkPath, "--json-status-fd", strconv.Itoa(statusFD), "--")
	return append(args, c.Args...)
}

// capWriter keeps the first limit bytes written to it and drops the rest,
// so a program's output never grows the worker's memory past the limit.
type capWriter struct {
	mu       sync.Mutex
	buf      []byte
	limit    int
	total    int64
	onExceed func()
}

func (w *capWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if room := w.limit - len(w.buf); room > 0 {
		w.buf = append(w.buf, p[:min(room, len(p))]...)
	}
	before := w.total
	w.total += int64(len(p))
	if before <= int64(w.limit) && w.total > int64(w.limit) && w.onExceed != nil {
		w.onExceed()
	}
	return len(p), nil
}

// TruncationMarker is appended to output cut at Limits.OutputBytes.
const TruncationMarker = "\n[sandbox: output truncated at %d bytes]\n"

func (w *capWriter) result() (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.total > int64(w.limit) {
		return string(w.buf) + fmt.Sprintf(TruncationMarker, w.limit), true
	}
	return string(w.buf), false
}

type bwrapStatus struct {
	ChildPid int  `json:"child-pid"`
	ExitCode *int `json:"exit-code"`
}

// Run runs c in the sandbox and waits for it. A non-nil error means the run
// did not produce a verdict about the program: it matches ErrInfrastructure
// (retry), ErrInvalid (caller bug) or the context's error, and the result's
// status is StatusSandboxError. It starts the program (start), enforces the
// limits until it ends (watch), then measures it and decides the verdict
// (verdict, decide).
func (s *Sandbox) Run(ctx context.Context, c Cmd) (Result, error) {
	l := c.Limits.WithDefaults()
	res := Result{ExitCode: -1, Enforcement: s.Enforcement(l)}
	fail := func(err error) (Result, error) {
		res.Status = StatusSandboxError
		res.Detail = err.Error()
		return res, err
	}
	if len(c.Args) == 0 {
		return fail(fmt.Errorf("sandbox: %w: empty Args", ErrInvalid))
	}
	if err := ctx.Err(); err != nil {
		return fail(fmt.Errorf("sandbox: run not started: %w", err))
	}
	dir := c.Dir
	if dir == "" {
		wd, err := s.NewWorkDir(nil)
		if err != nil {
			return fail(err)
		}
		defer wd.Remove()
		dir = wd.Path
	}

	// Two helper processes (bwrap's monitor and its pid-1 reaper) count
	// against the process limits too.
	cgLimits := l
	cgLimits.Processes += 2
	var cg *runCgroup
	if s.cg != nil {
		var err error
		name := fmt.Sprintf("benchline-sb-%d-%d", os.Getpid(), s.seq.Add(1))
		if cg, err = s.cg.newRunCgroup(name, cgLimits); err != nil {
			return fail(infraErr("create cgroup", err))
		}
		defer func() {
			if err := cg.remove(); err != nil && res.Detail == "" {
				res.Detail = "cgroup cleanup: " + err.Error()
			}
		}()
	}

	r, err := s.start(c, l, dir, cg)
	if err != nil {
		return fail(err)
	}
	defer r.close()
	waitErr := r.watch(ctx, &res)
	if err := r.verdict(ctx, waitErr, &res); err != nil {
		return fail(err)
	}
	return res, nil
}

// started is one started program: what watch and verdict need of it.
type started struct {
	c  Cmd
	l  Limits
	cg *runCgroup // nil without cgroups

	cmd            *exec.Cmd
	proc           *childproc.Proc // cmd, started; signals its group only while it is not reaped
	stdout, stderr *capWriter
	gateW, statR   *os.File
	closers        []*os.File // bind sources, open until the run ends

	killOnce  sync.Once
	pgid      int
	killed    atomic.Bool
	outputHit atomic.Bool
	childPid  atomic.Int64 // host pid of bwrap's pid-1 reaper, once started
	// exitReported is set when bwrap reported the program's exit code.
	exitReported atomic.Bool
	statusDone   chan struct{}

	wallHit, cpuHit, ctxHit atomic.Bool
	startedAt               time.Time
}

// close releases the run's files.
func (r *started) close() {
	r.gateW.Close()
	r.statR.Close()
	for _, f := range r.closers {
		f.Close()
	}
}

// kill ends the run. It SIGKILLs bwrap's pid-1 reaper first: the kernel
// then kills every process of the sandbox's pid namespace, and bwrap's
// monitor reaps the reaper and exits (no orphan left for the host's
// init). The monitor's process group is killed too after a grace period,
// or at once if the reaper has not started yet.
func (r *started) kill() {
	r.killOnce.Do(func() {
		r.killed.Store(true)
		if cp := int(r.childPid.Load()); cp > 0 && parentOf(cp) == r.pgid {
			_ = syscall.Kill(cp, syscall.SIGKILL)
			// bwrap may have ended and been reaped by then: Signal then
			// sends nothing, since its group's id may be another's.
			time.AfterFunc(time.Second, func() { _ = r.proc.Signal(syscall.SIGKILL) })
			return
		}
		if r.proc != nil {
			_ = r.proc.Signal(syscall.SIGKILL)
		}
	})
}

// start starts c under bwrap, held at the gate until it has joined cg,
// then releases it. An error is an infrastructure error; nothing is left
// running.
func (s *Sandbox) start(c Cmd, l Limits, dir string, cg *runCgroup) (*started, error) {
	r := &started{c: c, l: l, cg: cg, statusDone: make(chan struct{})}
	gateR, gateW, err := os.Pipe()
	if err != nil {
		return nil, infraErr("pipe", err)
	}
	statR, statW, err := os.Pipe()
	if err != nil {
		gateR.Close()
		gateW.Close()
		return nil, infraErr("pipe", err)
	}
	r.gateW, r.statR = gateW, statR
	onExceed := func() {
		r.outputHit.Store(true)
		if !c.DiscardExcessOutput {
			r.kill()
		}
	}
	r.stdout = &capWriter{limit: l.OutputBytes, onExceed: onExceed}
	r.stderr = &capWriter{limit: l.OutputBytes, onExceed: onExceed}

	gateArgs := []string{"-c", fmt.Sprintf(gateScript, s.ulimits(l)), "sh", s.bwrap}
	cmd := exec.Command("/bin/sh", append(gateArgs, s.bwrapArgs(dir, c, l)...)...)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.Dir = "/"
	if len(c.Stdin) > 0 {
		cmd.Stdin = bytes.NewReader(c.Stdin)
	}
	cmd.Stdout, cmd.Stderr = r.stdout, r.stderr
	cmd.ExtraFiles = []*os.File{gateR, statW} // fds 3 and 4
	fail := func(op string, err error) (*started, error) {
		gateR.Close()
		statW.Close()
		r.close()
		return nil, infraErr(op, err)
	}
	for _, b := range c.Binds {
		f, err := os.OpenFile(b.Src, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return fail("open bind source", err)
		}
		r.closers = append(r.closers, f)
		cmd.ExtraFiles = append(cmd.ExtraFiles, f)
	}
	// childproc adds its own process group and SIGKILL at the worker's
	// death, armed on a thread that lives as long as the worker.
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: &syscall.Credential{Uid: uint32(s.uid), Gid: uint32(s.gid), Groups: []uint32{}},
	}
	cmd.WaitDelay = 2 * time.Second
	proc, err := childproc.Start(cmd)
	if err != nil {
		return fail("start bwrap", err)
	}
	gateR.Close()
	statW.Close()
	r.cmd, r.proc = cmd, proc
	r.pgid = cmd.Process.Pid
	go r.readStatus()

	abort := func(op string, err error) (*started, error) {
		r.kill()
		_ = r.proc.Wait()
		<-r.statusDone
		r.close()
		return nil, infraErr(op, err)
	}
	if cg != nil {
		if err := cg.add(cmd.Process.Pid); err != nil {
			return abort("join cgroup", err)
		}
	}
	r.startedAt = time.Now()
	if _, err := gateW.Write([]byte("go\n")); err != nil {
		return abort("release program", err)
	}
	gateW.Close()
	return r, nil
}

// readStatus reads bwrap's status documents: the child's host pid once it
// started, and whether it reported an exit code.
func (r *started) readStatus() {
	defer close(r.statusDone)
	dec := json.NewDecoder(bufio.NewReader(r.statR))
	for {
		var st bwrapStatus
		if err := dec.Decode(&st); err != nil {
			return
		}
		if st.ChildPid > 0 {
			r.childPid.Store(int64(st.ChildPid))
		}
		if st.ExitCode != nil {
			r.exitReported.Store(true)
		}
	}
}

// watch enforces the wall time, the summed CPU time and ctx until the
// program ends, then waits until no process of the run is left. It
// returns the error of waiting for bwrap and fills res's wall time,
// output and resource use.
func (r *started) watch(ctx context.Context, res *Result) error {
	wallTimer := time.AfterFunc(r.l.WallTime, func() { r.wallHit.Store(true); r.kill() })
	defer wallTimer.Stop()
	watchDone := make(chan struct{})
	defer close(watchDone)
	go func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-watchDone:
				return
			case <-ctx.Done():
				r.ctxHit.Store(true)
				r.kill()
				return
			case <-tick.C:
				if r.cg == nil {
					continue
				}
				if used, ok := r.cg.cpuUsage(); ok && used > r.l.CPUTime {
					r.cpuHit.Store(true)
					r.kill()
					return
				}
			}
		}
	}()

	waitErr := r.proc.Wait()
	res.Wall = time.Since(r.startedAt)
	<-r.statusDone
	wallTimer.Stop()

	// No process may outlive the run: when bwrap's monitor dies, its pid-1
	// child gets SIGKILL (--die-with-parent) and the kernel kills the whole
	// pid namespace. Wait for that, and sweep the cgroups.
	// bwrap's monitor exits without reaping its pid-1 reaper, which then
	// tears the namespace down as an orphan: wait for it (and reap it if the
	// worker is its new parent, e.g. when the worker is a container's pid 1).
	reaperUsage := waitGone(int(r.childPid.Load()), 2*time.Second)
	if r.cg != nil && !r.cg.killAll(5*time.Second) {
		res.Detail = "processes left in cgroup after kill"
	}
	res.Stdout, res.StdoutTruncated = r.stdout.result()
	res.Stderr, res.StderrTruncated = r.stderr.result()
	r.usage(res, reaperUsage)
	return waitErr
}

// usage fills res's CPU time and peak memory: the cgroup's, else the
// gate's (bwrap's monitor's) own usage plus the reaper's, which includes
// the program's.
func (r *started) usage(res *Result, reaperUsage *unix.Rusage) {
	var ru *syscall.Rusage
	if r.cmd.ProcessState != nil {
		ru, _ = r.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	}
	if r.cg != nil {
		if used, ok := r.cg.cpuUsage(); ok {
			res.CPU = used
		}
		if peak, ok := r.cg.peakMemory(); ok {
			res.PeakMemoryBytes = peak
		}
	}
	if ru != nil && res.CPU == 0 {
		res.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		maxrss := ru.Maxrss
		if reaperUsage != nil {
			res.CPU += time.Duration(reaperUsage.Utime.Nano() + reaperUsage.Stime.Nano())
			maxrss = max(maxrss, reaperUsage.Maxrss)
		}
		if res.PeakMemoryBytes == 0 {
			res.PeakMemoryBytes = maxrss << 10
		}
	}
}

// verdict reads the exit code from waitErr and decides the run's status
// and the limit it hit (decide); an error means no verdict.
func (r *started) verdict(ctx context.Context, waitErr error, res *Result) error {
	exitCode := -1
	var ee *exec.ExitError
	switch {
	case waitErr == nil:
		exitCode = 0
	case errors.As(waitErr, &ee) && ee.Exited():
		exitCode = ee.ExitCode()
	case errors.As(waitErr, &ee):
		// killed by a signal (by us)
	case errors.Is(waitErr, exec.ErrWaitDelay):
		exitCode = r.cmd.ProcessState.ExitCode()
	default:
		return infraErr("wait", waitErr)
	}
	res.ExitCode = exitCode
	v := decide(runFacts{
		Canceled: r.ctxHit.Load(), CtxErr: ctx.Err(), WallHit: r.wallHit.Load(), CPUHit: r.cpuHit.Load(),
		OutputHit: r.outputHit.Load(), DiscardExcess: r.c.DiscardExcessOutput, OOM: r.cg != nil && r.cg.oomKilled(),
		Started: r.childPid.Load() != 0, ExitReported: r.exitReported.Load(), ExitCode: exitCode, CPU: res.CPU, Stderr: res.Stderr,
	}, r.l)
	if v.Err != nil {
		return v.Err
	}
	res.Status, res.LimitHit = v.Status, v.LimitHit
	if v.Detail != "" {
		res.Detail = v.Detail
	}
	return nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// ulimits returns the gate's ulimit commands for l (dash units: -f and -c
// in 512-byte blocks, -v in KiB). They are inherited by everything the gate
// starts. RLIMIT_CPU gets a hard limit one second above the soft one, so
// the program sees SIGXCPU before SIGKILL.
func (s *Sandbox) ulimits(l Limits) string {
	cpu := int64(math.Ceil(l.CPUTime.Seconds()))
	cmds := []string{
		fmt.Sprintf("ulimit -S -t %d", cpu), // soft first: soft may never exceed hard
		fmt.Sprintf("ulimit -H -t %d", cpu+1),
		fmt.Sprintf("ulimit -f %d", l.FileSizeBytes/512),
		"ulimit -c 0",
		fmt.Sprintf("ulimit -n %d", l.OpenFiles),
	}
	if s.cg.mechanism("pids") == "" {
		cmds = append(cmds, fmt.Sprintf("ulimit -p %d", l.Processes+2))
	}
	if s.cg.mechanism("memory") == "" && l.AddressSpaceBytes >= 0 {
		as := l.AddressSpaceBytes
		if as == 0 {
			as = l.MemoryBytes
		}
		cmds = append(cmds, fmt.Sprintf("ulimit -v %d", as/1024))
	}
	return strings.Join(cmds, " && ")
}

// parentOf returns the parent pid of pid, or -1.
func parentOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return -1
	}
	p, err := strconv.Atoi(f[1])
	if err != nil {
		return -1
	}
	return p
}

// waitGone waits until pid has exited and returns its resource usage when
// the worker reaped it. After bwrap's monitor has exited, its orphaned pid-1
// reaper is the worker's child (New made the worker a child subreaper), so
// a blocking wait4 both waits and reaps; its usage includes the program's,
// which the reaper reaped. If pid is not the worker's child (the kernel gave
// it to another subreaper), it polls /proc instead.
func waitGone(pid int, timeout time.Duration) *unix.Rusage {
	if pid <= 0 {
		return nil
	}
	if parentOf(pid) == os.Getpid() {
		type waited struct {
			ru  unix.Rusage
			err error
		}
		done := make(chan waited, 1)
		go func() {
			var w waited
			for {
				_, w.err = unix.Wait4(pid, nil, 0, &w.ru)
				if w.err != unix.EINTR {
					break
				}
			}
			done <- w
		}()
		select {
		case w := <-done:
			if w.err == nil {
				return &w.ru
			}
			return nil // ECHILD: someone else reaped it; it is gone
		case <-time.After(timeout):
			return nil // still tearing down: the cgroup sweep follows; the goroutine reaps it later
		}
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return nil
		}
		if i := bytes.LastIndexByte(b, ')'); i > 0 && i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X') {
			return nil
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

var _ io.Writer = (*capWriter)(nil)
