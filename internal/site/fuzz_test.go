package site

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/leaderboard"
)

// recording is a store that remembers the keys read.
type recording struct {
	blob.Store
	mu   sync.Mutex
	keys []string
}

func (r *recording) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	r.mu.Lock()
	r.keys = append(r.keys, key)
	r.mu.Unlock()
	return r.Store.Get(ctx, key)
}

func (r *recording) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := r.keys
	r.keys = nil
	return k
}

// FuzzHandlerPath serves arbitrary (decoded) paths: the handler never
// panics and reads only a board's latest pointer, the latest stamp's
// scores.json, or a clean key inside the latest stamp's site.
func FuzzHandlerPath(f *testing.F) {
	store, s, _ := served(f)
	rec := &recording{Store: store}
	h := Handler(rec)
	for _, p := range []string{"/", "/demo/", "/demo/scores.json", "/demo/../latest", "/demo/plots/../../scores.json",
		"/demo/%2e%2e/x", "/demo//x", "/demo/./index.html", `/demo/a\..\b`, "/demo/data/run-x/p0001.js", "/unfinished/", "/..", "/demo/\x00"} {
		f.Add(p)
	}
	site := leaderboard.SiteKey(s.Board, s.Stamp) + "/"
	f.Fuzz(func(t *testing.T, p string) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.URL.Path = "/" + strings.TrimPrefix(p, "/")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		for _, k := range rec.take() {
			switch {
			case strings.HasPrefix(k, "leaderboards/") && strings.HasSuffix(k, "/latest") && boardName.MatchString(strings.TrimSuffix(strings.TrimPrefix(k, "leaderboards/"), "/latest")):
			case k == leaderboard.ScoresKey(s.Board, s.Stamp):
			case strings.HasPrefix(k, site) && cleanPath(strings.TrimPrefix(k, site)):
			default:
				t.Fatalf("GET %q read %q", r.URL.Path, k)
			}
		}
		if w.Code == http.StatusOK && strings.Contains(r.URL.Path, "..") && !strings.Contains(r.URL.Path, "...") {
			t.Fatalf("GET %q answered 200", r.URL.Path)
		}
	})
}
