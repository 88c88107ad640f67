package activities

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/registry"
)

// hookServer is a local HTTP server standing for a board's webhook: it
// records every POST and answers the first fail 503s.
type hookServer struct {
	mu     sync.Mutex
	bodies []leaderboard.Changes
	fail   int
	calls  int
}

func (h *hookServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls++
	if h.calls <= h.fail {
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	b, _ := io.ReadAll(r.Body)
	var ch leaderboard.Changes
	if err := json.Unmarshal(b, &ch); err != nil || r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	m := hmac.New(sha256.New, []byte("s3cret"))
	m.Write(b)
	if r.Header.Get("X-Benchline-Signature") != "sha256="+hex.EncodeToString(m.Sum(nil)) {
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	h.bodies = append(h.bodies, ch)
}

// TestWriteBoardChanges refreshes a board three times: the first stamp
// lists every model as new; the second, with the same runs, says "no
// change" and posts nothing; the third, where one model's run changed
// (its replies now fail 10 of 12 samples), lists a significant move and
// the webhook receives exactly one POST (after a 503), signed with the
// secret from the environment.
func TestWriteBoardChanges(t *testing.T) {
	t.Setenv("TEST_HOOK_SECRET", "s3cret")
	ctx := context.Background()
	store := blobtest.NewMemory()
	hook := &hookServer{fail: 1}
	srv := httptest.NewServer(hook)
	defer srv.Close()
	ones := []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}
	boardRun(t, store, "r1", "baseline/reference", ones)
	boardRun(t, store, "r2", "baseline/noisy-0.3", ones)
	boardRun(t, store, "r2b", "baseline/noisy-0.3", []float64{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1})
	a := &Leaderboard{Store: store, Benchmarks: registry.Default(), HTTP: srv.Client()}
	in := boardInput()
	in.Board.Webhook = leaderboard.Webhook{URL: srv.URL + "/hook", SecretEnv: "TEST_HOOK_SECRET"}
	in.Cells = in.Cells[:2]

	stamps := []string{"20260102T030405Z", "20260103T030405Z", "20260104T030405Z"}
	var got []WriteBoardResult
	for i, stamp := range stamps {
		in.Stamp = stamp
		if i == 2 {
			in.Cells[1].RunID = "r2b"
		}
		res, err := a.WriteBoard(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, res)
	}
	if got[0].Changes != "2 new models (first stamp)" || got[1].Changes != "no change since 20260102T030405Z" ||
		got[2].Changes != "1 significant move since 20260103T030405Z" {
		t.Errorf("changes lines: %q, %q, %q", got[0].Changes, got[1].Changes, got[2].Changes)
	}
	if l := got[2].ChangeList; len(l) != 1 || l[0].Kind != leaderboard.KindSignificantChange || l[0].Model != "baseline/noisy-0.3" ||
		len(got[1].ChangeList) != 0 || len(got[0].ChangeList) != 2 || got[0].ChangeList[0].Kind != leaderboard.KindNewModel {
		t.Errorf("change lists: %+v, %+v, %+v", got[0].ChangeList, got[1].ChangeList, got[2].ChangeList)
	}
	var ch leaderboard.Changes
	if err := blob.GetJSON(ctx, store, leaderboard.ChangesKey("b", stamps[2]), &ch); err != nil {
		t.Fatal(err)
	}
	if len(ch.Moves) != 1 || ch.NoChange || ch.Previous != stamps[1] {
		t.Fatalf("changes.json: %+v", ch)
	}
	m := ch.Moves[0]
	if m.Model != "baseline/noisy-0.3" || m.RunFrom != "r2" || m.RunTo != "r2b" || m.N != 12 || m.Method != "mcnemar" ||
		m.Diff >= 0 || m.PAdjusted >= leaderboard.Alpha || m.From != 1 {
		t.Errorf("move: %+v", m)
	}
	var quiet leaderboard.Changes
	if err := blob.GetJSON(ctx, store, leaderboard.ChangesKey("b", stamps[1]), &quiet); err != nil || !quiet.NoChange || len(quiet.Moves) != 0 {
		t.Errorf("second stamp: %+v, %v", quiet, err)
	}
	// The overview says so, and links the site's copy of changes.json.
	for i, want := range []string{"no change since 20260102T030405Z", "1 significant move since 20260103T030405Z"} {
		page, err := blob.GetBytes(ctx, store, leaderboard.SiteKey("b", stamps[i+1])+"/index.html")
		if err != nil || !strings.Contains(string(page), want) {
			t.Errorf("index.html of %s does not say %q (%v)", stamps[i+1], want, err)
		}
	}
	if _, err := blob.GetBytes(ctx, store, leaderboard.SiteKey("b", stamps[2])+"/changes.json"); err != nil {
		t.Errorf("site copy of changes.json: %v", err)
	}
	// One delivered POST per stamp with changes: the first (every model
	// new) and the third; the quiet second posted nothing.
	if len(hook.bodies) != 2 || hook.bodies[1].Stamp != stamps[2] || len(hook.bodies[1].Moves) != 1 || hook.calls != 3 {
		t.Errorf("webhook: %d calls, bodies %+v", hook.calls, hook.bodies)
	}
	if got[1].Webhook != "" || !strings.HasPrefix(got[2].Webhook, "delivered") || got[0].Webhook != "delivered (attempt 2)" {
		t.Errorf("webhook results: %q, %q, %q", got[0].Webhook, got[1].Webhook, got[2].Webhook)
	}
}

// TestNotifyBounded: a webhook that keeps failing gets WebhookAttempts
// POSTs and the refresh reports it; a 4xx is not retried.
func TestNotifyBounded(t *testing.T) {
	for _, tc := range []struct {
		status, calls int
	}{{http.StatusInternalServerError, leaderboard.WebhookAttempts}, {http.StatusBadRequest, 1}} {
		var mu sync.Mutex
		calls := 0
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			calls++
			mu.Unlock()
			w.WriteHeader(tc.status)
		}))
		a := &Leaderboard{HTTP: srv.Client()}
		msg := a.notify(context.Background(), leaderboard.Webhook{URL: srv.URL}, leaderboard.Changes{Board: "b", Stamp: "s"})
		srv.Close()
		if calls != tc.calls || !strings.HasPrefix(msg, "not delivered") {
			t.Errorf("status %d: %d calls, %q", tc.status, calls, msg)
		}
	}
}
