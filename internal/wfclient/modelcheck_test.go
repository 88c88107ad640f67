package wfclient_test

import (
	"errors"
	"github.com/benchline/benchline/internal/wfclient"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/config"
)

// TestCheckModels checks model and judge names against the configured
// providers before a run starts (finding 6).
func TestCheckModels(t *testing.T) {
	dir := t.TempDir()
	providers := filepath.Join(dir, "providers.yaml")
	if err := os.WriteFile(providers, []byte("providers:\n  vllm:\n    base_url: http://gpu:8000/v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	redefined := filepath.Join(dir, "redefined.yaml")
	if err := os.WriteFile(redefined, []byte("providers:\n  baseline:\n    base_url: http://elsewhere:8400/v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	none := config.Default()
	withFile := config.Default()
	withFile.Models.ProvidersFile = providers
	withBaseline := config.Default()
	withBaseline.Models.ProvidersFile = redefined
	cases := []struct {
		name   string
		cfg    config.Config
		model  string
		judges []string
		want   string // "" for no error
	}{
		{"baselines", none, "baseline/noisy-0.3", []string{"baseline/first", "second=baseline/second"}, ""},
		{"reward baseline", none, "baseline/reward-noisy-0.2", nil, ""},
		{"openai is implicit", none, "openai/gpt-4o-mini", nil, ""},
		{"model with slashes", withFile, "vllm/Qwen/Qwen3-8B", nil, ""},
		{"any model of a listed provider", withFile, "vllm/whatever", nil, ""},
		{"unknown provider names the file", withFile, "nosuch/x", nil, `--model "nosuch/x": unknown provider "nosuch" (known: baseline, openai, vllm; providers file ` + providers},
		{"unknown provider without a file", none, "vllm/x", nil, "no providers file: set BENCHLINE_PROVIDERS"},
		{"unknown baseline model", none, "baseline/nosuch", nil, `--model "baseline/nosuch": baseline: unknown model "nosuch" (want reference, noisy-<p>, `},
		{"baseline noise out of range", none, "baseline/noisy-2", nil, `--model "baseline/noisy-2": baseline: model "noisy-2": noise share must be a number in [0, 1]`},
		{"baseline judge noise not a number", none, "baseline/reference", []string{"baseline/judge-malformed-x"}, `--judge "baseline/judge-malformed-x": baseline: model "judge-malformed-x": noise share`},
		{"baseline user turns", none, "baseline/reference", []string{"user=baseline/user-0"}, `baseline: model "user-0": a simulated user's turns must be a positive integer`},
		{"redefined baseline is not the built-in", withBaseline, "baseline/anything", nil, ""},
		{"no provider", none, "gpt-4o", nil, `--model "gpt-4o": want PROVIDER/MODEL without spaces`},
		{"empty model", none, "baseline/", nil, "want PROVIDER/MODEL"},
		{"space in model", none, "openai/gpt 4o", nil, "want PROVIDER/MODEL without spaces"},
		{"garbage judge", none, "baseline/reference", []string{"garbage judge!!"}, `--judge "garbage judge!!": want [ROLE=]PROVIDER/MODEL without spaces`},
		{"empty role", none, "baseline/reference", []string{"=baseline/first"}, `--judge "=baseline/first": want [ROLE=]PROVIDER/MODEL, ROLE of letters`},
		{"bad role", none, "baseline/reference", []string{"my role=baseline/first"}, `ROLE of letters`},
		{"empty judge model", none, "baseline/reference", []string{"j=baseline/"}, `--judge "j=baseline/": want [ROLE=]PROVIDER/MODEL`},
		{"unknown judge provider", none, "baseline/reference", []string{"nosuch/x"}, `--judge "nosuch/x": unknown provider "nosuch"`},
		{"empty model in a panel", none, "baseline/reference", []string{"judge=baseline/judge,,baseline/judge-yes"}, `--judge "judge=baseline/judge,,baseline/judge-yes": want [ROLE=]PROVIDER/MODEL`},
		{"unknown model in a panel", none, "baseline/reference", []string{"judge=baseline/judge,nosuch/x"}, `unknown provider "nosuch"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			judges, names, err := wfclient.ParseJudges(tc.judges)
			if err == nil {
				err = wfclient.CheckModels(tc.cfg, append([]wfclient.ModelName{{Flag: "--model", Given: tc.model, Model: tc.model}}, names...)...)
			}
			if tc.want == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				if len(judges) != len(tc.judges) {
					t.Errorf("judges = %v", judges)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
			if !errors.Is(err, wfclient.ErrBadModel) {
				t.Errorf("errors.Is(%v, ErrBadModel) is false", err)
			}
		})
	}
}

// TestParseJudgesPanels checks that a role given several models, with
// commas or repeated, is one panel whatever the order.
func TestParseJudgesPanels(t *testing.T) {
	cases := []struct {
		values []string
		want   map[string]string
	}{
		{[]string{"baseline/judge"}, map[string]string{"judge": "baseline/judge"}},
		{[]string{"judge=baseline/judge-yes,baseline/judge"}, map[string]string{"judge": "baseline/judge,baseline/judge-yes"}},
		{[]string{"baseline/judge-yes", "judge=baseline/judge"}, map[string]string{"judge": "baseline/judge,baseline/judge-yes"}},
		{[]string{"baseline/judge", "baseline/judge"}, map[string]string{"judge": "baseline/judge"}},
		{[]string{"proposer=baseline/judge", "checker=baseline/judge-yes"}, map[string]string{"proposer": "baseline/judge", "checker": "baseline/judge-yes"}},
	}
	for _, tc := range cases {
		got, names, err := wfclient.ParseJudges(tc.values)
		if err != nil {
			t.Fatalf("%v: %v", tc.values, err)
		}
		if !maps.Equal(got, tc.want) {
			t.Errorf("%v: judges %v, want %v", tc.values, got, tc.want)
		}
		if err := wfclient.CheckModels(config.Config{}, names...); err != nil {
			t.Errorf("%v: %v", tc.values, err)
		}
	}
}
