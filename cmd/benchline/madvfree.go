package main

import (
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"
)

// madvFree re-executes the process (the same binary, arguments and
// environment) with madvdontneed=0 added to GODEBUG, unless GODEBUG sets
// madvdontneed already: the worker's memory, when the Go runtime gives it
// back, goes with MADV_FREE instead of MADV_DONTNEED. The pages stay
// mapped until the kernel needs them, so a worker's next large run does
// not fault its heap back in page by page: measured in docs/PERFORMANCE.md
// (round 5), a few µs of CPU per batch-mode sample from a worker's second
// run on. The cost is that RSS falls only under memory pressure (the
// kernel takes such pages first); GODEBUG=madvdontneed=1 keeps the Go
// default. It is a GODEBUG setting the runtime reads at start only (not
// one a //go:debug line may set), hence the exec. It returns only when it
// does not exec: not on Linux, already set, or the exec failed (logged).
func madvFree(logger *slog.Logger) {
	if runtime.GOOS != "linux" {
		return
	}
	env, ok := withMadvFree(os.Environ())
	if !ok {
		return
	}
	exe, err := os.Executable()
	if err == nil {
		err = syscall.Exec(exe, os.Args, env)
	}
	logger.Warn("worker: could not restart with GODEBUG=madvdontneed=0; memory is returned with MADV_DONTNEED", "err", err)
}

// withMadvFree returns environ with madvdontneed=0 added to GODEBUG, and
// false when GODEBUG sets madvdontneed already.
func withMadvFree(environ []string) ([]string, bool) {
	for i, kv := range environ {
		v, ok := strings.CutPrefix(kv, "GODEBUG=")
		if !ok {
			continue
		}
		for s := range strings.SplitSeq(v, ",") {
			if strings.HasPrefix(strings.TrimSpace(s), "madvdontneed=") {
				return nil, false
			}
		}
		out := slices.Clone(environ)
		if strings.TrimSpace(v) == "" {
			out[i] = "GODEBUG=madvdontneed=0"
		} else {
			out[i] = kv + ",madvdontneed=0"
		}
		return out, true
	}
	return append(slices.Clone(environ), "GODEBUG=madvdontneed=0"), true
}
