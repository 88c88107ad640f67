package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/s3blob"
	"github.com/benchline/benchline/internal/childproc"
	"github.com/benchline/benchline/internal/config"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/site"
	"github.com/benchline/benchline/internal/site/sitetest"
)

// opStorage is the in-memory storage of zitadel/oidc's example OpenID
// Provider with one web client, "benchline", whose redirect URL is set once
// serve's port is known, and a groups claim in the ID token: the example's
// user "test-user@HOST" is in eval-team, "test-user2" in sales.
type opStorage struct {
	*storage.Storage
	mu       sync.Mutex
	redirect string
}

const opClientSecret = "op-client-secret"

func (s *opStorage) setRedirect(u string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.redirect = u
}

func (s *opStorage) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	if id != "benchline" {
		return nil, errors.New("client not found")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return storage.WebClient("benchline", opClientSecret, s.redirect), nil
}

func (s *opStorage) AuthorizeClientIDSecret(ctx context.Context, id, secret string) error {
	if id != "benchline" || secret != opClientSecret {
		return errors.New("invalid client")
	}
	return nil
}

func (s *opStorage) SetUserinfoFromRequest(ctx context.Context, ui *oidc.UserInfo, tok op.IDTokenRequest, scopes []string) error {
	if err := s.Storage.SetUserinfoFromRequest(ctx, ui, tok, scopes); err != nil {
		return err
	}
	ui.AppendClaims("groups", map[string][]string{"id1": {"eval-team"}, "id2": {"sales"}}[tok.GetSubject()])
	return nil
}

