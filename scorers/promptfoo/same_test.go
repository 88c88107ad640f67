package promptfoo

import (
	"context"
	"encoding/json"
	"math"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/baseline"
)

// promptfooMain is promptfoo's CLI as make setup installs it (pinned,
// deploy/dev/setup.sh): main.js is run directly, since the entry point
// refuses Node 20, which 0.123.1 runs an eval on.
func promptfooMain(t *testing.T) string {
	cache := os.Getenv("BENCHLINE_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "benchline")
	}
	main := filepath.Join(cache, "promptfoo", "node_modules", "promptfoo", "dist", "src", "main.js")
	if _, err := os.Stat(main); err != nil {
		t.Fatalf("promptfoo is not installed (%v): run make setup", err)
	}
	return main
}

// TestSameAsPromptfoo runs promptfoo 0.123.1 on testdata/same against the
// baseline server's echo model, then grades the replies promptfoo got with
// benchline: every test's pass and score equal promptfoo's, and the prompt
// benchline renders is the one promptfoo sent (echo repeats it).
func TestSameAsPromptfoo(t *testing.T) {
	main := promptfooMain(t)
	srvh, err := baseline.New(baseline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(srvh)
	defer srv.Close()

	dir := t.TempDir()
	for _, f := range []string{"promptfooconfig.yaml", "prompt.txt", "chat.json", "tests.yaml", "tests.csv"} {
		b, err := os.ReadFile(filepath.Join("testdata", "same", f))
		if err != nil {
			t.Fatal(err)
		}
		b = []byte(strings.ReplaceAll(string(b), "BASELINE_URL", srv.URL+"/v1"))
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	results := runPromptfoo(t, main, dir)

	data, err := os.ReadFile(filepath.Join(dir, "promptfooconfig.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse("promptfooconfig.yaml", data, DirReader(dir))
	if err != nil {
		t.Fatal(err)
	}
	samples, err := cfg.Samples()
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Tests) < 40 {
		t.Fatalf("%d tests, want at least 40", len(cfg.Tests))
	}
	if len(results) != len(samples) {
		t.Fatalf("promptfoo has %d results, benchline %d samples", len(results), len(samples))
	}
	byKey := map[[2]int]Sample{}
	for _, s := range samples {
		byKey[[2]int{s.Prompt, s.Test}] = s
	}
	passes, fails := 0, 0
	for _, r := range results {
		s, ok := byKey[[2]int{r.PromptIdx, r.TestIdx}]
		if !ok {
			t.Fatalf("promptfoo's prompt %d test %d is not a benchline sample", r.PromptIdx, r.TestIdx)
		}
		text, ok := r.Response.Output.(string)
		if !ok {
			t.Fatalf("%s: promptfoo's output %v is not text (error %q)", s.ID, r.Response.Output, r.Error)
		}
		if want := s.Messages[len(s.Messages)-1].Content; text != want {
			t.Errorf("%s: promptfoo sent %q, benchline renders %q", s.ID, text, want)
		}
		res := Grade(cfg.Tests[s.Test], cfg.Providers[0], s, Output{Text: text})
		if res.Pass != r.GradingResult.Pass || math.Abs(res.Score-r.GradingResult.Score) > 1e-9 {
			t.Errorf("%s (%q): benchline pass=%v score=%v (%v), promptfoo pass=%v score=%v (%s)",
				s.ID, text, res.Pass, res.Score, res.Components, r.GradingResult.Pass, r.GradingResult.Score, r.GradingResult.Reason)
		}
		if res.Pass {
			passes++
		} else {
			fails++
		}
	}
	// Both verdicts occur: the comparison is not of a config that always passes.
	if passes == 0 || fails == 0 {
		t.Errorf("%d passes and %d fails: want both", passes, fails)
	}
	t.Logf("%d samples (%d tests x %d prompts): %d pass, %d fail, all as promptfoo", len(samples), len(cfg.Tests), len(cfg.Prompts), passes, fails)
}

// pfResult is one result of promptfoo's results.json.
type pfResult struct {
	PromptIdx int    `json:"promptIdx"`
	TestIdx   int    `json:"testIdx"`
	Error     string `json:"error"`
	Response  struct {
		Output any `json:"output"`
	} `json:"response"`
	GradingResult struct {
		Pass   bool    `json:"pass"`
		Score  float64 `json:"score"`
		Reason string  `json:"reason"`
	} `json:"gradingResult"`
}

// runPromptfoo runs promptfoo's CLI (main) on dir/promptfooconfig.yaml,
// without cache, telemetry or sharing, and returns its results (a failing
// test, exit status 100, is not an error).
func runPromptfoo(t *testing.T, main, dir string) []pfResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", main, "eval", "--no-cache", "--no-table", "--no-progress-bar",
		"-c", "promptfooconfig.yaml", "-o", "results.json")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PROMPTFOO_DISABLE_TELEMETRY=1", "PROMPTFOO_DISABLE_UPDATE=1",
		"PROMPTFOO_CONFIG_DIR="+filepath.Join(dir, "home"), "OPENAI_API_KEY=unused", "PROMPTFOO_DISABLE_SHARING=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		// promptfoo exits 100 when a test fails
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 100 {
			t.Fatalf("promptfoo eval: %v\n%s", err, out)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Results struct {
			Results []pfResult `json:"results"`
		} `json:"results"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	return got.Results.Results
}
