package sandbox

import (
	"fmt"
	"syscall"
	"time"
)

// runFacts is what Run observed of a finished run: everything its status
// is decided from.
type runFacts struct {
	// Canceled: the caller's context ended and Run killed the run for it.
	Canceled bool
	CtxErr   error // the context's error when Canceled
	// WallHit: the wall-time timer fired and killed the run.
	WallHit bool
	// CPUHit: the cgroup CPU poll saw the summed CPU time pass
	// Limits.CPUTime and killed the run.
	CPUHit bool
	// OutputHit: stdout or stderr passed Limits.OutputBytes;
	// DiscardExcess: Cmd.DiscardExcessOutput, so the run went on.
	OutputHit     bool
	DiscardExcess bool
	// OOM: the memory cgroup OOM-killed a process of the run.
	OOM bool
	// Started: bwrap reported the program's pid (the sandbox was set up);
	// ExitReported: bwrap reported the program's exit (it could be run).
	// Both come from bwrap's monitor, outside the program's reach.
	Started, ExitReported bool
	// ExitCode is the gate's exit status, -1 when a signal killed it.
	ExitCode int
	// CPU is the CPU time the run used.
	CPU time.Duration
	// Stderr is the captured stderr, quoted in infrastructure errors.
	Stderr string
}

// verdict is a run's outcome. A non-nil Err means the run says nothing
// about the program (an infrastructure failure, or the context ended);
// Status is then StatusSandboxError.
type verdict struct {
	Status   Status
	LimitHit string
	Detail   string // "" keeps the run's own detail (a cleanup note)
	Err      error
}

// cpuGrace is how far under Limits.CPUTime a run killed by SIGKILL may be
// and still count as having hit the CPU limit: RLIMIT_CPU counts whole
// seconds and the cgroup poll samples every 50 ms.
const cpuGrace = 50 * time.Millisecond

// decide is Run's status decision. When more than one outcome applies the
// first in this order wins: the context ended (an error, unless a time
// limit fired too), output limit (unless excess output is discarded), OOM
// kill, CPU limit, wall limit, a sandbox that was not set up or a program
// that could not be started (errors), then the exit code. RLIMIT_CPU sends
// SIGXCPU at the soft limit and SIGKILL at the hard one, so an exit by
// SIGXCPU, or by SIGKILL (or a signal) with the CPU time at the limit,
// counts as the CPU limit. With DiscardExcessOutput, output past the limit
// is reported in LimitHit only when no other limit ended the run.
func decide(f runFacts, l Limits) verdict {
	cpuOver := f.ExitCode == 128+int(syscall.SIGXCPU) ||
		(f.CPU >= l.CPUTime-cpuGrace && (f.ExitCode == 128+int(syscall.SIGKILL) || f.ExitCode < 0))
	var v verdict
	switch {
	case f.Canceled && !f.WallHit && !f.CPUHit:
		return verdict{Status: StatusSandboxError, Err: fmt.Errorf("sandbox: run canceled: %w", f.CtxErr)}
	case f.OutputHit && !f.DiscardExcess:
		return verdict{Status: StatusOutputLimit, LimitHit: LimitOutput, Detail: fmt.Sprintf("output exceeded %d bytes", l.OutputBytes)}
	case f.OOM:
		return verdict{Status: StatusMemory, LimitHit: LimitMemory, Detail: fmt.Sprintf("memory limit %d bytes (cgroup OOM kill)", l.MemoryBytes)}
	case f.CPUHit || cpuOver:
		return verdict{Status: StatusTimeout, LimitHit: LimitCPU, Detail: fmt.Sprintf("CPU time limit %s", l.CPUTime)}
	case f.WallHit:
		return verdict{Status: StatusTimeout, LimitHit: LimitWall, Detail: fmt.Sprintf("wall time limit %s", l.WallTime)}
	case !f.Started:
		// bwrap (or the gate) failed before starting the program.
		return verdict{Status: StatusSandboxError, Err: infraErr("bwrap", fmt.Errorf("sandbox setup failed (exit %d): %s", f.ExitCode, firstLine(f.Stderr)))}
	case !f.ExitReported:
		// bwrap started its child but never reported the program's exit:
		// the program could not be executed (e.g. interpreter missing).
		return verdict{Status: StatusSandboxError, Err: infraErr("bwrap", fmt.Errorf("program not started (exit %d): %s", f.ExitCode, lastLine(f.Stderr)))}
	case f.ExitCode == 0:
		v.Status = StatusOK
	default:
		v.Status = StatusFailed
	}
	if f.OutputHit {
		v.LimitHit = LimitOutput // discarded, the run went on
	}
	return v
}
