package webfetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
)

// loopback allows the httptest server's address.
var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}

// server is an httptest server counting its requests.
type server struct {
	*httptest.Server
	hits atomic.Int64
}

func newServer(t *testing.T, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) count() int64 { return s.hits.Load() }

func newFetcher(t *testing.T, cfg Config) (*Fetcher, blob.Store) {
	t.Helper()
	store := blobtest.NewMemory()
	f, err := New(store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f, store
}

func fetch(t *testing.T, f *Fetcher, u string) Result {
	t.Helper()
	r, err := f.Fetch(context.Background(), u)
	if err != nil {
		t.Fatalf("Fetch(%s): %v", u, err)
	}
	return r
}

func TestFetchCachesPages(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		fmt.Fprint(w, "# Source\n\nThe bridge opened in 1932.")
	})
	f, store := newFetcher(t, Config{AllowNets: loopback})
	u := s.URL + "/page#section"
	first := fetch(t, f, u)
	if first.Status != OK || first.Text != "# Source\n\nThe bridge opened in 1932." || first.Cached ||
		first.ContentType != "text/markdown" || first.HTTPStatus != 200 || first.URL != s.URL+"/page" || first.FinalURL != s.URL+"/page" {
		t.Fatalf("first fetch = %+v", first)
	}
	second := fetch(t, f, strings.ToUpper(s.URL[:4])+s.URL[4:]+"/page")
	if !second.Cached || second.Text != first.Text || !second.FetchedAt.Equal(first.FetchedAt) {
		t.Errorf("second fetch = %+v, want the cached first", second)
	}
	if s.count() != 1 {
		t.Errorf("server hit %d times, want 1", s.count())
	}
	if ok, err := blob.Exists(context.Background(), store, f.CacheKey(first.URL)); !ok || err != nil {
		t.Errorf("no cache entry at %s (%v)", f.CacheKey(first.URL), err)
	}
}

func TestFetchStatuses(t *testing.T) {
	big := strings.Repeat("x", 100)
	mux := http.NewServeMux()
	mux.HandleFunc("/missing", http.NotFound)
	mux.HandleFunc("/gone", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusGone) })
	mux.HandleFunc("/forbidden", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusForbidden) })
	mux.HandleFunc("/busy", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTooManyRequests) })
	mux.HandleFunc("/broken", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) })
	mux.HandleFunc("/image", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n"))
	})
	mux.HandleFunc("/pdf-sniffed", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil // no header: the fetcher sniffs
		w.Write([]byte("%PDF-1.7\n"))
	})
	mux.HandleFunc("/plain-sniffed", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil
		w.Write([]byte("plain words"))
	})
	mux.HandleFunc("/declared-large", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Length", "101")
		w.Write([]byte(big + "y"))
	})
	mux.HandleFunc("/streamed-large", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		for range 3 { // flushed: no Content-Length, chunked
			w.Write([]byte(big[:40]))
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/at-limit", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte(big))
	})
	mux.HandleFunc("/html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=iso-8859-1")
		w.Write([]byte("<p>Caf\xe9 <b>open</b></p><script>x()</script>"))
	})
	s := newServer(t, mux.ServeHTTP)
	for _, tc := range []struct {
		path       string
		status     Status
		httpStatus int
		text       string
		reason     string
		cached     bool
	}{
		{"/missing", NotFound, 404, "", "404", true},
		{"/gone", NotFound, 410, "", "410", true},
		{"/forbidden", HTTPError, 403, "", "403", true},
		{"/busy", HTTPError, 429, "", "429", false},
		{"/broken", HTTPError, 502, "", "502", false},
		{"/image", BadContentType, 200, "", `"image/png"`, true},
		{"/pdf-sniffed", BadContentType, 200, "", "sniffed", true},
		{"/plain-sniffed", OK, 200, "plain words", "", true},
		{"/declared-large", TooLarge, 200, "", "Content-Length 101", false},
		{"/streamed-large", TooLarge, 200, "", "over the limit of 100 bytes", false},
		{"/at-limit", OK, 200, big, "", true},
		{"/html", OK, 200, "Café open", "", true},
	} {
		t.Run(tc.path, func(t *testing.T) {
			f, store := newFetcher(t, Config{AllowNets: loopback, MaxBytes: 100})
			before := s.count()
			r := fetch(t, f, s.URL+tc.path)
			if r.Status != tc.status || r.HTTPStatus != tc.httpStatus || r.Text != tc.text || !strings.Contains(r.Reason, tc.reason) {
				t.Fatalf("got %s %d %q (%s); want %s %d %q (reason with %q)", r.Status, r.HTTPStatus, r.Text, r.Reason,
					tc.status, tc.httpStatus, tc.text, tc.reason)
			}
			if ok, _ := blob.Exists(context.Background(), store, f.CacheKey(r.URL)); ok != tc.cached {
				t.Errorf("cached = %v, want %v", ok, tc.cached)
			}
			again := fetch(t, f, s.URL+tc.path)
			if hits := s.count() - before; (hits == 1) != tc.cached || again.Status != tc.status || again.Cached != tc.cached {
				t.Errorf("two fetches hit the server %d times, second %s cached=%v; want cached=%v", hits, again.Status, again.Cached, tc.cached)
			}
		})
	}
}

