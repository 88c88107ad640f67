// Package login signs people in to `benchline leaderboard serve` with
// OpenID Connect: the authorization code flow with PKCE, state and nonce
// checked, the ID token verified (github.com/coreos/go-oidc/v3), and the
// session kept in a signed and encrypted cookie with an expiry
// (github.com/gorilla/securecookie). Logging out is a POST carrying a
// per-session token from the /logout page, from this site's origin; it
// puts the session on a bounded revocation list. Login attempts are
// rate-limited per client.
package login

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/gorilla/securecookie"
	"golang.org/x/oauth2"
	"golang.org/x/time/rate"

	"github.com/benchline/benchline/internal/access"
	"github.com/benchline/benchline/internal/secret"
)

// Limits of a login; README.md's Limits table names each.
const (
	// MaxCookieBytes bounds the session cookie; a session that would
	// encode larger (too many groups) is refused at the callback.
	MaxCookieBytes = 4000
	// MaxGroups bounds the groups a session keeps.
	MaxGroups = 50
	// MaxRevoked bounds the revocation list of logged-out sessions.
	MaxRevoked = 10000
	// MaxClients bounds the per-client rate limiters kept at once.
	MaxClients = 10000
	// FlowTTL is how long a login may take from /login to /callback.
	FlowTTL = 10 * time.Minute
	// MaxReturnBytes bounds the return address of /login.
	MaxReturnBytes = 2048
	// DefaultSessionTTL is a session's life unless Config says otherwise.
	DefaultSessionTTL = 8 * time.Hour
	// DefaultLoginRate and DefaultLoginBurst limit login attempts
	// (/login and /callback) per client IP.
	DefaultLoginRate  = rate.Limit(1.0 / 6) // one every 6 s
	DefaultLoginBurst = 10
	// MaxLogoutBytes bounds the form a POST /logout sends.
	MaxLogoutBytes = 4 << 10
	// remoteTimeout bounds every call to the provider.
	remoteTimeout = 15 * time.Second
)

// Cookie names.
const (
	SessionCookie = "benchline_session"
	flowCookie    = "benchline_login"
)

// Config configures a Login.
type Config struct {
	Issuer       string
	ClientID     string
	ClientSecret secret.Value
	RedirectURL  string // https://host/callback
	GroupsClaim  string // default "groups"
	// CookieKey (at least 32 bytes) signs and encrypts the cookies.
	CookieKey  secret.Value
	SessionTTL time.Duration
	LoginRate  rate.Limit
	LoginBurst int
	HTTPClient *http.Client // talks to the provider; nil: a client with a deadline
	Audit      *slog.Logger
}

// Login serves /login, /callback and /logout and reads sessions.
type Login struct {
	oauth       oauth2.Config
	verifier    *oidc.IDTokenVerifier
	client      *http.Client
	cookies     *securecookie.SecureCookie
	csrfKey     []byte // keys the logout form's per-session token
	origin      string // this site's origin (of the redirect URL)
	groupsClaim string
	ttl         time.Duration
	secure      bool
	now         func() time.Time
	revoked     *revocations
	limit       *limiter
	audit       *slog.Logger
}

// New discovers the provider at cfg.Issuer and returns its Login.
func New(ctx context.Context, cfg Config) (*Login, error) {
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: remoteTimeout}
	}
	ctx, cancel := context.WithTimeout(oidc.ClientContext(ctx, client), remoteTimeout)
	defer cancel()
	p, err := oidc.NewProvider(ctx, cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("login: provider %s: %w", cfg.Issuer, err)
	}
	return newLogin(cfg, p.Endpoint(), p.Verifier(&oidc.Config{ClientID: cfg.ClientID}), client)
}

