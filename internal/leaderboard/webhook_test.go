package leaderboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/registry"
)

// TestParseBoardWebhook: a webhook is an http(s) URL with, optionally,
// the name of the environment variable holding its secret; a secret or
// credentials in the board file are refused.
func TestParseBoardWebhook(t *testing.T) {
	const head = "name: b\nbenchmarks: [{dataset: bfcl}]\nmodels: [baseline/reference]\n"
	b, err := ParseBoard("b.yaml", []byte(head+"webhook:\n  url: https://hooks.example.com/x\n  secret_env: HOOK_SECRET\n"), registry.Default())
	if err != nil || b.Webhook.URL != "https://hooks.example.com/x" || b.Webhook.SecretEnv != "HOOK_SECRET" {
		t.Fatalf("%+v %v", b.Webhook, err)
	}
	for _, tc := range []struct{ name, yaml, want string }{
		{"a secret in the file", "webhook: {url: 'https://h.example/x', secret: abc}", "secret"},
		{"credentials in the URL", "webhook: {url: 'https://u:SENTINEL@h.example/x'}", "credentials"},
		{"a token in the query string", "webhook: {url: 'https://h.example/x?token=SENTINEL'}", "url https://h.example/x: credentials, a query string"},
		{"a token in the fragment", "webhook: {url: 'https://h.example/x#SENTINEL'}", "url_env"},
		{"url and url_env", "webhook: {url: 'https://h.example/x', url_env: HOOK_URL}", "want one of them"},
		{"a bad url_env", "webhook: {url_env: 'A-B'}", "url_env"},
		{"not http", "webhook: {url: 'ftp://h.example/x'}", "http(s)"},
		{"a bad variable name", "webhook: {url: 'https://h.example/x', secret_env: 'A-B'}", "secret_env"},
		{"a secret without a URL", "webhook: {secret_env: X}", "without url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseBoard("b.yaml", []byte(head+tc.yaml+"\n"), registry.Default())
			if !errors.Is(err, ErrBadBoard) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrBadBoard naming %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "SENTINEL") {
				t.Errorf("the error shows the URL's secret: %v", err)
			}
		})
	}
	b, err = ParseBoard("b.yaml", []byte(head+"webhook: {url_env: HOOK_URL, secret_env: HOOK_SECRET}\n"), registry.Default())
	if err != nil || b.Webhook.URLEnv != "HOOK_URL" || !b.Webhook.Due() {
		t.Fatalf("url_env: %+v %v", b.Webhook, err)
	}
}

func TestRedactURL(t *testing.T) {
	for raw, want := range map[string]string{
		"https://h.example/a/b": "https://h.example/a/b",
		"https://u:SENTINEL@h.example:8443/a?token=SENTINEL#SENTINEL": "https://h.example:8443/a",
		"http://h.example?SENTINEL":                                   "http://h.example",
		"http://h.example/%2Fx?t=SENTINEL":                            "http://h.example/%2Fx",
		"SENTINEL":                                                    "(not a URL)",
		"http://[SENTINEL":                                            "(not a URL)",
	} {
		if got := RedactURL(raw); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", raw, got, want)
		}
	}
}

// hookCounter is an HTTP handler that counts its requests and answers
// them with answer.
type hookCounter struct {
	mu     sync.Mutex
	calls  int
	answer http.HandlerFunc
}

func (h *hookCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.calls++
	h.mu.Unlock()
	h.answer(w, r)
}

func (h *hookCounter) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls
}

