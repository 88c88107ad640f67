package webfetch

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// closedAddr is a loopback address nothing listens on: connecting is
// refused at once, as with no route.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestNoRouteFailsFast: after NoRouteAfter fetches that could not connect,
// the fetcher tries nothing for NoRouteFor, and a host that failed is not
// tried again; an answer resets the count.
func TestNoRouteFailsFast(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("page")) })
	dead := closedAddr(t)
	cfg := Config{AllowNets: loopback, NoRouteAfter: 3, NoRouteFor: time.Hour, Resolve: map[string]string{}}
	for _, h := range []string{"a.test", "b.test", "c.test", "d.test"} {
		cfg.Resolve[h] = dead
	}
	cfg.Resolve["up.test"] = strings.TrimPrefix(s.URL, "http://")
	f, _ := newFetcher(t, cfg)
	if r := fetch(t, f, "http://a.test/1"); r.Status != Unreachable || !r.noConnect {
		t.Fatalf("a.test: %+v, want unreachable before connecting", r)
	}
	if r := fetch(t, f, "http://a.test/2"); r.Status != Unreachable || !strings.Contains(r.Reason, "not tried") {
		t.Errorf("a.test again: %+v, want not tried", r)
	}
	if r := fetch(t, f, "http://up.test/"); r.Status != OK {
		t.Fatalf("up.test: %+v", r)
	}
	fetch(t, f, "http://b.test/")
	fetch(t, f, "http://c.test/")
	if r := fetch(t, f, "http://up.test/other"); r.Status != OK { // resets: 2 in a row, then an answer
		t.Fatalf("up.test: %+v", r)
	}
	fetch(t, f, "http://d.test/")
	fetch(t, f, "http://b.test/x") // b.test is dead: not tried, not counted
	hits := s.count()
	f.cfg.Resolve["e.test"], f.cfg.Resolve["f.test"] = dead, dead
	fetch(t, f, "http://e.test/")
	fetch(t, f, "http://f.test/") // third failure in a row: no route
	r := fetch(t, f, "http://up.test/third")
	if r.Status != Unreachable || !strings.Contains(r.Reason, "no route") || s.count() != hits {
		t.Errorf("after 3 failures in a row: %+v (server hit %d times more), want no route, not tried", r, s.count()-hits)
	}
}

// TestOffline: an offline fetcher answers from the cache and marks every
// other source Offline without trying.
func TestOffline(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("page")) })
	online, store := newFetcher(t, Config{AllowNets: loopback})
	if r := fetch(t, online, s.URL+"/cached"); r.Status != OK {
		t.Fatal(r)
	}
	off, err := New(store, Config{AllowNets: loopback, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	if r := fetch(t, off, s.URL+"/cached"); r.Status != OK || !r.Cached {
		t.Errorf("cached page offline: %+v", r)
	}
	if r := fetch(t, off, s.URL+"/new"); r.Status != Offline || !strings.Contains(r.Reason, "unverifiable (offline)") {
		t.Errorf("new page offline: %+v", r)
	}
	if s.count() != 1 {
		t.Errorf("server hit %d times, want 1 (the online fetch)", s.count())
	}
}