func newLogin(cfg Config, ep oauth2.Endpoint, v *oidc.IDTokenVerifier, hc *http.Client) (*Login, error) {
	if cfg.ClientID == "" || cfg.RedirectURL == "" {
		return nil, errors.New("login: a client id and a redirect URL are needed")
	}
	if len(cfg.CookieKey.Reveal()) < 32 {
		return nil, errors.New("login: the cookie key must be at least 32 bytes")
	}
	red, err := url.Parse(cfg.RedirectURL)
	if err != nil || red.Host == "" {
		return nil, fmt.Errorf("login: redirect URL %q is not an absolute URL", cfg.RedirectURL)
	}
	l := &Login{
		oauth: oauth2.Config{
			ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret.Reveal(),
			Endpoint: ep, RedirectURL: cfg.RedirectURL,
			Scopes: []string{oidc.ScopeOpenID, "profile", "email"},
		},
		verifier:    v,
		client:      hc,
		groupsClaim: cfg.GroupsClaim,
		ttl:         cfg.SessionTTL,
		secure:      red.Scheme == "https",
		origin:      red.Scheme + "://" + red.Host,
		now:         time.Now,
		revoked:     &revocations{m: map[string]time.Time{}},
		audit:       cfg.Audit,
	}
	if l.groupsClaim == "" {
		l.groupsClaim = "groups"
	}
	if l.ttl <= 0 {
		l.ttl = DefaultSessionTTL
	}
	r, b := cfg.LoginRate, cfg.LoginBurst
	if r == 0 {
		r = DefaultLoginRate
	}
	if b <= 0 {
		b = DefaultLoginBurst
	}
	l.limit = &limiter{m: map[string]*client{}, r: r, b: b}
	k := cfg.CookieKey.Reveal()
	hashKey := sha256.Sum256([]byte("benchline cookie hash\x00" + k))
	blockKey := sha256.Sum256([]byte("benchline cookie block\x00" + k))
	l.cookies = securecookie.New(hashKey[:], blockKey[:])
	csrfKey := sha256.Sum256([]byte("benchline logout token\x00" + k))
	l.csrfKey = csrfKey[:]
	l.cookies.MaxLength(MaxCookieBytes)
	l.cookies.MaxAge(int(l.ttl / time.Second))
	l.cookies.SetSerializer(securecookie.JSONEncoder{})
	return l, nil
}

// session is the content of the session cookie.
type session struct {
	ID      string   `json:"id"`
	Subject string   `json:"sub"`
	Email   string   `json:"email,omitempty"`
	Groups  []string `json:"groups,omitempty"`
	Expires int64    `json:"exp"`
}

// flow is the content of the short-lived cookie of one login.
type flow struct {
	State, Nonce, Verifier, Return string
	Expires                        int64
}

// Identify returns the identity of the request's session cookie; ok is
// false when there is none, or it is tampered with, expired or logged out.
func (l *Login) Identify(r *http.Request) (access.Identity, bool) {
	s, ok := l.session(r)
	if !ok {
		return access.Identity{}, false
	}
	return access.Identity{Subject: s.Subject, Email: s.Email, Groups: s.Groups}, true
}

func (l *Login) session(r *http.Request) (session, bool) {
	c, err := r.Cookie(SessionCookie)
	if err != nil {
		return session{}, false
	}
	var s session
	if err := l.cookies.Decode(SessionCookie, c.Value, &s); err != nil {
		return session{}, false
	}
	if l.now().Unix() >= s.Expires || l.revoked.has(s.ID, l.now()) {
		return session{}, false
	}
	return s, true
}

// ServeHTTP answers /login, /callback and /logout.
func (l *Login) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	switch r.URL.Path {
	case "/login":
		if !l.limit.allow(clientIP(r), l.now()) {
			l.tooMany(w)
			return
		}
		l.start(w, r)
	case "/callback":
		if !l.limit.allow(clientIP(r), l.now()) {
			l.tooMany(w)
			return
		}
		l.callback(w, r)
	case "/logout":
		l.logout(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (l *Login) tooMany(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "60")
	http.Error(w, "login: too many login attempts from this address; try again later", http.StatusTooManyRequests)
}

// LocalPath reports whether ret is a path of this site: it starts with
// one "/", has no scheme, host or backslash and no control character.
func LocalPath(ret string) bool {
	if ret == "" || len(ret) > MaxReturnBytes || ret[0] != '/' {
		return false
	}
	if strings.HasPrefix(ret, "//") || strings.ContainsAny(ret, "\\") {
		return false
	}
	for _, c := range ret {
		if c < 0x20 || c == 0x7f {
			return false
		}
	}
	u, err := url.Parse(ret)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return false
	}
	// A path that unescapes to // or a backslash is refused too.
	if dec, err := url.PathUnescape(u.Path); err != nil || strings.HasPrefix(dec, "//") || strings.Contains(dec, "\\") {
		return false
	}
	return true
}

