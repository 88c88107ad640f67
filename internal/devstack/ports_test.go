package devstack

import (
	"context"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func TestPortsInUse(t *testing.T) {
	for _, tt := range []struct {
		name  string
		out   string
		ports []int
		inUse bool
	}{
		{"temporal's HTTP API port", "time=... level=ERROR msg=\"failed starting\" error=\"listen tcp 127.0.0.1:42443: bind: address already in use\"\n", []int{42443}, true},
		{"two ports, one twice", "listen tcp 127.0.0.1:7233: bind: address already in use\nlisten tcp 127.0.0.1:7233: bind: address already in use\nlisten tcp 127.0.0.1:8233: bind: address already in use", []int{7233, 8233}, true},
		{"minio's own check", "FATAL Unable to start the server: Specified port is already in use", nil, true},
		{"no port named", "Error: address already in use", nil, true},
		{"another failure", "listen tcp 127.0.0.1:80: bind: permission denied", nil, false},
		{"nothing", "", nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ports, inUse := portsInUse(tt.out)
			if inUse != tt.inUse || !slices.Equal(ports, tt.ports) {
				t.Errorf("portsInUse = %v, %v; want %v, %v", ports, inUse, tt.ports, tt.inUse)
			}
		})
	}
}

// TestFreePortAvoidsEphemeralRange checks that FreePort's ports are
// outside the kernel's range for outgoing connections' local ports.
func TestFreePortAvoidsEphemeralRange(t *testing.T) {
	lo, hi := freePortWindow()
	elo, ehi := ephemeralRange()
	if elo-minFreePort >= minWindow || maxFreePort-ehi >= minWindow {
		if lo <= ehi && hi >= elo {
			t.Fatalf("window %d-%d overlaps the ephemeral range %d-%d", lo, hi, elo, ehi)
		}
	}
	for range 50 {
		p, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if p < lo || p > hi {
			t.Fatalf("FreePort = %d, outside its window %d-%d", p, lo, hi)
		}
	}
}

// holdPort listens on a loopback port until the test ends: a port another
// process took between the stack's pick and its server's bind.
func holdPort(t *testing.T) int {
	t.Helper()
	p, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", hostPort(p))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return p
}

// takenPicker returns the held port at the picks numbered in taken
// (counting from 1) and a free port at the others.
type takenPicker struct {
	mu    sync.Mutex
	held  int
	taken []int
	n     int
}

func (p *takenPicker) pick() (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	if slices.Contains(p.taken, p.n) || slices.Contains(p.taken, -1) {
		return p.held, nil
	}
	return FreePort()
}

// TestStartPicksAgainWhenAPortIsTaken starts real stacks (the tools `make
// setup` installs) whose port picker first hands out a port that another
// listener holds, as when a picked port is taken before the server binds
// it: the stack must start anyway, on other ports, and say so in its log.
// Picks are made in this order: the S3 port, the Temporal port (headless:
// no UI port), MinIO's console port (unused: the console is off),
// Temporal's metrics and HTTP API ports. A picker that never gives a free port ends after portAttempts
// launches with the server's error.
func TestStartPicksAgainWhenAPortIsTaken(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts MinIO and Temporal")
	}
	for _, tool := range []string{"temporal", "minio"} {
		if _, err := FindTool(tool); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name   string
		taken  []int
		s3Only bool
	}{
		{"S3 port", []int{1}, true},
		{"Temporal port", []int{2}, false},
		{"Temporal HTTP API port", []int{5}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			held := holdPort(t)
			picker := &takenPicker{held: held, taken: tt.taken}
			var log lockedLog
			s, err := Start(context.Background(), Options{Dir: t.TempDir(), Headless: true, S3Only: tt.s3Only, Log: &log, freePort: picker.pick})
			if err != nil {
				t.Fatalf("start: %v\nlog:\n%s", err, log.String())
			}
			defer s.Stop()
			for _, addr := range []string{s.Config.S3.Endpoint, s.Config.Temporal.Address} {
				if strings.HasSuffix(addr, ":"+strconv.Itoa(held)) {
					t.Errorf("the stack uses the taken port: %s", addr)
				}
			}
			if !strings.Contains(log.String(), "starting it again on other ports (attempt 2 of") {
				t.Errorf("the log does not say a launch was retried:\n%s", log.String())
			}
		})
	}
	t.Run("always taken", func(t *testing.T) {
		held := holdPort(t)
		picker := &takenPicker{held: held, taken: []int{-1}}
		var log lockedLog
		_, err := Start(context.Background(), Options{Dir: t.TempDir(), Headless: true, S3Only: true, Log: &log, freePort: picker.pick})
		if err == nil {
			t.Fatal("the stack started on a port that is taken")
		}
		if got := strings.Count(log.String(), "starting it again on other ports"); got != portAttempts-1 {
			t.Errorf("%d launches retried, want %d:\n%s", got, portAttempts-1, log.String())
		}
	})
}

// lockedLog is a log the stack's goroutines may write to while the test
// reads it.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
