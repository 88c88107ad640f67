package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/buildinfo"
)

func TestVersion(t *testing.T) {
	defer func(v, c, d string) { buildinfo.Version, buildinfo.Commit, buildinfo.Date = v, c, d }(buildinfo.Version, buildinfo.Commit, buildinfo.Date)
	buildinfo.Version, buildinfo.Commit, buildinfo.Date = "v9.8.7", "0123abc", "2026-11-27T09:00:00Z"
	run := func(args ...string) string {
		t.Helper()
		root := newRootCmd()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetArgs(args)
		if err := root.Execute(); err != nil {
			t.Fatalf("benchline %s: %v", strings.Join(args, " "), err)
		}
		return out.String()
	}
	line := run("--version")
	if !strings.HasPrefix(line, "benchline v9.8.7 (commit 0123abc") || !strings.Contains(line, "built 2026-11-27T09:00:00Z, go1.") {
		t.Fatalf("--version = %q", line)
	}
	if got := run("version"); got != line {
		t.Fatalf("version = %q, want what --version prints: %q", got, line)
	}
	var info map[string]any
	if err := json.Unmarshal([]byte(run("version", "--json")), &info); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"version": "v9.8.7", "commit": "0123abc", "build_date": "2026-11-27T09:00:00Z"} {
		if info[k] != want {
			t.Errorf("version --json: %s = %v, want %q", k, info[k], want)
		}
	}
	if gv, _ := info["go_version"].(string); !strings.HasPrefix(gv, "go1.") {
		t.Errorf("version --json: go_version = %v", info["go_version"])
	}
}