func random() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("login: crypto/rand: %v", err))
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func (l *Login) start(w http.ResponseWriter, r *http.Request) {
	ret := r.URL.Query().Get("return")
	if ret == "" {
		ret = "/"
	}
	if !LocalPath(ret) {
		http.Error(w, "login: the return address must be a local path such as /board/", http.StatusBadRequest)
		return
	}
	f := flow{State: random(), Nonce: random(), Verifier: oauth2.GenerateVerifier(), Return: ret,
		Expires: l.now().Add(FlowTTL).Unix()}
	v, err := l.cookies.Encode(flowCookie, f)
	if err != nil {
		http.Error(w, "login: "+err.Error(), http.StatusInternalServerError)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: flowCookie, Value: v, Path: "/callback", MaxAge: int(FlowTTL / time.Second),
		HttpOnly: true, Secure: l.secure, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, l.oauth.AuthCodeURL(f.State, oidc.Nonce(f.Nonce), oauth2.S256ChallengeOption(f.Verifier)), http.StatusFound)
}

func (l *Login) fail(w http.ResponseWriter, r *http.Request, why string) {
	if l.audit != nil {
		l.audit.Info("leaderboard login", "remote", r.RemoteAddr, "allowed", false, "why", why)
	}
	http.Error(w, "login: "+why, http.StatusBadRequest)
}

func (l *Login) callback(w http.ResponseWriter, r *http.Request) {
	c, err := r.Cookie(flowCookie)
	var f flow
	if err != nil || l.cookies.Decode(flowCookie, c.Value, &f) != nil || l.now().Unix() >= f.Expires {
		l.fail(w, r, "no login under way (or it took too long): start again at /login")
		return
	}
	// The flow cookie is good for one callback.
	http.SetCookie(w, &http.Cookie{Name: flowCookie, Value: "", Path: "/callback", MaxAge: -1,
		HttpOnly: true, Secure: l.secure, SameSite: http.SameSiteLaxMode})
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		l.fail(w, r, "the provider refused the login: "+trim(e))
		return
	}
	if q.Get("state") == "" || q.Get("state") != f.State {
		l.fail(w, r, "state does not match the login under way")
		return
	}
	ctx, cancel := context.WithTimeout(oidc.ClientContext(r.Context(), l.client), remoteTimeout)
	defer cancel()
	tok, err := l.oauth.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(f.Verifier))
	if err != nil {
		l.fail(w, r, "the code exchange failed")
		return
	}
	raw, ok := tok.Extra("id_token").(string)
	if !ok {
		l.fail(w, r, "the provider sent no ID token")
		return
	}
	idt, err := l.verifier.Verify(ctx, raw)
	if err != nil {
		l.fail(w, r, "the ID token does not verify")
		return
	}
	if idt.Nonce != f.Nonce {
		l.fail(w, r, "nonce does not match the login under way")
		return
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		l.fail(w, r, "the ID token's claims do not parse")
		return
	}
	s := session{ID: random(), Subject: idt.Subject, Expires: l.now().Add(l.ttl).Unix()}
	if v, _ := claims["email_verified"].(bool); v {
		s.Email, _ = claims["email"].(string)
	}
	if gs, ok := claims[l.groupsClaim].([]any); ok {
		for _, g := range gs {
			if g, ok := g.(string); ok && len(s.Groups) < MaxGroups {
				s.Groups = append(s.Groups, g)
			}
		}
	}
	v, err := l.cookies.Encode(SessionCookie, s)
	if err != nil {
		l.fail(w, r, "the session does not fit in a cookie (too many groups?)")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: v, Path: "/", MaxAge: int(l.ttl / time.Second),
		HttpOnly: true, Secure: l.secure, SameSite: http.SameSiteLaxMode})
	if l.audit != nil {
		who := access.Identity{Subject: s.Subject, Email: s.Email}.Who()
		l.audit.Info("leaderboard login", "who", who, "remote", r.RemoteAddr, "allowed", true)
	}
	http.Redirect(w, r, f.Return, http.StatusFound)
}

