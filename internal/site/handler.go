package site

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/benchline/benchline/internal/access"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/leaderboard"
)

// contentTypes are the types of the files Write writes; anything else is
// served as application/octet-stream.
var contentTypes = map[string]string{
	".html":    "text/html; charset=utf-8",
	".css":     "text/css; charset=utf-8",
	".js":      "text/javascript; charset=utf-8",
	".svg":     "image/svg+xml",
	".csv":     "text/csv; charset=utf-8",
	".json":    "application/json",
	".parquet": "application/vnd.apache.parquet",
}

// csp allows only the site's own files: no inline script, no network.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the latest stamp of every board in store (a board is
// served when leaderboards/<board>/latest exists):
//
//	GET /                     an HTML page linking each board
//	GET /<board>/             the overview page of the board's latest stamp
//	GET /<board>/scores.json  {"board", "stamp", "cells": [{"dataset", "version", "model", "metric", "mean", "ci_low", "ci_high", "n", "run_id"}]}
//	GET /<board>/api/samples  the served explorer's sample list of a large run (explorer.go)
//	GET /<board>/api/compare  its per-sample diff of two runs
//	GET /<board>/<file>       any other file of the stamp's site (changes.json among them)
//
// Unknown boards and files are 404; paths with "." or ".." segments are
// refused. Only GET and HEAD are allowed, without a body (413, the
// connection closed unread). At most ExplorerRequests explorer requests
// are answered at once; one that waits ExplorerWait for its turn is
// answered 503 with a Retry-After. Store errors other than a missing
// key are answered 502 and logged with slog's default logger.
//
// GET / lists the board markers (leaderboard.Boards; a store without them:
// every key under leaderboards/) and keeps its list of boards for
// BoardsTTL; the other routes read the board's latest pointer on every
// request.
func Handler(store blob.Store) http.Handler {
	return &handler{store: store, log: slog.Default(), ttl: BoardsTTL, now: time.Now, explore: newExplorer(store)}
}

// BoardsTTL is how long GET / reuses its list of boards.
const BoardsTTL = 30 * time.Second

