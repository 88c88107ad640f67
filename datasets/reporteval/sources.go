package reporteval

import (
	"io/fs"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// SourcesHost is the host of the URLs the fixture reports cite,
// http://sources.benchline.test/<slug>/<n>. It is under .test, a top-level
// domain reserved for testing (RFC 2606), so it never resolves on the
// internet: tests and the demo serve it with SourcesHandler.
const SourcesHost = "sources.benchline.test"

// sourcePath is the path of a fixture source: /<slug>/<n>.
var sourcePath = regexp.MustCompile(`^/([a-z0-9]+(?:-[a-z0-9]+)*)/([1-9][0-9]*)$`)

// SourcesHandler serves the pages the fixture reports cite: GET or HEAD
// http://sources.benchline.test/<slug>/<n> answers
// fixtures/sources/<slug>/<n>.md as text/markdown. Any other path, and a
// request for another host, is 404.
//
// To point a fetcher at it, serve it on a local listener and map the host
// to that listener's address, allowing the host (the address is loopback):
//
//	srv := httptest.NewServer(reporteval.SourcesHandler())
//	f, err := webfetch.New(store, webfetch.Config{
//		Resolve:    map[string]string{reporteval.SourcesHost: srv.Listener.Addr().String()},
//		AllowHosts: []string{reporteval.SourcesHost},
//	})
//
// The cited URLs, the Host header and the cache keys stay those of
// sources.benchline.test.
func SourcesHandler() http.Handler {
	sources, err := fs.Sub(fixtures, "fixtures/sources")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		m := sourcePath.FindStringSubmatch(r.URL.Path)
		if !strings.EqualFold(host, SourcesHost) || m == nil {
			http.NotFound(w, r)
			return
		}
		b, err := fs.ReadFile(sources, m[1]+"/"+m[2]+".md")
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		if r.Method == http.MethodGet {
			w.Write(b)
		}
	})
}
