package site

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/leaderboard"
)

// served writes the fixture's site, its scores.json and latest pointer (as
// the refresh workflow does, pointer last), plus a board with stamps but no
// pointer, and returns the handler.
func served(t testing.TB) (*blobtest.Memory, leaderboard.Scores, http.Handler) {
	t.Helper()
	store, s := written(t)
	ctx := context.Background()
	if err := blob.PutJSON(ctx, store, leaderboard.ScoresKey(s.Board, s.Stamp), s); err != nil {
		t.Fatal(err)
	}
	if err := blob.PutBytes(ctx, store, leaderboard.LatestKey(s.Board), []byte(s.Stamp+"\n")); err != nil {
		t.Fatal(err)
	}
	if err := blob.PutJSON(ctx, store, leaderboard.ScoresKey("unfinished", s.Stamp), s); err != nil {
		t.Fatal(err)
	}
	return store, s, Handler(store)
}

func get(t testing.TB, h http.Handler, method, path string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, "/", nil)
	r.URL.Path = path // as the server decodes it, "..", "%2e%2e" and all
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestScoresJSONContract checks GET /<board>/scores.json field by field:
// exactly board, stamp and cells, each cell exactly the nine contract
// fields with the Scores' values.
func TestScoresJSONContract(t *testing.T) {
	_, s, h := served(t)
	w := get(t, h, http.MethodGet, "/demo/scores.json")
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("GET /demo/scores.json: %d %q", w.Code, w.Header().Get("Content-Type"))
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if got := keys(doc); !reflect.DeepEqual(got, []string{"board", "cells", "stamp"}) {
		t.Fatalf("scores.json keys %v", got)
	}
	var board, stamp string
	_ = json.Unmarshal(doc["board"], &board)
	_ = json.Unmarshal(doc["stamp"], &stamp)
	if board != s.Board || stamp != s.Stamp {
		t.Errorf("board %q stamp %q, want %q %q", board, stamp, s.Board, s.Stamp)
	}
	var cells []map[string]any
	if err := json.Unmarshal(doc["cells"], &cells); err != nil {
		t.Fatal(err)
	}
	if len(cells) != len(s.Cells) {
		t.Fatalf("%d cells, want %d", len(cells), len(s.Cells))
	}
	want := []string{"ci_high", "ci_low", "dataset", "mean", "metric", "model", "n", "run_id", "version"}
	for i, c := range cells {
		if got := keys(c); !reflect.DeepEqual(got, want) {
			t.Fatalf("cell %d keys %v, want %v", i, got, want)
		}
		e := s.Cells[i]
		if c["dataset"] != e.Dataset || c["version"] != e.Version || c["model"] != e.Model || c["metric"] != e.Metric ||
			c["mean"] != e.Mean || c["ci_low"] != e.CILow || c["ci_high"] != e.CIHigh || c["n"] != float64(e.N) || c["run_id"] != e.RunID {
			t.Errorf("cell %d = %v, want %+v", i, c, e)
		}
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestHandlerRoutes(t *testing.T) {
	_, s, h := served(t)
	a := runOf(t, s, "bfcl", "acme/model-a")
	for _, tc := range []struct {
		method, path string
		code         int
		ctype        string
		body         string
	}{
		{"GET", "/", 200, "text/html; charset=utf-8", `<a href="demo/">demo</a>`},
		{"GET", "/demo/", 200, "text/html; charset=utf-8", `<table id="overview" class="sortable">`},
		{"HEAD", "/demo/", 200, "text/html; charset=utf-8", ""},
		{"GET", "/demo/index.html", 200, "text/html; charset=utf-8", `<table id="overview"`},
		{"GET", "/demo/bench-bfcl.html", 200, "text/html; charset=utf-8", `<table id="bench"`},
		{"GET", "/demo/run-" + a + ".html", 200, "text/html; charset=utf-8", a},
		{"GET", "/demo/assets/site.css", 200, "text/css; charset=utf-8", "font"},
		{"GET", "/demo/assets/site.js", 200, "text/javascript; charset=utf-8", "benchline"},
		{"GET", "/demo/plots/scores-bfcl.svg", 200, "image/svg+xml", "<svg"},
		{"GET", "/demo/downloads/cells.csv", 200, "text/csv; charset=utf-8", "dataset,version,model"},
		{"GET", "/demo/downloads/cells.parquet", 200, "application/vnd.apache.parquet", "PAR1"},
		{"GET", "/demo/data/run-" + a + "/p0001.js", 200, "text/javascript; charset=utf-8", "benchline.page("},
		{"GET", "/demo", 301, "", ""},
		{"GET", "/nope/", 404, "", `no board "nope"`},
		{"GET", "/nope/scores.json", 404, "", ""},
		{"GET", "/unfinished/", 404, "", ""}, // stamps but no latest pointer
		{"GET", "/demo/missing.html", 404, "", ""},
		{"GET", "/demo/../latest", 404, "", ""},
		{"GET", "/demo/plots/../../scores.json", 404, "", ""},
		{"GET", "/demo/./index.html", 404, "", ""},
		{"GET", "/demo//index.html", 404, "", ""},
		{"GET", `/demo/..\scores.json`, 404, "", ""},
		{"GET", "/../leaderboards/demo/latest", 404, "", ""},
		{"GET", "/demo/data/", 404, "", ""},
		{"POST", "/demo/", 405, "", ""},
	} {
		w := get(t, h, tc.method, tc.path)
		if w.Code != tc.code {
			t.Errorf("%s %s: %d, want %d (%s)", tc.method, tc.path, w.Code, tc.code, strings.TrimSpace(w.Body.String()))
			continue
		}
		if tc.ctype != "" && w.Header().Get("Content-Type") != tc.ctype {
			t.Errorf("%s %s: Content-Type %q, want %q", tc.method, tc.path, w.Header().Get("Content-Type"), tc.ctype)
		}
		if tc.body != "" && !strings.Contains(w.Body.String(), tc.body) {
			t.Errorf("%s %s: body lacks %q", tc.method, tc.path, tc.body)
		}
		if tc.method == "HEAD" && w.Body.Len() != 0 {
			t.Errorf("HEAD %s: %d body bytes", tc.path, w.Body.Len())
		}
		if tc.code == 200 && w.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s %s: no nosniff", tc.method, tc.path)
		}
	}
	if w := get(t, h, "GET", "/demo"); w.Header().Get("Location") != "/demo/" {
		t.Errorf("/demo redirects to %q", w.Header().Get("Location"))
	}
	if body := get(t, h, "GET", "/").Body.String(); strings.Contains(body, "unfinished") {
		t.Error("GET / links a board without a latest pointer")
	}
}

// TestHandlerFollowsLatest: a new stamp shows once its pointer is written,
// without restarting; a pointer that is not a stamp is an error, not a path.
func TestHandlerFollowsLatest(t *testing.T) {
	store, s, h := served(t)
	ctx := context.Background()
	next := s
	next.Stamp = "20261124T000000Z"
	next.Cells = append([]leaderboard.Cell(nil), s.Cells...)
	next.Cells[0].Mean = 0.123
	if err := Write(ctx, store, next); err != nil {
		t.Fatal(err)
	}
	if err := blob.PutJSON(ctx, store, leaderboard.ScoresKey(next.Board, next.Stamp), next); err != nil {
		t.Fatal(err)
	}
	if body := get(t, h, "GET", "/demo/scores.json").Body.String(); !strings.Contains(body, s.Stamp) {
		t.Fatalf("before the pointer moves: %s", body)
	}
	if err := blob.PutBytes(ctx, store, leaderboard.LatestKey(s.Board), []byte(next.Stamp)); err != nil {
		t.Fatal(err)
	}
	body := get(t, h, "GET", "/demo/scores.json").Body.String()
	if !strings.Contains(body, next.Stamp) || !strings.Contains(body, "0.123") {
		t.Fatalf("after the pointer moved: %s", body)
	}
	if err := blob.PutBytes(ctx, store, leaderboard.LatestKey(s.Board), []byte("../../runs")); err != nil {
		t.Fatal(err)
	}
	w := get(t, h, "GET", "/demo/index.html")
	if w.Code != http.StatusBadGateway || !strings.Contains(w.Body.String(), "not a stamp") {
		t.Fatalf("corrupt pointer: %d %s", w.Code, w.Body.String())
	}
}

// TestServeOverHTTP runs the handler on a real listener: the overview is a
// real HTML table with the cells' numbers, rendered without the network.
func TestServeOverHTTP(t *testing.T) {
	_, s, h := served(t)
	srv := httptest.NewServer(h)
	defer srv.Close()
	res, err := http.Get(srv.URL + "/demo/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	page := string(b)
	for _, c := range s.Cells {
		if !strings.Contains(page, ">"+num3(c.Mean)+"</a>") {
			t.Errorf("the overview lacks %s × %s = %s", c.Dataset, c.Model, num3(c.Mean))
		}
	}
	for _, ref := range []string{`src="http`, `href="http`, `src="//`, `href="//`, "url(http", "@import"} {
		if strings.Contains(page, ref) {
			t.Errorf("the overview refers to the network: %s", ref)
		}
	}
}

// TestBoardListIsCached: GET / lists the store once per BoardsTTL; a board
// refreshed in between shows after that.
func TestBoardListIsCached(t *testing.T) {
	store, s, _ := served(t)
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	h := &handler{store: store, log: slog.Default(), ttl: BoardsTTL, now: func() time.Time { return now }}
	if body := get(t, h, "GET", "/").Body.String(); !strings.Contains(body, `href="demo/"`) || strings.Contains(body, "second") {
		t.Fatalf("GET /: %s", body)
	}
	if err := blob.PutBytes(context.Background(), store, leaderboard.LatestKey("second"), []byte(s.Stamp)); err != nil {
		t.Fatal(err)
	}
	if body := get(t, h, "GET", "/").Body.String(); strings.Contains(body, "second") {
		t.Error("GET / listed the store again within BoardsTTL")
	}
	if w := get(t, h, "GET", "/second/scores.json"); w.Code != http.StatusNotFound {
		t.Errorf("a board with a pointer but no scores.json: %d", w.Code)
	}
	now = now.Add(BoardsTTL)
	if body := get(t, h, "GET", "/").Body.String(); !strings.Contains(body, `href="second/"`) {
		t.Error("GET / does not show the new board after BoardsTTL")
	}
}