type handler struct {
	store   blob.Store
	gate    *Gate // nil: every board is readable (Guarded sets it)
	explore *explorer
	log     *slog.Logger
	ttl     time.Duration
	now     func() time.Time

	mu       sync.Mutex
	boardsAt time.Time
	cached   []string // board names with a latest pointer
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength != 0 || len(r.TransferEncoding) > 0 {
		// No route takes a body: refuse it unread, and close the
		// connection instead of reading what is left of it (the read
		// deadline past, the server's drain of the body fails at once).
		w.Header().Set("Connection", "close")
		http.Error(w, "site: a request body is not accepted (every route is GET or HEAD)", http.StatusRequestEntityTooLarge)
		_ = http.NewResponseController(w).SetReadDeadline(time.Now())
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", csp)
	var id access.Identity
	if h.gate != nil {
		var ok bool
		if id, ok = h.gate.identify(r); !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="benchline"`)
			http.Error(w, errBadToken, http.StatusUnauthorized)
			return
		}
	}
	p := r.URL.Path
	if p == "/" {
		h.boards(w, r, id)
		return
	}
	board, rest, hasSlash := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	if !boardName.MatchString(board) {
		http.NotFound(w, r)
		return
	}
	if h.gate != nil {
		allowed := h.gate.allows(id, board)
		h.gate.audit(r, id, board, rest, allowed)
		if !allowed && h.gate.toLogin(w, r, id, rest) {
			return
		}
		if !allowed {
			notFound(w, board)
			return
		}
	}
	stamp, err := h.latest(r, board)
	if errors.Is(err, blob.ErrNotFound) {
		notFound(w, board)
		return
	}
	if err != nil {
		h.fail(w, err)
		return
	}
	if !hasSlash {
		http.Redirect(w, r, "/"+board+"/", http.StatusMovedPermanently)
		return
	}
	switch rest {
	case "":
		rest = "index.html"
	case "scores.json":
		h.scores(w, r, board, stamp)
		return
	case "api/samples", "api/compare":
		h.api(w, r, board, stamp, strings.TrimPrefix(rest, "api/"))
		return
	}
	if !cleanPath(rest) {
		http.NotFound(w, r)
		return
	}
	h.file(w, r, leaderboard.SiteKey(board, stamp)+"/"+rest)
}

// cleanPath accepts a relative slash path with no empty, "." or ".."
// segment and no backslash or NUL: the request cannot leave the stamp's site.
func cleanPath(p string) bool {
	if p == "" || strings.ContainsAny(p, "\\\x00") || path.Clean(p) != p {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// latest reads and checks a board's latest pointer.
func (h *handler) latest(r *http.Request, board string) (string, error) {
	b, err := blob.GetBytes(r.Context(), h.store, leaderboard.LatestKey(board))
	if err != nil {
		return "", err
	}
	stamp := strings.TrimSpace(string(b))
	if !stampForm.MatchString(stamp) {
		return "", fmt.Errorf("site: %s holds %q, not a stamp", leaderboard.LatestKey(board), stamp)
	}
	return stamp, nil
}

func (h *handler) fail(w http.ResponseWriter, err error) {
	h.log.Error("leaderboard serve", "err", err)
	http.Error(w, err.Error(), http.StatusBadGateway)
}

func (h *handler) file(w http.ResponseWriter, r *http.Request, key string) {
	rc, err := h.store.Get(r.Context(), key)
	if errors.Is(err, blob.ErrNotFound) {
		http.NotFound(w, r)
		return
	}
	if err != nil {
		h.fail(w, err)
		return
	}
	defer rc.Close()
	ct, ok := contentTypes[path.Ext(key)]
	if !ok {
		ct = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "no-cache") // the latest stamp changes under the same URL
	if r.Method == http.MethodHead {
		return
	}
	if _, err := io.Copy(w, rc); err != nil {
		h.log.Warn("leaderboard serve: copy", "key", key, "err", err)
	}
}

// ScoresDoc is the contract of GET /<board>/scores.json.
type ScoresDoc struct {
	Board string    `json:"board"`
	Stamp string    `json:"stamp"`
	Cells []CellDoc `json:"cells"`
}

// CellDoc is one cell of ScoresDoc.
type CellDoc struct {
	Dataset string  `json:"dataset"`
	Version string  `json:"version"`
	Model   string  `json:"model"`
	Metric  string  `json:"metric"`
	Mean    float64 `json:"mean"`
	CILow   float64 `json:"ci_low"`
	CIHigh  float64 `json:"ci_high"`
	N       int64   `json:"n"`
	RunID   string  `json:"run_id"`
}

// Doc projects Scores onto the scores.json contract.
func Doc(s leaderboard.Scores) ScoresDoc {
	d := ScoresDoc{Board: s.Board, Stamp: s.Stamp, Cells: make([]CellDoc, 0, len(s.Cells))}
	for _, c := range s.Cells {
		d.Cells = append(d.Cells, CellDoc{Dataset: c.Dataset, Version: c.Version, Model: c.Model, Metric: c.Metric,
			Mean: c.Mean, CILow: c.CILow, CIHigh: c.CIHigh, N: c.N, RunID: c.RunID})
	}
	return d
}

func (h *handler) scores(w http.ResponseWriter, r *http.Request, board, stamp string) {
	var s leaderboard.Scores
	key := leaderboard.ScoresKey(board, stamp)
	if err := blob.GetJSON(r.Context(), h.store, key, &s); err != nil {
		if errors.Is(err, blob.ErrNotFound) {
			http.Error(w, fmt.Sprintf("board %s: stamp %s has no scores.json", board, stamp), http.StatusNotFound)
			return
		}
		h.fail(w, err)
		return
	}
	b, err := json.MarshalIndent(Doc(s), "", "  ")
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, r, append(b, '\n'))
}

// writeJSON answers with a JSON body b, never cached (a refresh may replace
// it); a HEAD request gets the headers alone.
func writeJSON(w http.ResponseWriter, r *http.Request, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(b)
}

var boardsPage = template.Must(template.New("boards").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>benchline leaderboards</title></head>
<body><main><h1>Leaderboards</h1>
{{with .User}}<p id="session">Logged in as {{.}} · <a href="/logout">Log out</a></p>
{{end}}{{if .Boards}}<ul>{{range .Boards}}<li><a href="{{.Board}}/">{{.Board}}</a> <small>stamp {{.Stamp}}</small></li>{{end}}</ul>{{else}}<p>No board has been refreshed yet.</p>{{end}}
</main></body></html>
`))

// boardsDoc is the data of boardsPage: the boards, and who is logged in
// (a login session; empty for a token or anonymous).
type boardsDoc struct {
	Boards []boardLink
	User   string
}

type boardLink struct{ Board, Stamp string }

// boardNames lists the boards with a latest pointer, listing the store at
// most once per ttl.
func (h *handler) boardNames(r *http.Request) ([]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cached != nil && h.now().Sub(h.boardsAt) < h.ttl {
		return h.cached, nil
	}
	names, err := leaderboard.Boards(r.Context(), h.store)
	if err != nil {
		return nil, err
	}
	if len(names) > 0 {
		h.cached, h.boardsAt = names, h.now()
		return names, nil
	}
	// A store written before the board markers: list every key.
	infos, err := h.store.List(r.Context(), "leaderboards/")
	if err != nil {
		return nil, err
	}
	names = []string{}
	for _, in := range infos {
		rest := strings.TrimPrefix(in.Key, "leaderboards/")
		board, file, ok := strings.Cut(rest, "/")
		if ok && file == "latest" && boardName.MatchString(board) {
			names = append(names, board)
		}
	}
	h.cached, h.boardsAt = names, h.now()
	return names, nil
}

// boards lists every board with a latest pointer that id may read.
func (h *handler) boards(w http.ResponseWriter, r *http.Request, id access.Identity) {
	names, err := h.boardNames(r)
	if err != nil {
		h.fail(w, err)
		return
	}
	var links []boardLink
	for _, board := range names {
		if h.gate != nil && !h.gate.allows(id, board) {
			continue
		}
		stamp, err := h.latest(r, board)
		if err != nil {
			h.log.Warn("leaderboard serve: board left out", "board", board, "err", err)
			continue
		}
		links = append(links, boardLink{board, stamp})
	}
	sort.Slice(links, func(i, j int) bool { return links[i].Board < links[j].Board })
	var buf bytes.Buffer
	doc := boardsDoc{Boards: links}
	if id.Subject != "" {
		doc.User = strings.TrimPrefix(id.Who(), "user:")
	}
	if err := boardsPage.Execute(&buf, doc); err != nil {
		h.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(buf.Bytes())
}
