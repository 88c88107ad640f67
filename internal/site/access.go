package site

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/benchline/benchline/internal/access"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/secret"
)

// Gate decides which boards a request may read (Guarded).
type Gate struct {
	// Policies are the boards' access: keys by board name. A board
	// without one is private: no one reads it.
	Policies map[string]access.Policy
	// Tokens are the machines' bearer tokens (a tokens file of hashes).
	Tokens *access.Tokens
	// AllowAnonymous lets a board whose policy says anonymous: true be
	// read by anyone; without it anonymous: true grants nothing.
	AllowAnonymous bool
	// Audit receives one JSON line per request that reads a board:
	// who, board, route, allowed.
	Audit *slog.Logger
	// Sessions, when set, reads a person's login session (an OIDC
	// login's cookie); a logged-out browser asking for a board's HTML
	// page is then sent to /login (API routes answer as a missing board).
	Sessions Sessions
}

// Sessions reads the identity of a request's login session; ok is false
// when there is no valid session.
type Sessions interface {
	Identify(r *http.Request) (access.Identity, bool)
}

// Guarded is Handler with every route of a board behind gate: GET / lists
// only the boards the caller may read, and a board the caller may not read
// answers exactly as one that does not exist (404, the same body). A
// request with an Authorization header that is not a known bearer token is
// answered 401 whatever its path.
func Guarded(store blob.Store, gate *Gate) http.Handler {
	h := Handler(store).(*handler)
	h.gate = gate
	return h
}

// errBadToken is answered to a bearer token the tokens file does not hold.
const errBadToken = "site: unknown bearer token"

// identify reads the request's bearer token; ok is false when an
// Authorization header is present but names no known token.
func (g *Gate) identify(r *http.Request) (access.Identity, bool) {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		if g.Sessions != nil {
			if id, ok := g.Sessions.Identify(r); ok {
				return id, true
			}
		}
		return access.Identity{}, true
	}
	scheme, tok, found := strings.Cut(auth, " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return access.Identity{}, false
	}
	name, ok := g.Tokens.Lookup(secret.New(strings.TrimSpace(tok)))
	if !ok {
		return access.Identity{}, false
	}
	return access.Identity{Token: name}, true
}

// allows reports whether id may read board.
func (g *Gate) allows(id access.Identity, board string) bool {
	p, ok := g.Policies[board]
	return ok && p.Allows(id, g.AllowAnonymous)
}

// audit writes the audit line of one board request.
func (g *Gate) audit(r *http.Request, id access.Identity, board, route string, allowed bool) {
	if g.Audit == nil {
		return
	}
	g.Audit.Info("leaderboard access", "who", id.Who(), "board", board, "route", route,
		"method", r.Method, "remote", r.RemoteAddr, "allowed", allowed)
}

// toLogin sends a logged-out browser asking for an HTML page of a board it
// may not read to /login, and reports whether it did. Anything else (a
// logged-in person, a token, an API route, a non-browser) is left to
// answer as a missing board.
func (g *Gate) toLogin(w http.ResponseWriter, r *http.Request, id access.Identity, rest string) bool {
	if g.Sessions == nil || id.Token != "" || id.Subject != "" || r.Method != http.MethodGet {
		return false
	}
	if !strings.Contains(r.Header.Get("Accept"), "text/html") || !htmlPage(rest) {
		return false
	}
	http.Redirect(w, r, "/login?return="+url.QueryEscape(r.URL.RequestURI()), http.StatusFound)
	return true
}

// htmlPage reports whether a board's route is an HTML page (not data).
func htmlPage(rest string) bool {
	if rest == "" || strings.HasSuffix(rest, "/") {
		return true
	}
	return strings.HasSuffix(rest, ".html")
}

// notFound answers as for a board that does not exist.
func notFound(w http.ResponseWriter, board string) {
	http.Error(w, fmt.Sprintf("no board %q", board), http.StatusNotFound)
}
