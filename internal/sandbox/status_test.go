package sandbox

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestDecide checks Run's status decision for every precedence case:
// context, output limit, OOM, CPU, wall, setup, start, exit code.
func TestDecide(t *testing.T) {
	l := Limits{WallTime: 2 * time.Second, CPUTime: time.Second, OutputBytes: 1024, MemoryBytes: 64 << 20}
	ran := func(f runFacts) runFacts { f.Started, f.ExitReported = true, true; return f }
	const (
		cpuDetail    = "CPU time limit 1s"
		wallDetail   = "wall time limit 2s"
		memDetail    = "memory limit 67108864 bytes (cgroup OOM kill)"
		outputDetail = "output exceeded 1024 bytes"
	)
	for _, tc := range []struct {
		name    string
		facts   runFacts
		status  Status
		limit   string
		detail  string
		wantErr error  // the error matches it; status is then sandbox-error
		errText string // and contains this
	}{
		// The exit code, when nothing else applies.
		{name: "exit 0", facts: ran(runFacts{}), status: StatusOK},
		{name: "exit 3", facts: ran(runFacts{ExitCode: 3}), status: StatusFailed},
		{name: "SIGKILL well under the CPU limit is the program's", facts: ran(runFacts{ExitCode: 137, CPU: 10 * time.Millisecond}), status: StatusFailed},
		{name: "SIGKILL just under the CPU grace", facts: ran(runFacts{ExitCode: 137, CPU: 949 * time.Millisecond}), status: StatusFailed},

		// The CPU limit: RLIMIT_CPU's signals, or the cgroup poll.
		{name: "SIGXCPU", facts: ran(runFacts{ExitCode: 152, CPU: 300 * time.Millisecond}), status: StatusTimeout, limit: LimitCPU, detail: cpuDetail},
		{name: "SIGKILL at the CPU limit (hard RLIMIT_CPU)", facts: ran(runFacts{ExitCode: 137, CPU: 950 * time.Millisecond}), status: StatusTimeout, limit: LimitCPU, detail: cpuDetail},
		{name: "killed by a signal at the CPU limit", facts: ran(runFacts{ExitCode: -1, CPU: time.Second}), status: StatusTimeout, limit: LimitCPU, detail: cpuDetail},
		{name: "cgroup CPU poll", facts: ran(runFacts{CPUHit: true, ExitCode: -1}), status: StatusTimeout, limit: LimitCPU, detail: cpuDetail},

		// The wall limit, and what precedes it.
		{name: "wall", facts: ran(runFacts{WallHit: true, ExitCode: -1}), status: StatusTimeout, limit: LimitWall, detail: wallDetail},
		{name: "CPU before wall", facts: ran(runFacts{WallHit: true, CPUHit: true, ExitCode: -1}), status: StatusTimeout, limit: LimitCPU, detail: cpuDetail},
		{name: "OOM before CPU and wall", facts: ran(runFacts{OOM: true, CPUHit: true, WallHit: true, ExitCode: -1}), status: StatusMemory, limit: LimitMemory, detail: memDetail},
		{name: "OOM with a zero exit", facts: ran(runFacts{OOM: true}), status: StatusMemory, limit: LimitMemory, detail: memDetail},
		{name: "output before OOM, CPU and wall", facts: ran(runFacts{OutputHit: true, OOM: true, CPUHit: true, WallHit: true, ExitCode: -1}), status: StatusOutputLimit, limit: LimitOutput, detail: outputDetail},

		// Excess output discarded: the run went on, its status is its own.
		{name: "discarded output, exit 0", facts: ran(runFacts{OutputHit: true, DiscardExcess: true}), status: StatusOK, limit: LimitOutput},
		{name: "discarded output, exit 1", facts: ran(runFacts{OutputHit: true, DiscardExcess: true, ExitCode: 1}), status: StatusFailed, limit: LimitOutput},
		{name: "discarded output, then the wall limit", facts: ran(runFacts{OutputHit: true, DiscardExcess: true, WallHit: true, ExitCode: -1}), status: StatusTimeout, limit: LimitWall, detail: wallDetail},
		{name: "discarded output, then OOM", facts: ran(runFacts{OutputHit: true, DiscardExcess: true, OOM: true, ExitCode: -1}), status: StatusMemory, limit: LimitMemory, detail: memDetail},

		// The context: an error, unless a time limit fired too.
		{name: "canceled", facts: ran(runFacts{Canceled: true, CtxErr: context.Canceled, ExitCode: -1}), wantErr: context.Canceled, errText: "run canceled"},
		{name: "deadline", facts: ran(runFacts{Canceled: true, CtxErr: context.DeadlineExceeded, ExitCode: -1}), wantErr: context.DeadlineExceeded},
		{name: "canceled before output and OOM", facts: ran(runFacts{Canceled: true, CtxErr: context.Canceled, OutputHit: true, OOM: true, ExitCode: -1}), wantErr: context.Canceled},
		{name: "canceled, and the wall limit fired", facts: ran(runFacts{Canceled: true, CtxErr: context.Canceled, WallHit: true, ExitCode: -1}), status: StatusTimeout, limit: LimitWall, detail: wallDetail},
		{name: "canceled, and the CPU poll fired", facts: ran(runFacts{Canceled: true, CtxErr: context.Canceled, CPUHit: true, ExitCode: -1}), status: StatusTimeout, limit: LimitCPU, detail: cpuDetail},
		{name: "canceled, and the output limit and the wall limit", facts: ran(runFacts{Canceled: true, CtxErr: context.Canceled, OutputHit: true, WallHit: true, ExitCode: -1}), status: StatusOutputLimit, limit: LimitOutput, detail: outputDetail},

		// bwrap's reports: a sandbox not set up, a program not started.
		{name: "sandbox not set up", facts: runFacts{ExitCode: 1, Stderr: "bwrap: Creating new namespace failed: EPERM\nmore"},
			wantErr: ErrInfrastructure, errText: "sandbox setup failed (exit 1): bwrap: Creating new namespace failed: EPERM"},
		{name: "program not started", facts: runFacts{Started: true, ExitCode: 1, Stderr: "warning\nbwrap: execvp /nonexistent/python: No such file or directory\n"},
			wantErr: ErrInfrastructure, errText: "program not started (exit 1): bwrap: execvp /nonexistent/python"},
		{name: "not started, with a zero exit", facts: runFacts{Started: true}, wantErr: ErrInfrastructure, errText: "program not started (exit 0)"},
		{name: "wall before a sandbox not set up", facts: runFacts{WallHit: true, ExitCode: -1}, status: StatusTimeout, limit: LimitWall, detail: wallDetail},
		{name: "output before a program not started", facts: runFacts{Started: true, OutputHit: true, ExitCode: -1}, status: StatusOutputLimit, limit: LimitOutput, detail: outputDetail},
		{name: "canceled before a sandbox not set up", facts: runFacts{Canceled: true, CtxErr: context.Canceled, ExitCode: -1}, wantErr: context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := decide(tc.facts, l)
			if tc.wantErr != nil {
				if !errors.Is(v.Err, tc.wantErr) || v.Status != StatusSandboxError || !strings.Contains(errText(v.Err), tc.errText) {
					t.Fatalf("decide = %+v, want sandbox-error matching %v and containing %q", v, tc.wantErr, tc.errText)
				}
				return
			}
			if v.Err != nil || v.Status != tc.status || v.LimitHit != tc.limit || v.Detail != tc.detail {
				t.Fatalf("decide = {%s %q %q %v}, want {%s %q %q}", v.Status, v.LimitHit, v.Detail, v.Err, tc.status, tc.limit, tc.detail)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
