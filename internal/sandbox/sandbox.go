// Package sandbox runs untrusted programs under bubblewrap (bwrap) as an
// unprivileged uid, with no network, a read-only minimal root, a private
// writable work directory and limits on wall time, CPU time, memory,
// processes, file size and captured output.
//
// Limits are enforced with cgroups (v1, or v2 where controllers are
// delegated) when the worker can create cgroups, and with rlimits otherwise;
// Result.Enforcement says which mechanism enforced each limit on a run.
//
// A failure of the sandbox itself (bwrap missing, a cgroup that cannot be
// created, a program that could not be started) is returned as an error that
// matches ErrInfrastructure, with Result.Status == StatusSandboxError. Callers
// should retry such runs and must never score them as the program's failure.
//
// See docs/sandbox.md for the isolation guarantees and their caveats.
package sandbox

import (
	"errors"
	"fmt"
	"syscall"
	"time"
)

// Status is the outcome of one sandboxed run.
type Status string

// Statuses of a run.
const (
	// StatusOK: the program exited with status 0 within its limits.
	StatusOK Status = "ok"
	// StatusFailed: the program exited non-zero or was killed by a signal it
	// brought on itself (not by one of the sandbox's limits).
	StatusFailed Status = "failed"
	// StatusTimeout: the wall-time or CPU-time limit was hit (see Result.LimitHit).
	StatusTimeout Status = "timeout"
	// StatusMemory: the memory limit was hit (a cgroup OOM kill).
	StatusMemory Status = "memory"
	// StatusOutputLimit: stdout or stderr exceeded Limits.OutputBytes and the
	// program was killed.
	StatusOutputLimit Status = "output-limit"
	// StatusCompileError is used by language runners: the compile step failed.
	StatusCompileError Status = "compile-error"
	// StatusSandboxError: infrastructure failure; the run says nothing about
	// the program. Retry it.
	StatusSandboxError Status = "sandbox-error"
)

// ErrInfrastructure is matched (errors.Is) by every error that reports a
// failure of the sandbox rather than of the sandboxed program.
var ErrInfrastructure = errors.New("sandbox infrastructure error")

// ErrBwrapMissing is returned by New when the bwrap binary cannot be found.
var ErrBwrapMissing = errors.New("bwrap (bubblewrap) not found: run `make setup`")

// ErrInvalid is returned for an invalid Cmd or Config (a caller bug, not an
// infrastructure failure).
var ErrInvalid = errors.New("invalid sandbox request")

// InfraError is an infrastructure failure. It matches ErrInfrastructure.
type InfraError struct {
	Op  string // what the sandbox was doing, e.g. "create cgroup"
	Err error
}

func (e *InfraError) Error() string { return "sandbox: " + e.Op + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *InfraError) Unwrap() error { return e.Err }

// Is reports whether target is ErrInfrastructure.
func (e *InfraError) Is(target error) bool { return target == ErrInfrastructure }

func infraErr(op string, err error) error { return &InfraError{Op: op, Err: err} }

// IsInfrastructure reports whether err is a sandbox infrastructure failure
// (retry it; do not score it).
func IsInfrastructure(err error) bool { return errors.Is(err, ErrInfrastructure) }

// Limits bounds one run. Zero fields take the defaults of DefaultLimits.
type Limits struct {
	// WallTime is the wall-clock limit, measured from the moment the program
	// is released to run.
	WallTime time.Duration `json:"wall_time"`
	// CPUTime is the CPU-time limit summed over all the program's processes
	// (cgroup cpuacct) and per process (RLIMIT_CPU).
	CPUTime time.Duration `json:"cpu_time"`
	// MemoryBytes limits memory (cgroup memory limit, or RLIMIT_AS if no
	// memory cgroup is available).
	MemoryBytes int64 `json:"memory_bytes"`
	// AddressSpaceBytes is used only when no memory cgroup is available: the
	// RLIMIT_AS to set. 0 means MemoryBytes; negative means none (for the JVM
	// and node, which reserve far more address space than they use).
	AddressSpaceBytes int64 `json:"address_space_bytes,omitempty"`
	// Processes limits the number of processes/threads (pids cgroup, or
	// RLIMIT_NPROC for the sandbox uid).
	Processes int `json:"processes"`
	// FileSizeBytes is the largest file the program may write (RLIMIT_FSIZE).
	FileSizeBytes int64 `json:"file_size_bytes"`
	// OutputBytes is how much of stdout and of stderr is kept (each).
	OutputBytes int `json:"output_bytes"`
	// OpenFiles is RLIMIT_NOFILE.
	OpenFiles int `json:"open_files"`
	// TmpBytes is the size of the tmpfs mounted at /tmp in the sandbox.
	TmpBytes int64 `json:"tmp_bytes"`
	// CPUs caps CPU bandwidth (cgroup cpu quota), e.g. 1 = one core. Negative
	// means no cap.
	CPUs float64 `json:"cpus"`
}

// DefaultLimits are applied to zero fields of Limits.
var DefaultLimits = Limits{
	WallTime:      10 * time.Second,
	CPUTime:       10 * time.Second,
	MemoryBytes:   512 << 20,
	Processes:     64,
	FileSizeBytes: 64 << 20,
	OutputBytes:   1 << 20,
	OpenFiles:     256,
	TmpBytes:      64 << 20,
	CPUs:          1,
}

