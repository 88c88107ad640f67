package devstack

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/childproc/childproctest"
)

// fakeStack is a stack whose one child is a sleep process (or whatever
// launch starts), for the supervision logic alone.
func fakeStack(t *testing.T, restarts int, launch func(n int) (*Proc, error)) (*Stack, *child, *notes) {
	t.Helper()
	n := &notes{}
	s := &Stack{opts: Options{Restarts: restarts, RestartWindow: time.Minute, Notify: n.add}, died: make(chan error, 1)}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	calls := 0
	s.s3 = child{name: "fake", launch: func(context.Context) (*Proc, error) {
		calls++
		return launch(calls)
	}}
	s.mu.Lock()
	err := s.startChild(context.Background(), &s.s3, true)
	s.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s, &s.s3, n
}

type notes struct {
	mu    sync.Mutex
	lines []string
}

func (n *notes) add(s string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.lines = append(n.lines, s)
}

func (n *notes) String() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return strings.Join(n.lines, "\n")
}

func sleeper(int) (*Proc, error) {
	return startProc("fake", io.Discard, os.Environ(), "/bin/sh", "-c", "echo starting; exec sleep 60")
}

// current returns the child's process, under the stack's lock.
func current(s *Stack, c *child) *Proc {
	s.mu.Lock()
	defer s.mu.Unlock()
	return c.proc
}

// waitFor polls cond until it holds or 20 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDeadChildIsRestartedWithinBudget kills a child again and again: it
// comes back while the budget lasts, then its death is reported on Died,
// with the reason and its last output.
func TestDeadChildIsRestartedWithinBudget(t *testing.T) {
	s, c, n := fakeStack(t, 2, sleeper)
	for i := 1; i <= 2; i++ {
		old := current(s, c)
		_ = syscall.Kill(old.Pid(), syscall.SIGKILL)
		waitFor(t, "a restart", func() bool { p := current(s, c); return p != old && p != nil && !p.Exited() })
		select {
		case err := <-s.Died():
			t.Fatalf("reported dead after %d deaths: %v", i, err)
		default:
		}
	}
	last := current(s, c)
	waitFor(t, "the child's output", func() bool { return strings.Contains(last.tail.String(), "starting") })
	_ = syscall.Kill(last.Pid(), syscall.SIGKILL)
	select {
	case err := <-s.Died():
		for _, want := range []string{"fake died", "signal: killed", "its last output: starting", "restarted 2 times"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("died with %q, want it to say %q", err, want)
			}
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("no death reported; notes:\n%s", n)
	}
	if got := strings.Count(n.String(), "; restarting it ("); got != 2 {
		t.Errorf("%d restarts announced, want 2:\n%s", got, n)
	}
}

// TestFailedRestartIsReported checks that a child that cannot be started
// again is reported on Died with the restart's error.
func TestFailedRestartIsReported(t *testing.T) {
	s, c, _ := fakeStack(t, 3, func(n int) (*Proc, error) {
		if n > 1 {
			return nil, errors.New("port taken")
		}
		return sleeper(n)
	})
	_ = syscall.Kill(current(s, c).Pid(), syscall.SIGKILL)
	select {
	case err := <-s.Died():
		if !strings.Contains(err.Error(), "did not restart: port taken") {
			t.Errorf("died with %q", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no death reported")
	}
}

// TestIntendedStopsAreNotDeaths checks that Stop and a Restart method end
// children without a restart or a report.
func TestIntendedStopsAreNotDeaths(t *testing.T) {
	s, c, n := fakeStack(t, 0, sleeper)
	old := current(s, c)
	if err := s.restart(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if current(s, c) == old || !old.Exited() {
		t.Fatal("restart did not replace the process")
	}
	p := current(s, c)
	s.Stop()
	if !p.Exited() {
		t.Error("Stop left the child running")
	}
	// A watcher that saw an intended end has nothing to report: give it
	// the chance by waiting for both processes' ends to be observed.
	<-old.Done()
	<-p.Done()
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if !closed {
		t.Error("the stack is not closed")
	}
	select {
	case err := <-s.Died():
		t.Errorf("reported %v", err)
	default:
	}
	if n.String() != "" {
		t.Errorf("notes: %s", n)
	}
}

// TestServerOutlivesStartingThread starts a server process from a
// goroutine whose OS thread then ends (a locked goroutine that returns):
// the server must keep running until it is told to end. Its
// parent-death signal, had it been armed on that thread, would have
// killed it when the thread ended, and the SIGTERM sent afterwards would
// not be what ended it.
func TestServerOutlivesStartingThread(t *testing.T) {
	p := childproctest.StartOnDyingThread(t, func() (*Proc, error) {
		return startProc("fake", io.Discard, os.Environ(), "sleep", "600")
	})
	t.Cleanup(p.Kill)
	if p.Exited() {
		t.Fatalf("the server ended with its starting thread: %s", p.ExitReason())
	}
	_ = syscall.Kill(p.Pid(), syscall.SIGTERM)
	select {
	case <-p.Done():
	case <-time.After(time.Minute):
		t.Fatal("the server did not end on SIGTERM within a minute")
	}
	if why := p.ExitReason(); why != "signal: terminated" {
		t.Fatalf("the server ended with %q, want signal: terminated (killed: by its parent-death signal when the starting thread ended)", why)
	}
}
