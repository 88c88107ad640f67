package site

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/access"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/secret"
)

// guardedPair serves the large fixture as board "demo" and, in one store
// only, the same stamp again as board "other"; both behind one gate where
// token ci-a reads demo and token ci-b reads other. It returns the handler
// with "other" and the handler over a store without it.
func guardedPair(t *testing.T) (with, without http.Handler, s leaderboard.Scores, tokA, tokB secret.Value, audit *bytes.Buffer) {
	t.Helper()
	ctx := context.Background()
	store, s, _ := servedLarge(t)
	bare, _, _ := servedLarge(t)
	o := s
	o.Board = "other"
	if err := Write(ctx, store, o); err != nil {
		t.Fatal(err)
	}
	if err := blob.PutJSON(ctx, store, leaderboard.ScoresKey("other", o.Stamp), o); err != nil {
		t.Fatal(err)
	}
	if err := blob.PutBytes(ctx, store, leaderboard.LatestKey("other"), []byte(o.Stamp)); err != nil {
		t.Fatal(err)
	}
	tokA, lineA, err := access.NewToken("ci-a")
	if err != nil {
		t.Fatal(err)
	}
	tokB, lineB, err := access.NewToken("ci-b")
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := access.ParseTokens("tokens", []byte(lineA+"\n"+lineB+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	audit = &bytes.Buffer{}
	gate := func() *Gate {
		return &Gate{
			Policies: map[string]access.Policy{"demo": {Tokens: []string{"ci-a"}}, "other": {Tokens: []string{"ci-b"}}},
			Tokens:   tokens,
			Audit:    slog.New(slog.NewJSONHandler(audit, nil)),
		}
	}
	return Guarded(store, gate()), Guarded(bare, gate()), s, tokA, tokB, audit
}

func as(h http.Handler, tok secret.Value, target string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, target, nil)
	if !tok.IsZero() {
		r.Header.Set("Authorization", "Bearer "+tok.Reveal())
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// boardRoutes are every route of a board, the explorer API and its search included.
func boardRoutes(t *testing.T, s leaderboard.Scores, board string) []string {
	a := runOf(t, s, "bfcl", "acme/model-a")
	b := runOf(t, s, "bfcl", "baseline/noisy-0.3")
	p := "/" + board
	return []string{p, p + "/", p + "/index.html", p + "/scores.json", p + "/changes.json",
		p + "/run-" + a + ".html", p + "/downloads/cells.parquet", p + "/downloads/cells.csv",
		p + "/api/samples?run=" + a, p + "/api/samples?run=" + a + "&q=ANSWER+117+from",
		p + "/api/compare?a=" + a + "&b=" + b, p + "/api/compare?a=" + a + "&b=" + b + "&q=onerror"}
}

// TestTokenForOneBoardReadsNoOther: token A reading board B through every
// route gets, byte for byte, what it gets when board B does not exist; token
// B reads each of those routes.
func TestTokenForOneBoardReadsNoOther(t *testing.T) {
	with, without, s, tokA, tokB, _ := guardedPair(t)
	for _, target := range boardRoutes(t, s, "other") {
		got, want := as(with, tokA, target), as(without, tokA, target)
		if got.Code != want.Code || got.Body.String() != want.Body.String() || got.Code != http.StatusNotFound {
			t.Errorf("token A GET %s: %d %q, want as for no board: %d %q", target, got.Code, got.Body, want.Code, want.Body)
		}
		anon := as(with, secret.Value{}, target)
		if anon.Code != want.Code || anon.Body.String() != want.Body.String() {
			t.Errorf("anonymous GET %s: %d %q, want as for no board", target, anon.Code, anon.Body)
		}
		if ok := as(with, tokB, target); ok.Code != http.StatusOK && ok.Code != http.StatusMovedPermanently && !strings.HasSuffix(target, "changes.json") {
			t.Errorf("token B GET %s: %d %s", target, ok.Code, ok.Body)
		}
	}
	for _, target := range boardRoutes(t, s, "demo") {
		if ok := as(with, tokA, target); ok.Code >= 400 && !strings.HasSuffix(target, "changes.json") {
			t.Errorf("token A GET its own %s: %d %s", target, ok.Code, ok.Body)
		}
	}
	// GET / lists only the boards the caller may read.
	for _, tc := range []struct {
		tok        secret.Value
		demo, othr bool
	}{{tokA, true, false}, {tokB, false, true}, {secret.Value{}, false, false}} {
		body := as(with, tc.tok, "/").Body.String()
		if strings.Contains(body, `href="demo/"`) != tc.demo || strings.Contains(body, `href="other/"`) != tc.othr {
			t.Errorf("GET / lists wrong boards: %s", body)
		}
	}
}

// TestAccessPathTricks: dot segments (plain and percent-encoded), double
// slashes, encoded slashes and case around the access check never reach
// board other with demo's token.
func TestAccessPathTricks(t *testing.T) {
	with, _, _, tokA, _, _ := guardedPair(t)
	for _, target := range []string{
		"/demo/../other/scores.json", "/demo/%2e%2e/other/scores.json", "/demo/%2E%2E/other/scores.json",
		"/demo/..%2fother/scores.json", "/demo/%2e%2e%2fother%2fscores.json", "//other/scores.json",
		"/demo//other/scores.json", "/demo/./../other/scores.json", "/OTHER/scores.json", "/Other/",
		"/other%2fscores.json", "/./other/scores.json", "/demo/api/../../other/scores.json",
		"/demo/..\\other\\scores.json", "/other/./scores.json", "/other/scores.json/",
	} {
		w := as(with, tokA, target)
		if w.Code == http.StatusOK || strings.Contains(w.Body.String(), `"board": "other"`) {
			t.Errorf("GET %s with demo's token: %d %s", target, w.Code, w.Body)
		}
	}
}

// TestUnknownBearerToken: a token the file does not hold, or another
// scheme, is refused 401 on every path, a known board's included.
func TestUnknownBearerToken(t *testing.T) {
	with, _, _, _, _, _ := guardedPair(t)
	forged, _, _ := access.NewToken("ci-a")
	for _, auth := range []string{"Bearer " + forged.Reveal(), "Basic Y2ktYTp4", "Bearer", "Bearer "} {
		for _, target := range []string{"/", "/demo/scores.json", "/nope/"} {
			r := httptest.NewRequest(http.MethodGet, target, nil)
			r.Header.Set("Authorization", auth)
			w := httptest.NewRecorder()
			with.ServeHTTP(w, r)
			if w.Code != http.StatusUnauthorized {
				t.Errorf("%q GET %s: %d", auth, target, w.Code)
			}
		}
	}
}

// TestAccessAudit: one JSON line per board request, naming who, board,
// route and the verdict; GET / writes none.
func TestAccessAudit(t *testing.T) {
	with, _, _, tokA, _, audit := guardedPair(t)
	as(with, tokA, "/demo/scores.json")
	as(with, tokA, "/other/api/samples?run=x")
	as(with, secret.Value{}, "/demo/")
	as(with, tokA, "/")
	type line struct {
		Msg     string `json:"msg"`
		Who     string `json:"who"`
		Board   string `json:"board"`
		Route   string `json:"route"`
		Allowed bool   `json:"allowed"`
	}
	var got []line
	for _, l := range strings.Split(strings.TrimSpace(audit.String()), "\n") {
		var x line
		if err := json.Unmarshal([]byte(l), &x); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		got = append(got, x)
	}
	want := []line{
		{"leaderboard access", "token:ci-a", "demo", "scores.json", true},
		{"leaderboard access", "token:ci-a", "other", "api/samples", false},
		{"leaderboard access", "anonymous", "demo", "", false},
	}
	if len(got) != len(want) {
		t.Fatalf("audit lines %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("audit line %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if strings.Contains(audit.String(), tokA.Reveal()) {
		t.Error("the audit log holds the token")
	}
}

// TestAnonymousNeedsOperator: anonymous: true lets anyone read only when
// the gate allows anonymous access.
func TestAnonymousNeedsOperator(t *testing.T) {
	store, _, _ := served(t)
	for _, allow := range []bool{false, true} {
		h := Guarded(store, &Gate{Policies: map[string]access.Policy{"demo": {Anonymous: true}}, AllowAnonymous: allow})
		w := as(h, secret.Value{}, "/demo/scores.json")
		if (w.Code == http.StatusOK) != allow {
			t.Errorf("allow-anonymous %v: %d", allow, w.Code)
		}
	}
}