// syncBuffer collects a process's output while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestLoginInBrowser is issue 37's acceptance of the login, end to end:
// `benchline leaderboard serve` (the built binary, as a user starts it: a
// board file with access:, a tokens file from `leaderboard token`, OIDC
// flags) over a board stamp in the stack's MinIO, a real OpenID Provider
// (zitadel/oidc's op package with its example login UI, in this process),
// and headless chromium typing into the provider's login form:
//   - a logged-out browser asking for the board ends at the provider's login page;
//   - a user of the allowed group logs in and the board's overview is rendered;
//   - a page of another site sending the browser to /logout, or posting a
//     form to it, logs no one out;
//   - the /logout page's button logs out, and the board then sends the
//     browser to log in again;
//   - a user of another group gets exactly what a board that does not
//     exist gives (status, type and text as the browser shows them);
//   - curl with a bearer token reads scores.json; curl without one gets the
//     answer of a board that does not exist.
func TestLoginInBrowser(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()

	// The board stamp, under a prefix of its own in the stack's bucket.
	s3cfg := stack.Stack.Config.S3
	s3cfg.Prefix = fmt.Sprintf("login-browser/%d", time.Now().UnixNano())
	store, err := s3blob.New(ctx, s3cfg)
	if err != nil {
		t.Fatal(err)
	}
	scores, err := sitetest.Fixture(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	board := scores.Board
	if err := site.Write(ctx, store, scores); err != nil {
		t.Fatal(err)
	}
	if err := blob.PutJSON(ctx, store, leaderboard.ScoresKey(board, scores.Stamp), scores); err != nil {
		t.Fatal(err)
	}
	if err := blob.PutBytes(ctx, store, leaderboard.LatestKey(board), []byte(scores.Stamp)); err != nil {
		t.Fatal(err)
	}

	// The provider.
	opMux := http.NewServeMux()
	opSrv := httptest.NewServer(opMux)
	defer opSrv.Close()
	opHost := mustParse(t, opSrv.URL).Hostname()
	st := &opStorage{Storage: storage.NewStorage(storage.NewUserStore(opSrv.URL))}
	opMux.Handle("/", exampleop.SetupServer(opSrv.URL, st, nil, false))

	// The files a user gives serve.
	bin := buildBinary(t)
	dir := t.TempDir()
	out, err := exec.CommandContext(ctx, bin, "leaderboard", "token", "ci-scores").Output()
	if err != nil {
		t.Fatalf("leaderboard token: %v", err)
	}
	m := regexp.MustCompile(`(?m)^token: (\S+)\ntokens file line: (.+)$`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("leaderboard token printed %q", out)
	}
	token := m[1]
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	boardFile := write("board.yaml", "name: "+board+"\naccess:\n  groups: [eval-team]\n  tokens: [ci-scores]\n")
	tokensFile := write("tokens", m[2]+"\n")
	keyFile := write("session-key", strings.Repeat("0123456789abcdef", 3)+"\n")
	secretFile := write("client-secret", opClientSecret+"\n")

	base, logs := startServe(t, ctx, bin, s3cfg.Prefix, st, "--board", boardFile, "--tokens", tokensFile,
		"--oidc-issuer", opSrv.URL, "--oidc-client-id", "benchline", "--oidc-client-secret-file", secretFile,
		"--session-key-file", keyFile)
	defer func() {
		if t.Failed() {
			t.Logf("serve's log:\n%s", lastLines(logs.String(), 60))
		}
	}()
	boardURL := base + "/" + board + "/"
	loginPage := opSrv.URL + "/login/username"

	b := sitetest.NewBrowser(t)
	bctx := b.Context()
	// open navigates (or runs an action that navigates) and returns the
	// final response of the page and where the browser ended.
	open := func(what string, action chromedp.Action[chromedp.Void]) (*network.Response, string) {
		t.Helper()
		c, cancel := context.WithTimeout(bctx, 2*time.Minute)
		defer cancel()
		resp, err := chromedp.RunResponse(c, action)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		loc, err := chromedp.Run(c, chromedp.Location())
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return resp, loc
	}
	text := func() string {
		var s string
		b.Eval(t, `document.body.innerText`, &s)
		return s
	}
	logIn := func(user string) (*network.Response, string) {
		t.Helper()
		b.Run(t, "type "+user+" into the provider's form", chromedp.WaitVisible(chromedp.CSS("#username")),
			chromedp.SendKeys(chromedp.CSS("#username"), user), chromedp.SendKeys(chromedp.CSS("#password"), "verysecure"))
		return open("submit the provider's form as "+user, chromedp.Click(chromedp.CSS(`form button[type="submit"]`)))
	}
	atLogin := func(what, loc string) {
		t.Helper()
		if !strings.HasPrefix(loc, loginPage+"?") || mustParse(t, loc).Query().Get("authRequestID") == "" {
			t.Fatalf("%s: the browser ends at %s, want the provider's login page %s", what, loc, loginPage)
		}
	}

	// Logged out, the board sends the browser to the provider's login.
	_, loc := open("open the board logged out", chromedp.Navigate(boardURL))
	atLogin("a logged-out browser opening the board", loc)

	// The allowed group's user logs in and sees the board.
	resp, loc := logIn("test-user@" + opHost)
	if resp.Status != http.StatusOK || loc != boardURL {
		t.Fatalf("eval-team's user logged in: %d at %s, want 200 at %s", resp.Status, loc, boardURL)
	}
	b.Run(t, "the overview", chromedp.WaitVisible(chromedp.CSS("#overview")))
	var models []string
	b.Eval(t, `[...document.querySelectorAll("#overview tbody tr")].map(r => r.dataset.model)`, &models)
	var want []string
	for _, md := range sitetest.Models {
		want = append(want, md.Model)
	}
	sort.Strings(models)
	sort.Strings(want)
	if strings.Join(models, ",") != strings.Join(want, ",") {
		t.Errorf("the logged-in overview's rows are %v, want %v", models, want)
	}
	b.Shot(t, "login-01-board")

	// Another site (localhost is another site than 127.0.0.1) sends the
	// browser to /logout, then posts a form to it: neither logs out.
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/get":
			fmt.Fprintf(w, `<!doctype html><body><script>location = %q</script></body>`, base+"/logout")
		case "/post":
			fmt.Fprintf(w, `<!doctype html><body><form id="f" method="post" action="%s/logout">`+
				`<input name="token" value="guess"></form><script>document.getElementById("f").submit()</script></body>`, base)
		}
	}))
	defer attacker.Close()
	attackerURL := strings.Replace(attacker.URL, "127.0.0.1", "localhost", 1)
	// Each page navigates again by script: wait until the browser is on
	// serve's /logout and reads what it shows.
	onLogout := fmt.Sprintf(`location.href === %q && document.readyState === "complete"`, base+"/logout")
	open("a cross-site page sending the browser to /logout", chromedp.Navigate(attackerURL+"/get"))
	b.WaitJS(t, "the cross-site redirect to /logout", onLogout)
	var buttons int
	b.Eval(t, `document.querySelectorAll('form[method="post"][action="/logout"] button').length`, &buttons)
	if buttons != 1 {
		t.Errorf("a cross-site redirect to /logout shows %q, want the page with the Log out button", text())
	}
	open("a cross-site page posting to /logout", chromedp.Navigate(attackerURL+"/post"))
	b.WaitJS(t, "the cross-site POST to /logout", onLogout)
	if got := text(); !strings.Contains(got, "a logout must come from this site's own page") {
		t.Errorf("a cross-site POST to /logout shows %q, want the refusal", got)
	}
	resp, loc = open("the board after the cross-site pages", chromedp.Navigate(boardURL))
	if resp.Status != http.StatusOK || loc != boardURL {
		t.Fatalf("after a cross-site GET and POST of /logout, the board answers %d at %s: they logged the user out", resp.Status, loc)
	}

	// The board list names the user and links the /logout page, whose
	// button logs out; the board then sends the browser to log in again.
	open("the board list", chromedp.Navigate(base+"/"))
	if got, want := text(), "Logged in as id1 · Log out"; !strings.Contains(got, want) {
		t.Errorf("the board list shows %q, want %q", got, want)
	}
	open("the Log out link", chromedp.Click(chromedp.CSS(`#session a[href="/logout"]`)))
	resp, loc = open("press Log out", chromedp.Click(chromedp.CSS(`form[action="/logout"] button`)))
	if resp.Status != http.StatusOK || loc != base+"/" {
		t.Errorf("Log out: %d at %s, want the board list (200 at %s/)", resp.Status, loc, base)
	}
	_, loc = open("open the board after logging out", chromedp.Navigate(boardURL))
	atLogin("the board after logging out", loc)

	// Another group's user gets what a board that does not exist gives.
	resp, loc = logIn("test-user2")
	if loc != boardURL {
		t.Fatalf("sales' user logged in: ends at %s, want %s", loc, boardURL)
	}
	gotStatus, gotType, gotText := resp.Status, resp.Headers["Content-Type"], text()
	b.Shot(t, "login-02-other-group")
	resp, _ = open("a board that does not exist", chromedp.Navigate(base+"/nosuch/"))
	wantText := strings.ReplaceAll(text(), `"nosuch"`, `"`+board+`"`)
	if resp.Status != http.StatusNotFound || gotStatus != resp.Status || gotType != resp.Headers["Content-Type"] || gotText != wantText {
		t.Errorf("sales' user reading %s: %d %v %q; a board that does not exist: %d %v %q (name replaced), want the same 404",
			board, gotStatus, gotType, gotText, resp.Status, resp.Headers["Content-Type"], wantText)
	}

	// curl: the bearer token reads scores.json; no token reads nothing.
	curl := func(target string, header ...string) (int, string) {
		t.Helper()
		args := []string{"-sS", "--max-time", "60", "-w", "\n%{http_code}"}
		for _, h := range header {
			args = append(args, "-H", h)
		}
		out, err := exec.CommandContext(ctx, "curl", append(args, target)...).Output()
		if err != nil {
			t.Fatalf("curl %s: %v", target, err)
		}
		i := bytes.LastIndexByte(out, '\n')
		status, err := strconv.Atoi(string(out[i+1:]))
		if err != nil {
			t.Fatalf("curl %s: no status in %q", target, out)
		}
		return status, string(out[:i])
	}
	code, body := curl(boardURL+"scores.json", "Authorization: Bearer "+token)
	var doc site.ScoresDoc
	if err := json.Unmarshal([]byte(body), &doc); code != http.StatusOK || err != nil || doc.Board != board || len(doc.Cells) == 0 {
		t.Errorf("curl with the token: %d %.200q (%v), want 200 and the board's scores", code, body, err)
	}
	code, body = curl(boardURL + "scores.json")
	nosuchCode, nosuchBody := curl(base + "/nosuch/scores.json")
	if code != http.StatusNotFound || code != nosuchCode || body != strings.ReplaceAll(nosuchBody, `"nosuch"`, `"`+board+`"`) {
		t.Errorf("curl without a token: %d %q; a board that does not exist: %d %q, want the same 404", code, body, nosuchCode, nosuchBody)
	}
}

