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
	"syscall"
	"time"
)

// Proc is a child server process. It is killed if benchline dies (Pdeathsig)
// and runs in its own process group so Stop reaches its children too.
type Proc struct {
	Name    string
	cmd     *exec.Cmd
	exited  chan struct{} // closed when the process has ended
	err     error         // Wait's result, set before exited is closed
	stopped atomic.Bool   // Stop or Kill was called: the end is intended
	tail    *tailWriter
}

func startProc(name string, out io.Writer, env []string, bin string, args ...string) (*Proc, error) {
	cmd := exec.Command(bin, args...)
	tail := &tailWriter{max: 2048}
	w := io.MultiWriter(out, tail)
	cmd.Stdout, cmd.Stderr = w, w
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("devstack: start %s: %w", name, err)
	}
	p := &Proc{Name: name, cmd: cmd, exited: make(chan struct{}), tail: tail}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// Pid returns the process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Stop sends SIGTERM to the process group, then SIGKILL after grace.
func (p *Proc) Stop(grace time.Duration) {
	p.stopped.Store(true)
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
	}
}

// Kill sends SIGKILL to the process group and waits.
func (p *Proc) Kill() {
	p.stopped.Store(true)
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.exited
}

// Exited reports whether the process has ended.
func (p *Proc) Exited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// Done is closed when the process has ended.
func (p *Proc) Done() <-chan struct{} { return p.exited }

// ExitReason says how an ended process ended, with the last of its output.
func (p *Proc) ExitReason() string {
	why := "exited"
	if p.err != nil {
		why = p.err.Error()
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
