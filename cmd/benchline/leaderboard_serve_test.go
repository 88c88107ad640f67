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
// MinIO, runs `benchline leaderboard serve --addr 127.0.0.1:0` against it
// with a configuration file, and reads the contract routes over HTTP.
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
	pr, pw := io.Pipe()
	cmd := newRootCmd()
	cmd.SetArgs([]string{"--config", cfgPath, "leaderboard", "serve", "--addr", "127.0.0.1:0"})
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
	fetch := func(path string) (int, string, string) {
		res, err := client.Get(base + path)
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
	stop()
	if err := <-done; err != nil {
		t.Errorf("serve after cancel: %v", err)
	}
}
