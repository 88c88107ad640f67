package site

import (
	"fmt"
	"log/slog"
	"net/http"
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

// notFound answers as for a board that does not exist.
func notFound(w http.ResponseWriter, board string) {
	http.Error(w, fmt.Sprintf("no board %q", board), http.StatusNotFound)
}
