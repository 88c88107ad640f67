package site

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/benchline/benchline/internal/access"
	"github.com/benchline/benchline/internal/login"
	"github.com/benchline/benchline/internal/secret"
)

// groupsStorage is zitadel's example OP storage with a groups claim in
// the ID token (set with the userinfo claims): user id1 is in eval-team, user id2 in sales.
type groupsStorage struct{ *storage.Storage }

func (s groupsStorage) SetUserinfoFromRequest(ctx context.Context, ui *oidc.UserInfo, tok op.IDTokenRequest, scopes []string) error {
	if err := s.Storage.SetUserinfoFromRequest(ctx, ui, tok, scopes); err != nil {
		return err
	}
	ui.AppendClaims("groups", map[string][]string{"id1": {"eval-team"}, "id2": {"sales"}}[tok.GetSubject()])
	return nil
}

// TestLoginThroughRealOP logs in through a real OpenID Provider
// (github.com/zitadel/oidc/v3's op package and its example login page,
// in this process): a person of the allowed group reads the board, one of
// another group gets the answer of a board that does not exist.
func TestLoginThroughRealOP(t *testing.T) {
	with, _, _, _, _, _ := guardedPair(t)
	gate := with.(*handler).gate
	gate.Policies["other"] = access.Policy{Groups: []string{"eval-team"}}

	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	var opSrv *httptest.Server
	opMux := http.NewServeMux()
	opSrv = httptest.NewServer(opMux)
	defer opSrv.Close()
	st := groupsStorage{storage.NewStorageWithClients(storage.NewUserStore(opSrv.URL),
		map[string]*storage.Client{"benchline": storage.WebClient("benchline", "op-secret", srv.URL+"/callback")})}
	opMux.Handle("/", exampleop.SetupServer(opSrv.URL, st, nil, false))

	lg, err := login.New(context.Background(), login.Config{Issuer: opSrv.URL, ClientID: "benchline",
		ClientSecret: secret.New("op-secret"), RedirectURL: srv.URL + "/callback",
		CookieKey: secret.New(strings.Repeat("k", 32))})
	if err != nil {
		t.Fatal(err)
	}
	gate.Sessions = lg
	for _, p := range []string{"/login", "/callback", "/logout"} {
		mux.Handle(p, lg)
	}
	mux.Handle("/", with)

	host, _ := url.Parse(opSrv.URL)
	for _, tc := range []struct {
		user string
		want int
	}{{"test-user@" + host.Hostname(), http.StatusOK}, {"test-user2", http.StatusNotFound}} {
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar}
		req, _ := http.NewRequest("GET", srv.URL+"/other/index.html", nil)
		req.Header.Set("Accept", "text/html")
		resp, err := c.Do(req) // to /login, the OP, and its login page
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		id := resp.Request.URL.Query().Get("authRequestID")
		if !strings.HasPrefix(resp.Request.URL.String(), opSrv.URL+"/login/username") || id == "" {
			t.Fatalf("%s: a logged-out browser ends at %s, want the OP's login page", tc.user, resp.Request.URL)
		}
		resp, err = c.PostForm(opSrv.URL+"/login/username", url.Values{"id": {id}, "username": {tc.user}, "password": {"verysecure"}})
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want || resp.Request.URL.Path != "/other/index.html" {
			t.Errorf("%s: logged in, ends at %s with %d %.200q, want %d", tc.user, resp.Request.URL, resp.StatusCode, body, tc.want)
		}
		if tc.want == http.StatusNotFound && string(body) != "no board \"other\"\n" {
			t.Errorf("%s: %q, want the answer of a missing board", tc.user, body)
		}
	}

	// Wrong nonce: the provider is asked with the login's state but
	// another nonce; the callback refuses the ID token.
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(srv.URL + "/login?return=/other/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	auth, _ := url.Parse(resp.Header.Get("Location"))
	q := auth.Query()
	q.Set("nonce", "forged-nonce")
	auth.RawQuery = q.Encode()
	c.CheckRedirect = nil
	resp, err = c.Get(auth.String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = c.PostForm(opSrv.URL+"/login/username", url.Values{"id": {resp.Request.URL.Query().Get("authRequestID")},
		"username": {"test-user@" + host.Hostname()}, "password": {"verysecure"}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "nonce does not match") {
		t.Errorf("a callback whose ID token has another nonce: %d %.200q, want 400 nonce does not match", resp.StatusCode, body)
	}
	for _, ck := range jar.Cookies(mustURL(t, srv.URL+"/")) {
		if ck.Name == login.SessionCookie {
			t.Errorf("a callback with a wrong nonce set a session cookie")
		}
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