// TestFetchTimeout serves a page that never answers: the handler waits
// until the client has given up and closed the connection.
func TestFetchTimeout(t *testing.T) {
	entered := make(chan struct{}, 4)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-r.Context().Done()
	})
	f, store := newFetcher(t, Config{AllowNets: loopback, Timeout: 200 * time.Millisecond})
	r := fetch(t, f, s.URL+"/slow")
	select {
	case <-entered:
	default:
		t.Fatal("the server never saw the request: the timeout was not the server's silence")
	}
	if r.Status != Timeout || !strings.Contains(r.Reason, "200ms") || r.Text != "" {
		t.Fatalf("got %+v, want a timeout", r)
	}
	if ok, _ := blob.Exists(context.Background(), store, f.CacheKey(r.URL)); ok {
		t.Error("a timeout was cached; it must be tried again")
	}
}

// TestFetchCallerCancels returns the caller's cancellation as an error,
// not as a verdict on the source.
func TestFetchCallerCancels(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		cancel()
		<-r.Context().Done()
	})
	f, _ := newFetcher(t, Config{AllowNets: loopback})
	r, err := f.Fetch(ctx, s.URL+"/")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %+v, %v; want an error wrapping context.Canceled", r, err)
	}
}

func TestFetchRefusesPrivateAddresses(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if to := r.URL.Query().Get("to"); to != "" {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "private page")
	})
	port := s.Listener.Addr().(*net.TCPAddr).Port
	for _, tc := range []struct {
		name     string
		cfg      Config
		url      string
		status   Status
		final    string
		because  string
		requests int64 // reaching the test server
	}{
		{"loopback not allowed", Config{}, s.URL + "/", RefusedPrivate, s.URL + "/", "loopback", 0},
		{"a name resolving to loopback", Config{}, fmt.Sprintf("http://localhost:%d/", port), RefusedPrivate, "", "loopback", 0},
		{"allowed by range", Config{AllowNets: loopback}, s.URL + "/", OK, s.URL + "/", "", 1},
		{"allowed by host", Config{AllowHosts: []string{"LOCALHOST"}}, fmt.Sprintf("http://localhost:%d/", port), OK, "", "", 1},
		{"redirect to link-local metadata", Config{AllowNets: loopback},
			s.URL + "/?to=http://169.254.169.254/latest/meta-data/", RefusedPrivate, "http://169.254.169.254/latest/meta-data/", "link-local", 1},
		{"redirect to a private range", Config{AllowNets: loopback},
			s.URL + "/?to=http://10.1.2.3/x", RefusedPrivate, "http://10.1.2.3/x", "private", 1},
		{"redirect to another loopback address", Config{AllowNets: loopback},
			s.URL + fmt.Sprintf("/?to=http://127.0.0.2:%d/", port), RefusedPrivate, fmt.Sprintf("http://127.0.0.2:%d/", port), "loopback", 1},
		{"redirect to IPv6 loopback", Config{AllowNets: loopback},
			s.URL + fmt.Sprintf("/?to=http://[::1]:%d/", port), RefusedPrivate, fmt.Sprintf("http://[::1]:%d/", port), "loopback", 1},
		{"redirect to the unspecified address", Config{AllowNets: loopback},
			s.URL + fmt.Sprintf("/?to=http://0.0.0.0:%d/", port), RefusedPrivate, "", "unspecified", 1},
		{"redirect to a non-http scheme", Config{AllowNets: loopback},
			s.URL + "/?to=file:///etc/passwd", Unreachable, "file:///etc/passwd", "not http(s)", 1},
		{"mapped host, not allowed", Config{Resolve: map[string]string{"sources.benchline.test": s.Listener.Addr().String()}},
			"http://sources.benchline.test/a", RefusedPrivate, "", "sources.benchline.test resolves to 127.0.0.1", 0},
		{"mapped host, allowed", Config{Resolve: map[string]string{"sources.benchline.test": s.Listener.Addr().String()},
			AllowHosts: []string{"sources.benchline.test"}}, "http://sources.benchline.test/a", OK, "http://sources.benchline.test/a", "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, store := newFetcher(t, tc.cfg)
			before := s.count()
			r := fetch(t, f, tc.url)
			if r.Status != tc.status || !strings.Contains(r.Reason, tc.because) || (tc.final != "" && r.FinalURL != tc.final) {
				t.Fatalf("got %s %q final %s; want %s (reason with %q) final %s", r.Status, r.Reason, r.FinalURL, tc.status, tc.because, tc.final)
			}
			if tc.status == RefusedPrivate {
				if r.Text != "" {
					t.Errorf("refused fetch has text %q", r.Text)
				}
				if ok, _ := blob.Exists(context.Background(), store, f.CacheKey(r.URL)); ok {
					t.Error("a refusal was cached; it depends on the configuration")
				}
			}
			if got := s.count() - before; got != tc.requests {
				t.Errorf("the server got %d requests, want %d", got, tc.requests)
			}
		})
	}
}

