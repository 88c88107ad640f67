package site

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/site/sitetest"
)

// serveFixture serves the fixture board with NewServer on a loopback
// port; it returns the server's address.
func serveFixture(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	store := blobtest.NewMemory()
	s, err := sitetest.Fixture(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	if err := blob.PutJSON(ctx, store, leaderboard.ScoresKey(s.Board, s.Stamp), s); err != nil {
		t.Fatal(err)
	}
	if err := blob.PutBytes(ctx, store, leaderboard.LatestKey(s.Board), []byte(s.Stamp)); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(Handler(store))
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// TestServeSlowBodies opens 300 connections that each announce a body of
// 200,000 bytes and send it a byte at a time, slowly: each is answered
// 413 and closed while it is still sending, and another client's request
// is answered meanwhile. (Before, the server read each body to its end
// before answering: the connections stayed open, unanswered.)
func TestServeSlowBodies(t *testing.T) {
	addr := serveFixture(t)
	const conns = 300
	deadline := time.Now().Add(60 * time.Second) // against hangs only
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	answers := make([]string, conns)
	for i := range conns {
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := fmt.Fprintf(c, "GET /demo/scores.json HTTP/1.1\r\nHost: x\r\nContent-Length: 200000\r\n\r\nx"); err != nil {
			t.Fatal(err)
		}
		wg.Add(2)
		go func() { // trickle the body: a byte every 200 ms
			defer wg.Done()
			tick := time.NewTicker(200 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					if _, err := c.Write([]byte("x")); err != nil {
						return // closed by the server
					}
				}
			}
		}()
		go func() { // read the answer, then wait for the close
			defer wg.Done()
			_ = c.SetReadDeadline(deadline)
			r := bufio.NewReader(c)
			answer := func() string {
				status, err := r.ReadString('\n')
				if err != nil {
					if ne, ok := err.(net.Error); ok && ne.Timeout() {
						return "no answer until the deadline"
					}
					return "no answer: " + err.Error()
				}
				for {
					if _, err := r.ReadByte(); err != nil {
						if strings.Contains(err.Error(), "timeout") {
							return strings.TrimSpace(status) + ", then the connection stayed open"
						}
						return strings.TrimSpace(status)
					}
				}
			}()
			mu.Lock()
			answers[i] = answer
			mu.Unlock()
		}()
	}
	// Another client, meanwhile.
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Get("http://" + addr + "/demo/scores.json")
	if err != nil {
		t.Errorf("another client, while %d connections trickle bodies: %v", conns, err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("another client: %s", resp.Status)
		}
	}
	// The readers end when their connection closes (or at the deadline);
	// then the writers are stopped.
	for {
		all := true
		for i := range answers {
			mu.Lock()
			all = all && answers[i] != ""
			mu.Unlock()
		}
		if all {
			break
		}
		if time.Now().After(deadline.Add(5 * time.Second)) {
			t.Fatal("the readers did not end")
		}
		time.Sleep(50 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	bad := map[string]int{}
	for _, a := range answers {
		if !strings.HasPrefix(a, "HTTP/1.1 413 ") || strings.Contains(a, "stayed open") {
			bad[a]++
		}
	}
	for a, n := range bad {
		t.Errorf("%d of %d slow-body connections: %q, want 413 and closed", n, conns, a)
	}
}

// TestServeRefusesBodies: a request with a body, announced or chunked, is
// refused with 413 before it is read, whatever its method.
func TestServeRefusesBodies(t *testing.T) {
	_, _, h := servedLarge(t)
	for _, tc := range []struct {
		name   string
		req    func() *http.Request
		status int
	}{
		{"no body", func() *http.Request { r, _ := http.NewRequest(http.MethodGet, "/demo/scores.json", nil); return r }, http.StatusOK},
		{"GET with a body", func() *http.Request {
			r, _ := http.NewRequest(http.MethodGet, "/demo/scores.json", strings.NewReader("abc"))
			return r
		}, http.StatusRequestEntityTooLarge},
		{"GET chunked", func() *http.Request {
			r, _ := http.NewRequest(http.MethodGet, "/demo/scores.json", strings.NewReader("abc"))
			r.ContentLength, r.TransferEncoding = -1, []string{"chunked"}
			return r
		}, http.StatusRequestEntityTooLarge},
		{"POST with a body", func() *http.Request {
			r, _ := http.NewRequest(http.MethodPost, "/demo/scores.json", strings.NewReader("abc"))
			return r
		}, http.StatusRequestEntityTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, tc.req())
			if w.Code != tc.status {
				t.Fatalf("%d %s, want %d", w.Code, w.Body.String(), tc.status)
			}
			if tc.status == http.StatusRequestEntityTooLarge && w.Header().Get("Connection") != "close" {
				t.Errorf("Connection %q, want close", w.Header().Get("Connection"))
			}
		})
	}
}