// TestNotifyNoRedirects: a webhook that answers a redirect (307 and 308
// keep the method and the body) has failed: the second server gets
// nothing, the first one request, and the error has the status and the
// redacted URL.
func TestNotifyNoRedirects(t *testing.T) {
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect, http.StatusFound} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			elsewhere := &hookCounter{answer: func(http.ResponseWriter, *http.Request) {}}
			other := httptest.NewServer(elsewhere)
			defer other.Close()
			hook := &hookCounter{answer: func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, other.URL+"/latest/meta-data", status)
			}}
			srv := httptest.NewServer(hook)
			defer srv.Close()
			n, err := Notify(context.Background(), srv.Client(), Webhook{URL: srv.URL + "/hook"}, Changes{Board: "b", Stamp: "s"})
			if err == nil || n != 1 || hook.count() != 1 || elsewhere.count() != 0 {
				t.Fatalf("attempts %d, err %v; the hook got %d requests, the redirect's target %d", n, err, hook.count(), elsewhere.count())
			}
			for _, want := range []string{srv.URL + "/hook", fmt.Sprint(status), "redirects are not followed"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}

// TestNotifyRedacts: whatever a delivery fails on (a status, a refused
// connection, an unset url_env), its error shows the URL's
// scheme, host and path only, never the token in its query string,
// credentials or fragment.
func TestNotifyRedacts(t *testing.T) {
	defer func(b []time.Duration) { webhookBackoff = b }(webhookBackoff)
	webhookBackoff = []time.Duration{time.Millisecond}
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nope", http.StatusForbidden)
	}))
	defer failing.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close() // connections are refused
	const secret = "?token=SENTINEL#SENTINEL"
	t.Setenv("TEST_HOOK_URL", "http://user:SENTINEL@"+strings.TrimPrefix(closed.URL, "http://")+"/env-hook"+secret)
	t.Setenv("TEST_HOOK_UNSET", "")
	for _, tc := range []struct {
		name  string
		hook  Webhook
		shown string
	}{
		{"a 403", Webhook{URL: failing.URL + "/hook" + secret}, failing.URL + "/hook: 403 Forbidden"},
		{"a refused connection", Webhook{URL: closed.URL + "/hook" + secret}, closed.URL + "/hook: "},
		{"a refused connection, url_env", Webhook{URLEnv: "TEST_HOOK_URL"}, closed.URL + "/env-hook: "},
		{"url_env unset", Webhook{URLEnv: "TEST_HOOK_UNSET"}, "url_env TEST_HOOK_UNSET is not set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Notify(context.Background(), failing.Client(), tc.hook, Changes{Board: "b", Stamp: "s"})
			if err == nil || !strings.Contains(err.Error(), tc.shown) || strings.Contains(err.Error(), "SENTINEL") {
				t.Errorf("err = %v; want it to show %q and no SENTINEL", err, tc.shown)
			}
		})
	}
}

// cells are models m0… on datasets d0…, every model on every dataset.
func cells(models, datasets int) []CellRef {
	var refs []CellRef
	for d := range datasets {
		for m := range models {
			refs = append(refs, CellRef{Dataset: fmt.Sprintf("d%d", d), Model: fmt.Sprintf("baseline/m%d", m)})
		}
	}
	return refs
}

func TestChangesSummary(t *testing.T) {
	for _, tc := range []struct {
		c    Changes
		want string
	}{
		{Changes{Previous: "P", NoChange: true}, "no change since P"},
		{Changes{Moves: []Move{{}, {}}, NewModels: []CellRef{{}}}, "2 significant moves, 1 new model (first stamp)"},
		{Changes{Previous: "P", Failed: []FailedCell{{}}, NewVersions: []VersionChange{{}}, DroppedModels: []CellRef{{}}}, "1 dropped model, 1 failed cell, 1 new dataset version since P"},
		// Models are counted once whatever their benchmarks: the demo's
		// first stamp is 9 models on 2 benchmarks.
		{Changes{NewModels: cells(9, 2)}, "9 new models in 18 cells (first stamp)"},
		{Changes{Previous: "P", NewModels: cells(1, 3), DroppedModels: cells(2, 1)}, "1 new model in 3 cells, 2 dropped models since P"},
	} {
		if got := tc.c.Summary(); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
}
