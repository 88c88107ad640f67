package login

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/benchline/benchline/internal/secret"
)

func testLogin(t *testing.T) *Login {
	t.Helper()
	l, err := newLogin(Config{ClientID: "benchline", RedirectURL: "http://serve.test/callback",
		CookieKey: secret.New(strings.Repeat("k", 32))},
		oauth2.Endpoint{AuthURL: "http://op.test/authorize", TokenURL: "http://op.test/token"}, nil, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func cookieOf(t *testing.T, l *Login, s session) *http.Cookie {
	t.Helper()
	v, err := l.cookies.Encode(SessionCookie, s)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Cookie{Name: SessionCookie, Value: v}
}

func TestLocalPath(t *testing.T) {
	good := []string{"/", "/demo/", "/demo/run-1.html?x=1#y", "/a%20b/"}
	bad := []string{"", "demo/", "//evil.test", "//evil.test/x", "/\\evil.test", "\\\\evil.test",
		"https://evil.test/", "http:evil.test", "javascript:alert(1)", "/%2F%2Fevil.test", "/%5Cevil.test",
		"/x\r\nLocation: //evil", "/\tevil", "///evil.test", "/" + strings.Repeat("a", MaxReturnBytes)}
	for _, s := range good {
		if !LocalPath(s) {
			t.Errorf("LocalPath(%q) = false, want true", s)
		}
	}
	for _, s := range bad {
		if LocalPath(s) {
			t.Errorf("LocalPath(%q) = true, want false", s)
		}
	}
}

// TestLoginRefusesOpenRedirect: /login with a return address off the site
// is refused, never redirected to the provider with it.
func TestLoginRefusesOpenRedirect(t *testing.T) {
	l := testLogin(t)
	for _, ret := range []string{"//evil.test", "https://evil.test", "/\\evil.test", "%2F%2Fevil.test"} {
		w := httptest.NewRecorder()
		l.ServeHTTP(w, httptest.NewRequest("GET", "/login?return="+url.QueryEscape(ret), nil))
		if w.Code != http.StatusBadRequest {
			t.Errorf("return=%q: %d, want 400", ret, w.Code)
		}
	}
	w := httptest.NewRecorder()
	l.ServeHTTP(w, httptest.NewRequest("GET", "/login?return=/demo/", nil))
	loc, _ := url.Parse(w.Header().Get("Location"))
	if w.Code != http.StatusFound || loc.Host != "op.test" || loc.Query().Get("code_challenge_method") != "S256" ||
		loc.Query().Get("nonce") == "" || loc.Query().Get("state") == "" {
		t.Fatalf("/login: %d to %s, want 302 to the provider with state, nonce and an S256 challenge", w.Code, loc)
	}
}

func TestSessionCookieAttacks(t *testing.T) {
	l := testLogin(t)
	now := time.Now()
	good := session{ID: "s1", Subject: "ann", Email: "ann@example.com", Groups: []string{"eval"}, Expires: now.Add(time.Hour).Unix()}
	read := func(c *http.Cookie) bool {
		r := httptest.NewRequest("GET", "/demo/", nil)
		r.AddCookie(c)
		_, ok := l.Identify(r)
		return ok
	}
	if c := cookieOf(t, l, good); !read(c) {
		t.Fatal("a good session is not read")
	}
	c := cookieOf(t, l, good)
	b := []byte(c.Value)
	b[len(b)/2] ^= 1
	if read(&http.Cookie{Name: SessionCookie, Value: string(b)}) {
		t.Error("a tampered cookie is read")
	}
	o, _ := newLogin(Config{ClientID: "x", RedirectURL: "http://a/callback", CookieKey: secret.New(strings.Repeat("z", 32))}, oauth2.Endpoint{}, nil, nil)
	if v, _ := o.cookies.Encode(SessionCookie, good); read(&http.Cookie{Name: SessionCookie, Value: v}) {
		t.Error("a cookie made with another key is read")
	}
	expired := good
	expired.Expires = now.Add(-time.Second).Unix()
	if read(cookieOf(t, l, expired)) {
		t.Error("an expired session is read")
	}
	// Logged out, the same cookie replayed is refused.
	c = cookieOf(t, l, good)
	w := logoutPost(l, c, "http://serve.test", url.Values{"token": {l.logoutToken(good)}})
	if w.Code != http.StatusSeeOther || !strings.Contains(w.Header().Get("Set-Cookie"), "Max-Age=0") {
		t.Errorf("logout: %d, Set-Cookie %q, want 303 clearing the cookie", w.Code, w.Header().Get("Set-Cookie"))
	}
	if read(c) {
		t.Error("a session replayed after logout is read")
	}
}

// logoutPost POSTs form to /logout with the session cookie c (if any)
// and an Origin header (if any).
func logoutPost(l *Login, c *http.Cookie, origin string, form url.Values) *httptest.ResponseRecorder {
	r := httptest.NewRequest("POST", "/logout", strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		r.Header.Set("Origin", origin)
	}
	if c != nil {
		r.AddCookie(c)
	}
	w := httptest.NewRecorder()
	l.ServeHTTP(w, r)
	return w
}

// TestLogoutCSRF: a page of another site cannot log a person out. A GET
// of /logout (a link, an image, a redirect) only shows the logout form;
// a POST without the session's token, with another session's token, from
// another origin, or without the cookie (a cross-site POST does not carry
// a SameSite=Lax cookie) ends nothing and clears no cookie. The form's
// own POST logs out.
func TestLogoutCSRF(t *testing.T) {
	l := testLogin(t)
	now := time.Now()
	ann := session{ID: "s-ann", Subject: "ann", Expires: now.Add(time.Hour).Unix()}
	bob := session{ID: "s-bob", Subject: "bob", Expires: now.Add(time.Hour).Unix()}
	c := cookieOf(t, l, ann)
	loggedIn := func() bool {
		r := httptest.NewRequest("GET", "/demo/", nil)
		r.AddCookie(c)
		_, ok := l.Identify(r)
		return ok
	}
	tok := l.logoutToken(ann)
	for _, tc := range []struct {
		name string
		do   func() *httptest.ResponseRecorder
		code int
	}{
		{"GET /logout", func() *httptest.ResponseRecorder {
			r := httptest.NewRequest("GET", "/logout", nil)
			r.AddCookie(c)
			r.Header.Set("Sec-Fetch-Site", "cross-site")
			w := httptest.NewRecorder()
			l.ServeHTTP(w, r)
			return w
		}, http.StatusOK},
		{"PUT /logout", func() *httptest.ResponseRecorder {
			r := httptest.NewRequest("PUT", "/logout", nil)
			r.AddCookie(c)
			w := httptest.NewRecorder()
			l.ServeHTTP(w, r)
			return w
		}, http.StatusMethodNotAllowed},
		{"POST without a token", func() *httptest.ResponseRecorder {
			return logoutPost(l, c, "http://serve.test", nil)
		}, http.StatusForbidden},
		{"POST with a wrong token", func() *httptest.ResponseRecorder {
			return logoutPost(l, c, "http://serve.test", url.Values{"token": {"forged"}})
		}, http.StatusForbidden},
		{"POST with another session's token", func() *httptest.ResponseRecorder {
			return logoutPost(l, c, "http://serve.test", url.Values{"token": {l.logoutToken(bob)}})
		}, http.StatusForbidden},
		{"POST from another origin", func() *httptest.ResponseRecorder {
			return logoutPost(l, c, "http://evil.test", url.Values{"token": {tok}})
		}, http.StatusForbidden},
		{"POST from a sandboxed frame", func() *httptest.ResponseRecorder {
			return logoutPost(l, c, "null", url.Values{"token": {tok}})
		}, http.StatusForbidden},
		{"POST marked cross-site", func() *httptest.ResponseRecorder {
			r := httptest.NewRequest("POST", "/logout", strings.NewReader("token="+tok))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r.Header.Set("Sec-Fetch-Site", "cross-site")
			r.AddCookie(c)
			w := httptest.NewRecorder()
			l.ServeHTTP(w, r)
			return w
		}, http.StatusForbidden},
		{"POST without the cookie", func() *httptest.ResponseRecorder {
			return logoutPost(l, nil, "http://evil.test", url.Values{"token": {tok}})
		}, http.StatusForbidden},
		{"same-origin POST without the cookie", func() *httptest.ResponseRecorder {
			return logoutPost(l, nil, "http://serve.test", url.Values{"token": {tok}})
		}, http.StatusSeeOther},
	} {
		w := tc.do()
		if w.Code != tc.code {
			t.Errorf("%s: %d %q, want %d", tc.name, w.Code, w.Body, tc.code)
		}
		if sc := w.Header().Get("Set-Cookie"); sc != "" {
			t.Errorf("%s: sets a cookie: %q", tc.name, sc)
		}
		if !loggedIn() {
			t.Fatalf("%s: logged the session out", tc.name)
		}
	}

	// The page's form carries the token; posting it logs out.
	r := httptest.NewRequest("GET", "/logout", nil)
	r.AddCookie(c)
	w := httptest.NewRecorder()
	l.ServeHTTP(w, r)
	body := w.Body.String()
	if !strings.Contains(body, `<form method="post" action="/logout">`) || !strings.Contains(body, `value="`+tok+`"`) ||
		!strings.Contains(body, `<button type="submit"`) {
		t.Fatalf("GET /logout: %q, want a form posting the session's token with a button", body)
	}
	if w = logoutPost(l, c, "http://serve.test", url.Values{"token": {tok}}); w.Code != http.StatusSeeOther ||
		!strings.Contains(w.Header().Get("Set-Cookie"), "Max-Age=0") {
		t.Errorf("the form's POST: %d, Set-Cookie %q, want 303 clearing the cookie", w.Code, w.Header().Get("Set-Cookie"))
	}
	if loggedIn() {
		t.Error("the form's POST did not log out")
	}
}

// TestCallbackWrongState: a callback whose state is not the one of the
// login under way (or without a login under way) is refused before any
// code exchange.
func TestCallbackWrongState(t *testing.T) {
	l := testLogin(t)
	exchanges := 0
	op := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		exchanges++
		http.Error(w, "no", http.StatusBadRequest)
	}))
	defer op.Close()
	l.oauth.Endpoint.TokenURL = op.URL + "/token"
	w := httptest.NewRecorder()
	l.ServeHTTP(w, httptest.NewRequest("GET", "/login?return=/demo/", nil))
	flowC := w.Result().Cookies()[0]
	for _, tc := range []struct {
		name  string
		query string
		c     *http.Cookie
	}{
		{"wrong state", "?state=forged&code=c", flowC},
		{"no state", "?code=c", flowC},
		{"no login under way", "?state=forged&code=c", nil},
	} {
		r := httptest.NewRequest("GET", "/callback"+tc.query, nil)
		if tc.c != nil {
			r.AddCookie(tc.c)
		}
		w := httptest.NewRecorder()
		l.ServeHTTP(w, r)
		if w.Code != http.StatusBadRequest || strings.Contains(w.Header().Get("Set-Cookie"), SessionCookie+"=") {
			t.Errorf("%s: %d %q, want 400 and no session", tc.name, w.Code, w.Body)
		}
	}
	if exchanges != 0 {
		t.Errorf("%d code exchanges for callbacks with a wrong state, want none", exchanges)
	}
}