func TestFetchRedirects(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		var n int
		if _, err := fmt.Sscanf(r.URL.Path, "/hop/%d", &n); err == nil && n > 0 {
			http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusMovedPermanently)
			return
		}
		if r.URL.Path == "/loop" {
			http.Redirect(w, r, "/loop", http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "arrived")
	})
	for _, tc := range []struct {
		name         string
		max          int
		path         string
		status       Status
		final        string
		requests     int64
		reasonSubstr string
	}{
		{"five redirects followed", 0, "/hop/5", OK, "/hop/0", 6, ""},
		{"six redirects stopped", 0, "/hop/6", HTTPError, "/hop/0", 6, "stopped after 5 redirects"},
		{"a loop is bounded", 0, "/loop", HTTPError, "/loop", 6, "stopped after 5 redirects"},
		{"a lower bound", 2, "/hop/3", HTTPError, "/hop/0", 3, "stopped after 2 redirects"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := newFetcher(t, Config{AllowNets: loopback, MaxRedirects: tc.max})
			before := s.count()
			r := fetch(t, f, s.URL+tc.path)
			if r.Status != tc.status || r.FinalURL != s.URL+tc.final || !strings.Contains(r.Reason, tc.reasonSubstr) {
				t.Fatalf("got %s final %s (%s); want %s final %s", r.Status, r.FinalURL, r.Reason, tc.status, s.URL+tc.final)
			}
			if got := s.count() - before; got != tc.requests {
				t.Errorf("%d requests, want %d", got, tc.requests)
			}
		})
	}
}

func TestFetchUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/"
	l.Close()
	f, store := newFetcher(t, Config{AllowNets: loopback})
	for _, tc := range []struct{ url, reason string }{
		{closed, "refused"},
		{"ftp://example.com/file", "not an http(s) URL"},
		{"http://user:pw@example.com/", "credentials"},
		{"see the 2019 annual report", "not an http(s) URL"},
	} {
		t.Run(tc.url, func(t *testing.T) {
			r := fetch(t, f, tc.url)
			if r.Status != Unreachable || !strings.Contains(r.Reason, tc.reason) {
				t.Fatalf("got %s %q, want unreachable with %q", r.Status, r.Reason, tc.reason)
			}
		})
	}
	if infos, _ := store.List(context.Background(), ""); len(infos) != 0 {
		t.Errorf("unreachable sources were cached: %v", infos)
	}
}

// TestFetchMaxAge refetches a cached page once it is older than MaxAge.
func TestFetchMaxAge(t *testing.T) {
	version := atomic.Int64{}
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "version %d", version.Add(1))
	})
	f, _ := newFetcher(t, Config{AllowNets: loopback, MaxAge: time.Hour})
	clock := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	f.now = func() time.Time { return clock }
	for _, step := range []struct {
		advance time.Duration
		text    string
		cached  bool
	}{
		{0, "version 1", false},
		{time.Hour, "version 1", true},
		{time.Minute, "version 2", false},
		{time.Minute, "version 2", true},
	} {
		clock = clock.Add(step.advance)
		r := fetch(t, f, s.URL+"/")
		if r.Text != step.text || r.Cached != step.cached {
			t.Fatalf("at %s: %q cached=%v, want %q cached=%v", clock.Format(time.TimeOnly), r.Text, r.Cached, step.text, step.cached)
		}
	}
}