// startServe starts `benchline leaderboard serve` on a free port of
// 127.0.0.1 with args and the OIDC redirect URL of that port (set in st),
// and returns its base URL once it answers. A port taken between choosing
// it and serve binding it is tried again with another.
func startServe(t *testing.T, ctx context.Context, bin, prefix string, st *opStorage, args ...string) (string, *syncBuffer) {
	t.Helper()
	cfg := stack.Stack.Config
	env := append(os.Environ(), "TEMPORAL_ADDRESS="+cfg.Temporal.Address,
		"BENCHLINE_S3_ENDPOINT="+cfg.S3.Endpoint, "BENCHLINE_S3_BUCKET="+cfg.S3.Bucket, "BENCHLINE_S3_PREFIX="+prefix,
		"AWS_ACCESS_KEY_ID="+config.DevAccessKey, "AWS_SECRET_ACCESS_KEY="+config.DevSecretKey, "AWS_REGION=us-east-1")
	for attempt := 1; ; attempt++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		base := "http://" + addr
		st.setRedirect(base + "/callback")
		logs := &syncBuffer{}
		cmd := exec.Command(bin, append([]string{"leaderboard", "serve", "--addr", addr, "--oidc-redirect-url", base + "/callback"}, args...)...)
		cmd.Env = env
		cmd.Stdout, cmd.Stderr = logs, logs
		p, err := childproc.Start(cmd)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Kill)
		client := &http.Client{Timeout: 10 * time.Second}
		deadline := time.Now().Add(2 * time.Minute)
		for {
			if resp, err := client.Get(base + "/"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return base, logs
				}
			}
			if p.Exited() || time.Now().After(deadline) || ctx.Err() != nil {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		p.Kill()
		if attempt == 3 || !strings.Contains(logs.String(), "address already in use") {
			t.Fatalf("leaderboard serve did not answer on %s:\n%s", addr, lastLines(logs.String(), 40))
		}
	}
}

func mustParse(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