// logout answers /logout. GET shows a page whose form button POSTs the
// session's logout token; only a POST with that token, from this site
// (no Origin, or this site's; no Sec-Fetch-Site other than same-origin),
// ends the session and clears the cookie. Anything else changes nothing:
// a page of another site can neither log a person out by sending the
// browser to /logout nor by posting a form to it.
func (l *Login) logout(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		l.logoutPage(w, r)
		return
	case http.MethodPost:
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "login: /logout is a GET (its page) or a POST (its form)", http.StatusMethodNotAllowed)
		return
	}
	if !l.sameOrigin(r) {
		http.Error(w, "login: a logout must come from this site's own page", http.StatusForbidden)
		return
	}
	s, ok := l.session(r)
	if !ok {
		// No session to end. The cookie is left alone: a cross-site
		// POST arrives without the SameSite=Lax cookie, and clearing it
		// here would log the person out.
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxLogoutBytes)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "login: the logout form does not parse", http.StatusBadRequest)
		return
	}
	got := r.PostForm.Get("token")
	if subtle.ConstantTimeCompare([]byte(got), []byte(l.logoutToken(s))) != 1 {
		http.Error(w, "login: the logout form's token is not this session's: log out from /logout", http.StatusForbidden)
		return
	}
	l.revoked.add(s.ID, time.Unix(s.Expires, 0), l.now())
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: l.secure, SameSite: http.SameSiteLaxMode})
	if l.audit != nil {
		who := access.Identity{Subject: s.Subject, Email: s.Email}.Who()
		l.audit.Info("leaderboard logout", "who", who, "remote", r.RemoteAddr)
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// sameOrigin reports whether a POST comes from this site: a browser sends
// Origin on every POST and Sec-Fetch-Site where it knows it; either naming
// another site (or "null") refuses it.
func (l *Login) sameOrigin(r *http.Request) bool {
	if sfs := r.Header.Get("Sec-Fetch-Site"); sfs != "" && sfs != "same-origin" && sfs != "none" {
		return false
	}
	if o := r.Header.Get("Origin"); o != "" && o != l.origin {
		return false
	}
	return true
}

// logoutToken is the session's logout token: an HMAC of its id, so a page
// of another site cannot know it (the id is inside the encrypted cookie).
func (l *Login) logoutToken(s session) string {
	m := hmac.New(sha256.New, l.csrfKey)
	m.Write([]byte(s.ID))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

var logoutPage = template.Must(template.New("logout").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Log out</title></head>
<body><main>
{{if .}}<h1>Log out</h1>
<form method="post" action="/logout">
<input type="hidden" name="token" value="{{.}}">
<button type="submit" id="logout">Log out</button>
</form>
{{else}}<h1>You are not logged in</h1>
{{end}}<p><a href="/">Leaderboards</a></p>
</main></body></html>
`))

// logoutPage is GET /logout: the form that logs out, for a session.
func (l *Login) logoutPage(w http.ResponseWriter, r *http.Request) {
	tok := ""
	if s, ok := l.session(r); ok {
		tok = l.logoutToken(s)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; form-action 'self'; frame-ancestors 'none'")
	w.Header().Set("X-Frame-Options", "DENY")
	if r.Method == http.MethodHead {
		return
	}
	_ = logoutPage.Execute(w, tok)
}

func trim(s string) string {
	if len(s) > 100 {
		s = s[:100]
	}
	return strings.Map(func(c rune) rune {
		if c < 0x20 || c == 0x7f {
			return -1
		}
		return c
	}, s)
}

// revocations are the logged-out sessions until they expire. At most
// MaxRevoked are kept: past that the one that expires first is dropped
// (a replay of it then works until its expiry, at most the session TTL).
type revocations struct {
	mu sync.Mutex
	m  map[string]time.Time
}

func (v *revocations) add(id string, exp, now time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.m) >= MaxRevoked {
		var first string
		for k, e := range v.m {
			if !e.After(now) {
				delete(v.m, k)
			} else if first == "" || e.Before(v.m[first]) {
				first = k
			}
		}
		if len(v.m) >= MaxRevoked {
			delete(v.m, first)
		}
	}
	v.m[id] = exp
}

func (v *revocations) has(id string, now time.Time) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	_, ok := v.m[id]
	return ok
}

// limiter holds one token bucket per client IP, at most MaxClients; past
// that the client seen least recently is dropped.
type limiter struct {
	mu sync.Mutex
	m  map[string]*client
	r  rate.Limit
	b  int
}

type client struct {
	lim  *rate.Limiter
	seen time.Time
}

func (l *limiter) allow(ip string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.m[ip]
	if !ok {
		if len(l.m) >= MaxClients {
			var old string
			for k, c := range l.m {
				if old == "" || c.seen.Before(l.m[old].seen) {
					old = k
				}
			}
			delete(l.m, old)
		}
		c = &client{lim: rate.NewLimiter(l.r, l.b)}
		l.m[ip] = c
	}
	c.seen = now
	return c.lim.AllowN(now, 1)
}

// clientIP is the request's peer address without its port. A proxy in
// front must not be shared by all clients' limits: see docs/DEPLOY.md.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
