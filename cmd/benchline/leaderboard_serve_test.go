package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/s3blob"
	"github.com/benchline/benchline/internal/devstack"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/site"
	"github.com/benchline/benchline/internal/site/sitetest"
)

// TestLeaderboardServeOverMinIO writes the fixture stamp's site to a real
// MinIO, makes a token with `benchline leaderboard token`, runs `benchline
// leaderboard serve --addr 127.0.0.1:0 --tokens F --board F` against it with
// a configuration file, and reads the contract routes over HTTP with the
// token; without it, the board answers as one that does not exist.
func TestLeaderboardServeOverMinIO(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts MinIO")
	}
	ctx := context.Background()
	st, err := devstack.Start(ctx, devstack.Options{Dir: t.TempDir(), S3Only: true, Headless: true})
	if err != nil {
		t.Fatalf("start MinIO (make setup builds it): %v", err)
	}
	defer st.Stop()
	store, err := s3blob.New(ctx, st.Config.S3)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sitetest.Fixture(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	if err := site.Write(ctx, store, s); err != nil {
		t.Fatal(err)
	}
	if err := blob.PutJSON(ctx, store, leaderboard.ScoresKey(s.Board, s.Stamp), s); err != nil {
		t.Fatal(err)
	}
	if err := blob.PutBytes(ctx, store, leaderboard.LatestKey(s.Board), []byte(s.Stamp)); err != nil {
		t.Fatal(err)
	}

	c := st.Config.S3
	cfgPath := filepath.Join(t.TempDir(), "benchline.yaml")
	yaml := fmt.Sprintf("s3:\n  bucket: %s\n  endpoint: %s\n  region: %s\n  path_style: true\n  access_key_id: %s\n  secret_access_key: %s\n",
		c.Bucket, c.Endpoint, c.Region, c.AccessKeyID, c.SecretAccessKey.Reveal())
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"BENCHLINE_CONFIG", "BENCHLINE_S3_ENDPOINT", "BENCHLINE_S3_BUCKET", "BENCHLINE_S3_PREFIX", "BENCHLINE_S3_PATH_STYLE", "AWS_REGION"} {
		t.Setenv(k, "")
	}
	var made strings.Builder
	tc := newRootCmd()
	tc.SetArgs([]string{"leaderboard", "token", "ci-scores"})
	tc.SetOut(&made)
	if err := tc.Execute(); err != nil {
		t.Fatal(err)
	}
	tokLine, fileLine, _ := strings.Cut(made.String(), "\n")
	token := strings.TrimPrefix(tokLine, "token: ")
	tokensPath := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokensPath, []byte(strings.TrimPrefix(fileLine, "tokens file line: ")), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(tokensPath); strings.Contains(string(b), token) || !strings.HasPrefix(token, "blt_") {
		t.Fatalf("token %q, tokens file %q", token, b)
	}
	boardPath := filepath.Join(t.TempDir(), "board.yaml")
	board := "name: demo\nbenchmarks: [{dataset: bfcl}]\nmodels: [baseline/reference]\naccess: {tokens: [ci-scores]}\n"
	if err := os.WriteFile(boardPath, []byte(board), 0o600); err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	cmd := newRootCmd()
	cmd.SetArgs([]string{"--config", cfgPath, "leaderboard", "serve", "--addr", "127.0.0.1:0", "--tokens", tokensPath, "--board", boardPath})
	cmd.SetOut(pw)
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(sctx); pw.Close() }()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed no address: %v (%v)", err, <-done)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	base := strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(line, "serving leaderboards on ")), "/")
	client := &http.Client{Timeout: 30 * time.Second}
	bearer := "Bearer " + token
	fetch := func(path string) (int, string, string) {
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if bearer != "" {
			req.Header.Set("Authorization", bearer)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header.Get("Content-Type"), string(b)
	}
	if code, _, body := fetch("/"); code != 200 || !strings.Contains(body, `href="demo/"`) {
		t.Errorf("GET /: %d %s", code, body)
	}
	if code, ctype, body := fetch("/demo/"); code != 200 || ctype != "text/html; charset=utf-8" || !strings.Contains(body, `<table id="overview"`) {
		t.Errorf("GET /demo/: %d %s", code, ctype)
	}
	code, _, body := fetch("/demo/scores.json")
	var doc site.ScoresDoc
	if err := json.Unmarshal([]byte(body), &doc); code != 200 || err != nil || doc.Board != "demo" || doc.Stamp != s.Stamp || len(doc.Cells) != len(s.Cells) {
		t.Errorf("GET /demo/scores.json: %d %v %s", code, err, body)
	}
	if doc.Cells[0] != site.Doc(s).Cells[0] {
		t.Errorf("first cell %+v, want %+v", doc.Cells[0], site.Doc(s).Cells[0])
	}
	if code, _, _ := fetch("/nope/"); code != 404 {
		t.Errorf("GET /nope/: %d", code)
	}
	if code, ctype, _ := fetch("/demo/downloads/cells.parquet"); code != 200 || ctype != "application/vnd.apache.parquet" {
		t.Errorf("GET cells.parquet: %d %s", code, ctype)
	}
	bearer = ""
	_, _, nope := fetch("/nope/")
	for _, p := range []string{"/nope/", "/demo/", "/demo/scores.json", "/demo/downloads/cells.parquet"} {
		code, _, body := fetch(p)
		if code != 404 || body != strings.ReplaceAll(nope, "nope", "demo") && p != "/nope/" {
			t.Errorf("GET %s without the token: %d %q", p, code, body)
		}
	}
	if _, _, body := fetch("/"); strings.Contains(body, "demo") {
		t.Errorf("GET / without the token lists demo: %s", body)
	}
	stop()
	// The stamp's objects are private: a plain GET is refused; a presigned
	// link reads its object until it expires.
	objURL := strings.TrimSuffix(c.Endpoint, "/") + "/" + c.Bucket + "/" + leaderboard.SiteKey(s.Board, s.Stamp) + "/index.html"
	if res, err := client.Get(objURL); err != nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("unsigned GET of a stamp object: %v %v", res, err)
	}
	var links strings.Builder
	pc := newRootCmd()
	pc.SetArgs([]string{"--config", cfgPath, "leaderboard", "presign", "demo", "index.html", "--expires", "10m"})
	pc.SetOut(&links)
	if err := pc.Execute(); err != nil {
		t.Fatal(err)
	}
	link := strings.TrimSpace(links.String())
	res, err := client.Get(link)
	if err != nil || res.StatusCode != http.StatusOK || strings.Contains(link, c.SecretAccessKey.Reveal()) {
		t.Errorf("GET presigned %s: %v %v", link, res, err)
	} else {
		res.Body.Close()
	}
	for _, bad := range [][]string{{"demo", "--expires", "200h"}, {"demo", "../other/x"}, {"nope"}} {
		pc := newRootCmd()
		pc.SetArgs(append([]string{"--config", cfgPath, "leaderboard", "presign"}, bad...))
		pc.SetOut(io.Discard)
		pc.SetErr(io.Discard)
		if err := pc.Execute(); err == nil {
			t.Errorf("presign %v: no error", bad)
		}
	}
	if err := <-done; err != nil {
		t.Errorf("serve after cancel: %v", err)
	}
}
