package site

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/access"
	"github.com/benchline/benchline/internal/secret"
)

// headerSessions reads a test identity from the X-Test-User header: it
// stands for a login's cookie, which internal/login tests on its own.
type headerSessions map[string]access.Identity

func (s headerSessions) Identify(r *http.Request) (access.Identity, bool) {
	id, ok := s[r.Header.Get("X-Test-User")]
	return id, ok
}

func TestGateSessions(t *testing.T) {
	with, without, _, _, _, _ := guardedPair(t)
	users := headerSessions{
		"ann": {Subject: "ann", Groups: []string{"eval-team"}},
		"bob": {Subject: "bob", Groups: []string{"sales"}},
	}
	for _, h := range []http.Handler{with, without} {
		g := h.(*handler).gate
		g.Sessions = users
		g.Policies["other"] = access.Policy{Groups: []string{"eval-team"}}
	}
	get := func(h http.Handler, user, accept, target string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, target, nil)
		if user != "" {
			r.Header.Set("X-Test-User", user)
		}
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	html := "text/html,application/xhtml+xml"
	if w := get(with, "ann", html, "/other/scores.json"); w.Code != http.StatusOK {
		t.Errorf("ann (eval-team) reading other: %d, want 200", w.Code)
	}
	for _, target := range []string{"/other/", "/other/scores.json", "/other/index.html"} {
		a, b := get(with, "bob", html, target), get(without, "bob", html, target)
		if a.Code != http.StatusNotFound || a.Code != b.Code || a.Body.String() != b.Body.String() {
			t.Errorf("bob (sales) %s: %d %q; a missing board: %d %q", target, a.Code, a.Body, b.Code, b.Body)
		}
	}
	w := get(with, "", html, "/other/index.html?x=1")
	if w.Code != http.StatusFound || w.Header().Get("Location") != "/login?return=%2Fother%2Findex.html%3Fx%3D1" {
		t.Errorf("logged-out browser: %d to %q, want 302 to /login with the page", w.Code, w.Header().Get("Location"))
	}
	for _, tc := range []struct{ accept, target string }{{html, "/other/scores.json"}, {"", "/other/"}, {"application/json", "/other/api/samples?run=x"}} {
		a, b := get(with, "", tc.accept, tc.target), get(without, "", tc.accept, tc.target)
		if a.Code != http.StatusNotFound || a.Body.String() != b.Body.String() {
			t.Errorf("logged out %s (Accept %q): %d %q, want as a missing board %d %q", tc.target, tc.accept, a.Code, a.Body, b.Code, b.Body)
		}
	}
}

// TestBoardListSession: GET / shows a logged-in person who they are and a
// link to the /logout page (whose button logs out); a token or an
// anonymous caller sees no such line.
func TestBoardListSession(t *testing.T) {
	with, _, _, tokA, _, _ := guardedPair(t)
	g := with.(*handler).gate
	g.Sessions = headerSessions{"ann": {Subject: "ann", Email: "ann@example.com", Groups: []string{"eval-team"}}}
	g.Policies["other"] = access.Policy{Groups: []string{"eval-team"}}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("X-Test-User", "ann")
	w := httptest.NewRecorder()
	with.ServeHTTP(w, r)
	if body := w.Body.String(); w.Code != http.StatusOK || !strings.Contains(body, `<p id="session">Logged in as ann@example.com · <a href="/logout">Log out</a></p>`) ||
		!strings.Contains(body, `<a href="other/">other</a>`) {
		t.Errorf("GET / logged in: %d %q, want the boards and a Log out link", w.Code, body)
	}
	for name, w := range map[string]*httptest.ResponseRecorder{"anonymous": as(with, secret.Value{}, "/"), "token": as(with, tokA, "/")} {
		if strings.Contains(w.Body.String(), "/logout") {
			t.Errorf("GET / as %s: %q, want no logout link", name, w.Body)
		}
	}
}