// TestFetchFirstWriterWins keeps the cached text when another fetcher
// cached the same URL while this one fetched.
func TestFetchFirstWriterWins(t *testing.T) {
	store := blobtest.NewMemory()
	var other atomic.Pointer[Fetcher]
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		if o := other.Swap(nil); o != nil {
			// While the first fetch waits for its answer, another worker
			// fetches and caches the same page.
			if _, err := o.Fetch(r.Context(), "http://"+r.Host+"/"); err != nil {
				t.Error(err)
			}
			fmt.Fprint(w, "late text")
			return
		}
		fmt.Fprint(w, "first text")
	})
	a, err := New(store, Config{AllowNets: loopback})
	if err != nil {
		t.Fatal(err)
	}
	o, err := New(store, Config{AllowNets: loopback})
	if err != nil {
		t.Fatal(err)
	}
	other.Store(o)
	r := fetch(t, a, s.URL+"/")
	if r.Text != "first text" || !r.Cached {
		t.Fatalf("got %q cached=%v, want the other fetcher's cached %q", r.Text, r.Cached, "first text")
	}
}

func TestCanonical(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"HTTPS://Example.COM:443/a/B?q=1#frag", "https://example.com/a/B?q=1", ""},
		{"http://example.com", "http://example.com/", ""},
		{"http://example.com:8080/x", "http://example.com:8080/x", ""},
		{"http://[2001:DB8::1]:80/", "http://[2001:db8::1]/", ""},
		{"  http://example.com/p  ", "http://example.com/p", ""},
		{"mailto:a@b.c", "", "not an http(s) URL"},
		{"/relative", "", "not an http(s) URL"},
		{"http:///nohost", "", "no host"},
		{"https://u:p@example.com/", "", "credentials"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := Canonical(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Canonical(%q) = %q, %v; want an error with %q", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Canonical(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestForbidden(t *testing.T) {
	for _, tc := range []struct {
		addr string
		why  string
	}{
		{"8.8.8.8", ""},
		{"2606:4700:4700::1111", ""},
		{"127.0.0.1", "loopback"},
		{"127.255.0.9", "loopback"},
		{"::1", "loopback"},
		{"::ffff:127.0.0.1", "loopback"},
		{"10.0.0.1", "private"},
		{"172.31.255.255", "private"},
		{"172.32.0.1", ""},
		{"192.168.1.1", "private"},
		{"fd00::1", "private"},
		{"169.254.169.254", "link-local"},
		{"fe80::1", "link-local"},
		{"0.0.0.0", "unspecified"},
		{"::", "unspecified"},
		{"0.1.2.3", "this network"},
		{"100.64.0.1", "carrier-grade NAT"},
		{"224.0.0.251", "link-local"},
		{"239.1.2.3", "multicast"},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			got := Forbidden(netip.MustParseAddr(tc.addr))
			if (tc.why == "") != (got == "") || !strings.Contains(got, tc.why) {
				t.Errorf("Forbidden(%s) = %q, want %q", tc.addr, got, tc.why)
			}
		})
	}
}

func TestConfigRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"too many redirects", Config{MaxRedirects: 6}},
		{"negative redirects", Config{MaxRedirects: -1}},
		{"negative timeout", Config{Timeout: -time.Second}},
		{"negative size", Config{MaxBytes: -1}},
		{"zero prefix", Config{AllowNets: []netip.Prefix{{}}}},
		{"host with a port", Config{AllowHosts: []string{"example.com:80"}}},
		{"resolve to a name", Config{Resolve: map[string]string{"a.test": "localhost:80"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(blobtest.NewMemory(), tc.cfg); !errors.Is(err, ErrConfig) {
				t.Fatalf("New: %v, want ErrConfig", err)
			}
		})
	}
	f, err := New(blobtest.NewMemory(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	if c := f.cfg; c.Timeout != DefaultTimeout || c.MaxBytes != DefaultMaxBytes || c.MaxRedirects != 5 || c.CachePrefix != DefaultCachePrefix {
		t.Errorf("defaults = %+v", c)
	}
}
