// Package childproc starts child processes that end with their parent and
// whose process group can be signalled without hitting another process.
//
// Two hazards of exec.Cmd with SysProcAttr{Setpgid, Pdeathsig} are
// avoided here:
//
//   - Pdeathsig fires when the thread that forked the child exits, not the
//     process (go.dev/issue/27505). A Go thread exits when a goroutine
//     locked to it (runtime.LockOSThread) returns without unlocking, and
//     any goroutine may have run on that thread before. Start therefore
//     forks every child from one goroutine that locks its thread and never
//     returns: its thread lives as long as the process.
//   - A process group is named by its leader's pid. Once the leader is
//     reaped, the kernel may give that number to a new process (pid_max is
//     32768 on many machines, and a busy one wraps it within minutes), and
//     if that process leads a group of its own, kill(-pid) ends a stranger:
//     another test's worker, another engineer's server. Proc signals the
//     group only while its leader is not yet reaped (alive or a zombie),
//     when the number cannot have been reused.
package childproc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A Proc is a started child, the leader of its own process group. A
// goroutine waits for it (exec.Cmd.Wait) as soon as it starts; use Wait or
// Done, never the Cmd's own Wait.
type Proc struct {
	Cmd *exec.Cmd

	mu     sync.Mutex // held while signalling the group and while marking it reaped
	reaped bool       // Cmd.Wait may have reaped the leader: its pid may be reused
	done   chan struct{}
	err    error // Cmd.Wait's result, set before done is closed
}

// Start starts cmd in its own process group (Setpgid) with SIGKILL as its
// parent-death signal, keeping cmd's other SysProcAttr settings, from a
// thread that lives as long as this process. The error wraps exec's.
func Start(cmd *exec.Cmd) (*Proc, error) {
	attr := syscall.SysProcAttr{}
	if cmd.SysProcAttr != nil {
		attr = *cmd.SysProcAttr
	}
	attr.Setpgid, attr.Pgid = true, 0
	attr.Pdeathsig = syscall.SIGKILL
	cmd.SysProcAttr = &attr
	if err := startOnForkThread(cmd); err != nil {
		return nil, fmt.Errorf("childproc: start %s: %w", cmd.Path, err)
	}
	p := &Proc{Cmd: cmd, done: make(chan struct{})}
	go p.wait()
	return p, nil
}

// wait waits until the child has ended without reaping it, marks it
// reaped under mu (so no signal can be on its way to a reused pid), then
// reaps it with Cmd.Wait.
func (p *Proc) wait() {
	pid := p.Cmd.Process.Pid
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	p.mu.Lock()
	p.reaped = true
	p.mu.Unlock()
	p.err = p.Cmd.Wait()
	close(p.done)
}

// Pid is the child's process id, which is also its process group's id.
func (p *Proc) Pid() int { return p.Cmd.Process.Pid }

// Signal sends sig to the child's process group. Once the child has ended
// it sends nothing and returns os.ErrProcessDone: the group's id may by
// then name another process's group.
func (p *Proc) Signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reaped {
		return os.ErrProcessDone
	}
	return syscall.Kill(-p.Cmd.Process.Pid, sig)
}

// Kill sends SIGKILL to the process group and waits until the child has
// ended.
func (p *Proc) Kill() {
	_ = p.Signal(syscall.SIGKILL)
	<-p.done
}

// Stop sends SIGTERM to the process group, then SIGKILL if the child has
// not ended after grace, and waits until it has.
func (p *Proc) Stop(grace time.Duration) {
	_ = p.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		p.Kill()
	}
}

// Done is closed when the child has ended and been reaped.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Exited reports whether the child has ended and been reaped.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Wait waits until the child has ended and returns Cmd.Wait's result; it
// may be called any number of times.
func (p *Proc) Wait() error {
	<-p.done
	return p.err
}

type startRequest struct {
	cmd *exec.Cmd
	err chan error
}

var (
	forkOnce sync.Once
	forks    chan startRequest
)

// startOnForkThread runs cmd.Start on the fork thread: a goroutine locked
// to its thread that never returns, so the thread, the "parent" that
// Pdeathsig watches, lives as long as the process.
func startOnForkThread(cmd *exec.Cmd) error {
	forkOnce.Do(func() {
		forks = make(chan startRequest)
		go func() {
			runtime.LockOSThread() // never unlocked: this goroutine never returns
			for r := range forks {
				r.err <- r.cmd.Start()
			}
		}()
	})
	r := startRequest{cmd: cmd, err: make(chan error, 1)}
	forks <- r
	return <-r.err
}