// WithDefaults returns l with zero fields replaced by DefaultLimits. A zero
// CPUTime takes the WallTime.
func (l Limits) WithDefaults() Limits {
	d := DefaultLimits
	if l.WallTime <= 0 {
		l.WallTime = d.WallTime
	}
	if l.CPUTime <= 0 {
		l.CPUTime = l.WallTime
	}
	if l.MemoryBytes <= 0 {
		l.MemoryBytes = d.MemoryBytes
	}
	if l.Processes <= 0 {
		l.Processes = d.Processes
	}
	if l.FileSizeBytes <= 0 {
		l.FileSizeBytes = d.FileSizeBytes
	}
	if l.OutputBytes <= 0 {
		l.OutputBytes = d.OutputBytes
	}
	if l.OpenFiles <= 0 {
		l.OpenFiles = d.OpenFiles
	}
	if l.TmpBytes <= 0 {
		l.TmpBytes = d.TmpBytes
	}
	if l.CPUs == 0 {
		l.CPUs = d.CPUs
	}
	return l
}

// Bind is a read-only bind mount of a host path into the sandbox.
type Bind struct {
	Src string // host path
	Dst string // absolute path inside the sandbox
}

// WorkPath is where the run's work directory is mounted (read-write) inside
// the sandbox; it is also the initial working directory.
const WorkPath = "/tmp/w"

// Cmd is one program to run in the sandbox.
type Cmd struct {
	// Args is the argv inside the sandbox; Args[0] is an absolute path or a
	// name looked up in the sandbox PATH (/usr/local/bin:/usr/bin:/bin).
	Args []string
	// Env holds extra KEY=VALUE pairs. The worker's environment is never
	// passed in; the sandbox sets PATH, HOME=/tmp, TMPDIR=/tmp, LANG=C.UTF-8.
	Env []string
	// Stdin is the program's standard input (empty: /dev/null-like EOF).
	Stdin []byte
	// Dir is a host directory, made by Sandbox.NewWorkDir, mounted
	// read-write at WorkPath. Empty: a fresh empty directory is created and
	// removed after the run.
	Dir string
	// Binds are extra read-only bind mounts (e.g. node_modules for tsc).
	Binds []Bind
	// Limits for this run (zero fields take DefaultLimits).
	Limits Limits
	// DiscardExcessOutput keeps the program running when its output exceeds
	// Limits.OutputBytes: the excess is read and dropped, the kept output
	// ends with a truncation marker, and the status follows the exit code.
	// By default the program is killed with StatusOutputLimit.
	DiscardExcessOutput bool
	// Lang and Step label the run for metrics (e.g. "python", "compile");
	// the sandbox itself ignores them.
	Lang, Step string
}

// Enforcement names the mechanism that enforced each limit on a run, e.g.
// "cgroup-v1", "cgroup-v2", "rlimit", "timer", "none".
type Enforcement struct {
	Memory    string `json:"memory"`
	Processes string `json:"processes"`
	CPUTime   string `json:"cpu_time"`
	WallTime  string `json:"wall_time"`
	FileSize  string `json:"file_size"`
	Output    string `json:"output"`
}

// Limit names used in Result.LimitHit.
const (
	LimitWall   = "wall"
	LimitCPU    = "cpu"
	LimitMemory = "memory"
	LimitOutput = "output"
)

// Result is the outcome of one run.
type Result struct {
	Status   Status `json:"status"`
	ExitCode int    `json:"exit_code"` // -1 if the sandbox killed the program
	// Stdout and Stderr are the captured output, each at most
	// Limits.OutputBytes plus a truncation marker.
	Stdout          string        `json:"stdout"`
	Stderr          string        `json:"stderr"`
	StdoutTruncated bool          `json:"stdout_truncated,omitempty"`
	StderrTruncated bool          `json:"stderr_truncated,omitempty"`
	Wall            time.Duration `json:"-"`
	CPU             time.Duration `json:"-"`
	// PeakMemoryBytes is the cgroup's peak usage, or the largest process's
	// max RSS (rusage) when no memory cgroup was used.
	PeakMemoryBytes int64 `json:"-"`
	// LimitHit names the limit that ended the run ("wall", "cpu", "memory",
	// "output"), if any.
	LimitHit    string      `json:"limit_hit,omitempty"`
	Enforcement Enforcement `json:"limits_enforced_by"`
	// Detail explains a sandbox-error or a limit.
	Detail string `json:"detail,omitempty"`
}

// Passed reports whether the run finished with StatusOK.
func (r Result) Passed() bool { return r.Status == StatusOK }

func (r Result) String() string {
	return fmt.Sprintf("status=%s exit=%d wall=%s cpu=%s peak=%dKiB limit=%s", r.Status, r.ExitCode,
		r.Wall.Round(time.Millisecond), r.CPU.Round(time.Millisecond), r.PeakMemoryBytes>>10, r.LimitHit)
}

// ProcessCPU is the user+system CPU time of this process and of its reaped
// children. A process that created a Sandbox reaps every sandboxed program
// (through bwrap's pid-1 reaper), so differences of ProcessCPU measure what
// sandboxed runs cost, monitor and namespaces included, on a busy machine
// too. Benchmarks use it.
func ProcessCPU() time.Duration {
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}
