package childproc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/childproc/childproctest"
)

// TestChildOutlivesStartingThread starts a child from a goroutine whose
// thread then ends. The child must still be running: Pdeathsig would have
// killed it if it had been forked from that thread. The proof is how it
// ends: a SIGTERM sent after the thread is gone must be what ends it, not
// a SIGKILL already queued at the thread's exit (the kernel drops a
// signal sent to a process that is being killed).
func TestChildOutlivesStartingThread(t *testing.T) {
	p := childproctest.StartOnDyingThread(t, func() (*Proc, error) { return Start(exec.Command("sleep", "600")) })
	t.Cleanup(p.Kill)
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("signal the child: %v (it had already ended: %v)", err, p.Wait())
	}
	select {
	case <-p.Done():
	case <-time.After(time.Minute):
		t.Fatal("the child did not end on SIGTERM within a minute")
	}
	var ee *exec.ExitError
	if err := p.Wait(); !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Fatalf("the child ended with %v, want signal: terminated (killed means its parent-death signal fired when the starting thread ended)", err)
	}
}

// TestSignalAfterEndSendsNothing checks that a group whose leader has
// ended and been reaped is not signalled: its id may name another group
// by then.
func TestSignalAfterEndSendsNothing(t *testing.T) {
	p, err := Start(exec.Command("true"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := p.Signal(syscall.SIGKILL); !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("Signal after the end: %v, want os.ErrProcessDone", err)
	}
	p.Kill() // returns at once
	p.Stop(time.Hour)
}

// TestStartOwnGroup checks that the child leads a process group of its
// own, that the caller's other SysProcAttr settings are kept, and that a
// command that cannot start is reported.
func TestStartOwnGroup(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("sh", "-c", `echo "$$ $(ps -o pgid= -p $$) $(pwd)"`)
	cmd.Dir = dir
	cred := &syscall.Credential{Uid: uint32(os.Getuid()), Gid: uint32(os.Getgid()), NoSetGroups: true}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var out bytes.Buffer
	cmd.Stdout = &out
	p, err := Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	var pid, pgid int
	var wd string
	if _, err := fmt.Sscan(out.String(), &pid, &pgid, &wd); err != nil || pid != pgid || pid != p.Pid() || wd != dir {
		t.Fatalf("child pid %d, group %d, directory %s; Pid() %d (%v): want a group of its own, in %s", pid, pgid, wd, p.Pid(), err, dir)
	}
	if cmd.SysProcAttr.Credential != cred || cmd.SysProcAttr.Pdeathsig != syscall.SIGKILL {
		t.Errorf("SysProcAttr %+v: want the Credential kept and Pdeathsig SIGKILL", cmd.SysProcAttr)
	}
	if _, err := Start(exec.Command(dir + "/no-such-program")); err == nil || !strings.Contains(err.Error(), "no-such-program") {
		t.Fatalf("starting a missing program: %v", err)
	}
}