// TestLoginRateLimit: 1,000 failed callbacks from one client are limited
// (429) while another client still starts a login.
func TestLoginRateLimit(t *testing.T) {
	l := testLogin(t)
	codes := map[int]int{}
	for i := 0; i < 1000; i++ {
		r := httptest.NewRequest("GET", "/callback?state=bad", nil)
		r.RemoteAddr = "192.0.2.1:4000"
		w := httptest.NewRecorder()
		l.ServeHTTP(w, r)
		codes[w.Code]++
	}
	if codes[http.StatusTooManyRequests] < 900 {
		t.Errorf("1,000 bad callbacks from one client: %v, want most 429", codes)
	}
	r := httptest.NewRequest("GET", "/login?return=/demo/", nil)
	r.RemoteAddr = "192.0.2.2:4000"
	w := httptest.NewRecorder()
	l.ServeHTTP(w, r)
	if w.Code != http.StatusFound {
		t.Errorf("another client's /login: %d, want 302", w.Code)
	}
}

func TestLimiterBounded(t *testing.T) {
	lim := &limiter{m: map[string]*client{}, r: 1, b: 1}
	now := time.Now()
	for i := 0; i < MaxClients+50; i++ {
		lim.allow(strings.Repeat("x", i%7)+string(rune('a'+i%26))+time.Duration(i).String(), now.Add(time.Duration(i)))
	}
	if len(lim.m) > MaxClients {
		t.Errorf("limiter keeps %d clients, at most %d", len(lim.m), MaxClients)
	}
}

func TestRevocationsBounded(t *testing.T) {
	v := &revocations{m: map[string]time.Time{}}
	now := time.Now()
	for i := 0; i < MaxRevoked+50; i++ {
		v.add(time.Duration(i).String(), now.Add(time.Hour+time.Duration(i)), now)
	}
	if len(v.m) > MaxRevoked {
		t.Errorf("revocation list keeps %d, at most %d", len(v.m), MaxRevoked)
	}
}
