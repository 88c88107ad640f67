package devstack

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benchline/benchline/internal/childproc"
)

// Proc is a child server process. It is killed if benchline dies (Pdeathsig,
// from a thread that lives as long as benchline: internal/childproc) and runs
// in its own process group so Stop reaches its children too.
type Proc struct {
	Name    string
	child   *childproc.Proc
	stopped atomic.Bool // Stop or Kill was called: the end is intended
	tail    *tailWriter
}

func startProc(name string, out io.Writer, env []string, bin string, args ...string) (*Proc, error) {
	cmd := exec.Command(bin, args...)
	tail := &tailWriter{max: 8192}
	w := io.MultiWriter(out, tail)
	cmd.Stdout, cmd.Stderr = w, w
	cmd.Env = env
	c, err := childproc.Start(cmd)
	if err != nil {
		return nil, fmt.Errorf("devstack: start %s: %w", name, err)
	}
	return &Proc{Name: name, child: c, tail: tail}, nil
}

// Pid returns the process id.
func (p *Proc) Pid() int { return p.child.Pid() }

// Stop sends SIGTERM to the process group, then SIGKILL after grace.
func (p *Proc) Stop(grace time.Duration) {
	p.stopped.Store(true)
	p.child.Stop(grace)
}

// Kill sends SIGKILL to the process group and waits.
func (p *Proc) Kill() {
	p.stopped.Store(true)
	p.child.Kill()
}

// Exited reports whether the process has ended.
func (p *Proc) Exited() bool { return p.child.Exited() }

// Done is closed when the process has ended.
func (p *Proc) Done() <-chan struct{} { return p.child.Done() }

// Output is the last of what the process wrote (8 KiB).
func (p *Proc) Output() string { return p.tail.String() }

// ExitReason says how an ended process ended, with the last of its output.
func (p *Proc) ExitReason() string {
	why := "exited"
	if err := p.child.Wait(); err != nil {
		why = err.Error()
	}
	if t := strings.TrimSpace(p.tail.String()); t != "" {
		if i := strings.LastIndexByte(t, '\n'); i >= 0 {
			t = t[i+1:]
		}
		why += "; its last output: " + t
	}
	return why
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// FreePort returns a loopback port that is free now, outside the kernel's
// ephemeral range (net.ipv4.ip_local_port_range). A port from that range
// (what listening on port 0 gives) is also what the kernel hands out as the
// local port of outgoing connections, and a busy machine makes thousands on
// loopback, each holding its port through TIME_WAIT: a server started a
// moment later could find it taken. Outside the range only servers that
// pick a port compete, and a stack whose port was taken anyway picks again
// (Start).
func FreePort() (int, error) {
	lo, hi := freePortWindow()
	for range 100 {
		port := lo + rand.IntN(hi-lo+1)
		l, err := net.Listen("tcp", hostPort(port))
		if err == nil {
			l.Close()
			return port, nil
		}
	}
	return 0, fmt.Errorf("devstack: free port: no free loopback port in %d-%d after 100 tries", lo, hi)
}

// Ports FreePort picks from: below the ephemeral range, above the fixed
// ports of the dev stack (7233, 8233, 9000) and most well-known services,
// or above the range when too little is left below it.
const (
	minFreePort = 10000
	maxFreePort = 65535
	minWindow   = 1000
)

// ephemeralRange is the kernel's range of local ports for outgoing
// connections.
func ephemeralRange() (lo, hi int) {
	lo, hi = 32768, 60999 // Linux's default
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		var a, z int
		if _, err := fmt.Sscan(string(b), &a, &z); err == nil && a <= z {
			lo, hi = a, z
		}
	}
	return lo, hi
}

// freePortWindow is the widest range of FreePort's ports that avoids the
// kernel's ephemeral ports.
func freePortWindow() (lo, hi int) {
	elo, ehi := ephemeralRange()
	below, above := elo-minFreePort, maxFreePort-ehi
	switch {
	case below >= minWindow && below >= above:
		return minFreePort, elo - 1
	case above >= minWindow:
		return ehi + 1, maxFreePort
	default: // the ephemeral range covers nearly everything: no choice
		return minFreePort, maxFreePort
	}
}

func hostPort(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// waitHTTP polls url until it answers 200 or the process exits.
func waitHTTP(ctx context.Context, p *Proc, url string) error {
	client := &http.Client{Timeout: time.Second}
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			// Not when ours has exited: then another process answered,
			// on a port ours could not bind.
			if resp.StatusCode == http.StatusOK && !p.Exited() {
				return nil
			}
		}
		if p.Exited() {
			return fmt.Errorf("devstack: %s exited before answering %s: %s", p.Name, url, p.ExitReason())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("devstack: %s did not answer %s: %w", p.Name, url, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
