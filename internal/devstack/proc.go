package devstack

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
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
	tail := &tailWriter{max: 2048}
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

// FreePort asks the kernel for a free loopback port.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("devstack: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func hostPort(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// waitHTTP polls url until it answers 200 or the process exits.
func waitHTTP(ctx context.Context, p *Proc, url string) error {
	client := &http.Client{Timeout: time.Second}
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
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
