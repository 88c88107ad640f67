package leaderboard

import (
	"errors"
	"strings"
	"testing"

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
		{"credentials in the URL", "webhook: {url: 'https://u:p@h.example/x'}", "credentials"},
		{"not http", "webhook: {url: 'ftp://h.example/x'}", "http(s)"},
		{"a bad variable name", "webhook: {url: 'https://h.example/x', secret_env: 'A-B'}", "secret_env"},
		{"a secret without a URL", "webhook: {secret_env: X}", "without url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseBoard("b.yaml", []byte(head+tc.yaml+"\n"), registry.Default())
			if !errors.Is(err, ErrBadBoard) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrBadBoard naming %q", err, tc.want)
			}
		})
	}
}

func TestChangesSummary(t *testing.T) {
	for _, tc := range []struct {
		c    Changes
		want string
	}{
		{Changes{Previous: "P", NoChange: true}, "no change since P"},
		{Changes{Moves: []Move{{}, {}}, NewModels: []CellRef{{}}}, "2 significant moves, 1 new model (first stamp)"},
		{Changes{Previous: "P", Failed: []FailedCell{{}}, NewVersions: []VersionChange{{}}, DroppedModels: []CellRef{{}}}, "1 dropped model, 1 failed cell, 1 new dataset version since P"},
	} {
		if got := tc.c.Summary(); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
}
