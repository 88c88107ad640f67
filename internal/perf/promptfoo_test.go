package perf

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The promptfoo-ratio figure's script takes minutes and installs promptfoo,
// so only its cheap pieces are tested here: the JSON helper it calls
// (deploy/dev/promptfoo-ratio.mjs) and the script's checks that run before
// anything is installed or started.

const (
	promptfooScript = "deploy/dev/promptfoo-ratio.sh"
	promptfooHelper = "deploy/dev/promptfoo-ratio.mjs"
)

// run runs argv in dir with extra environment and returns its combined output
// and whether it exited 0.
func run(t *testing.T, dir string, env []string, argv ...string) (string, bool) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if _, isExit := err.(*exec.ExitError); err != nil && !isExit {
		t.Fatalf("%s: %v", strings.Join(argv, " "), err)
	}
	return string(out), err == nil
}

func TestPromptfooSuiteGolden(t *testing.T) {
	root := moduleRoot(t)
	out := t.TempDir()
	refs := filepath.Join(root, "internal/perf/testdata/promptfoo/references.jsonl")
	got, ok := run(t, root, nil, "node", promptfooHelper, "suite", refs, out, "http://127.0.0.1:8400/v1")
	if !ok || got != "2\n" {
		t.Fatalf("suite: ok=%v, output %q; want the count 2", ok, got)
	}
	for _, name := range []string{"tests.jsonl", "promptfooconfig.json"} {
		data, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		// The config names its tests file by absolute path.
		data = bytes.ReplaceAll(data, []byte(out), []byte("OUT_DIR"))
		golden := filepath.Join(root, "internal/perf/testdata/promptfoo", name+".golden")
		if *update {
			if err := os.WriteFile(golden, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, want) {
			t.Errorf("%s differs from %s (go test ./internal/perf -run TestPromptfooSuiteGolden -update)\ngot:\n%s", name, golden, data)
		}
	}
}

func TestPromptfooSuiteRefusesBadReferences(t *testing.T) {
	root := moduleRoot(t)
	user := func(content string) string {
		return `{"messages":[{"role":"user","content":` + content + `}],"content":"1"}`
	}
	for _, tc := range []struct {
		name, refs, want string
	}{
		{"not json", user(`"a"`) + "\n{oops\n", "refs.jsonl:2: not JSON"},
		{"two messages", `{"messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}],"content":"1"}`, "refs.jsonl:1: want one user message"},
		{"assistant", `{"messages":[{"role":"assistant","content":"a"}],"content":"1"}`, "refs.jsonl:1: want one user message"},
		{"multi-part content", `{"messages":[{"role":"user","multi_content":[{"type":"text","text":"a"}]}],"content":"1"}`, "refs.jsonl:1: want one user message"},
		{"tool calls", `{"messages":[{"role":"user","content":"u"}],"tool_calls":[{"name":"f","arguments":{}}]}`, "refs.jsonl:1: want a text reference"},
		{"reward", `{"messages":[{"role":"user","content":"u"}],"content":"1","reward":true}`, "refs.jsonl:1: want a text reference"},
		{"empty reference", `{"messages":[{"role":"user","content":"u"}],"content":""}`, "refs.jsonl:1: want a text reference"},
		{"template", user(`"say {{ x }}"`), "refs.jsonl:1: the prompt holds a Nunjucks tag"},
		{"template block", user(`"{% if %}"`), "refs.jsonl:1: the prompt holds a Nunjucks tag"},
		{"empty file", "\n\n", "refs.jsonl: no references"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			refs := filepath.Join(dir, "refs.jsonl")
			if err := os.WriteFile(refs, []byte(tc.refs), 0o644); err != nil {
				t.Fatal(err)
			}
			got, ok := run(t, root, nil, "node", promptfooHelper, "suite", refs, dir, "http://x/v1")
			if ok || !strings.Contains(got, tc.want) {
				t.Errorf("ok=%v, output %q; want a failure saying %q", ok, got, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "tests.jsonl")); err == nil {
				t.Errorf("a refused file still wrote tests.jsonl")
			}
		})
	}
}

func TestPromptfooChecks(t *testing.T) {
	root := moduleRoot(t)
	for _, tc := range []struct {
		name, check, json, n string
		ok                   bool
		want                 string
	}{
		{"benchline all exact", "check-benchline", `{"run_id":"r1","samples":3,"scored":3,"metrics":[{"name":"exact","mean":1}]}`, "3", true, ""},
		{"benchline one wrong", "check-benchline", `{"run_id":"r1","samples":3,"scored":3,"metrics":[{"name":"exact","mean":0.6667}]}`, "3", false, "exact 0.6667"},
		{"benchline fewer scored", "check-benchline", `{"run_id":"r1","samples":3,"scored":2,"metrics":[{"name":"exact","mean":1}]}`, "3", false, "2 scored"},
		{"benchline other size", "check-benchline", `{"run_id":"r1","samples":4,"scored":4,"metrics":[{"name":"exact","mean":1}]}`, "3", false, "want 3 samples"},
		{"benchline no metric", "check-benchline", `{"run_id":"r1","samples":3,"scored":3,"metrics":[]}`, "3", false, "exact missing"},
		{"promptfoo all passed", "check-promptfoo", `{"results":{"stats":{"successes":3,"failures":0,"errors":0}}}`, "3", true, ""},
		{"promptfoo a failure", "check-promptfoo", `{"results":{"stats":{"successes":2,"failures":1,"errors":0}}}`, "3", false, "2 passed, 1 failed, 0 errors"},
		{"promptfoo an error", "check-promptfoo", `{"results":{"stats":{"successes":2,"failures":0,"errors":1}}}`, "3", false, "1 errors"},
		{"promptfoo says which failed", "check-promptfoo", `{"results":{"stats":{"successes":1,"failures":1,"errors":0},"results":[{"success":true,"testIdx":0},{"success":false,"testIdx":1,"vars":{"prompt":"Item syn-000000001. the model"},"gradingResult":{"reason":"Expected output \"759177\" to equal \"1\""}}]}}`, "3", false, `the first: test 1 (prompt "Item syn-000000001. the model"...): Expected output "759177" to equal "1"`},
		{"promptfoo error reason", "check-promptfoo", `{"results":{"stats":{"successes":0,"failures":0,"errors":1},"results":[{"success":false,"testIdx":0,"error":"API error: 404 model not found"}]}}`, "1", false, "test 0 (prompt \"\"...): API error: 404 model not found"},
		{"promptfoo no stats", "check-promptfoo", `{"results":{}}`, "3", false, "no results.stats"},
		{"not json", "check-promptfoo", `{`, "3", false, "not JSON"},
		{"bad n", "check-benchline", `{}`, "0", false, "N must be a positive integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "in.json")
			if err := os.WriteFile(file, []byte(tc.json), 0o644); err != nil {
				t.Fatal(err)
			}
			got, ok := run(t, root, nil, "node", promptfooHelper, tc.check, file, tc.n)
			if ok != tc.ok || !strings.Contains(got, tc.want) {
				t.Errorf("ok=%v, output %q; want ok=%v and %q", ok, got, tc.ok, tc.want)
			}
			if !tc.ok && !strings.Contains(got, file) && tc.n != "0" {
				t.Errorf("output %q does not name the file", got)
			}
		})
	}
}

// TestPromptfooScriptChecksFirst runs the script where it must stop before
// installing or starting anything, and checks that it says why.
func TestPromptfooScriptChecksFirst(t *testing.T) {
	root := moduleRoot(t)
	if out, ok := run(t, root, nil, "bash", "-n", promptfooScript); !ok {
		t.Fatalf("bash -n: %s", out)
	}
	cache := t.TempDir()
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		ok   bool
		want string
	}{
		{"help", nil, []string{"--help"}, true, "usage: promptfoo-ratio.sh [--batch] [--warmup W] [N ...]"},
		{"warmup word", nil, []string{"--warmup", "x", "10"}, false, `--warmup (PROMPTFOO_RATIO_WARMUP) must be a non-negative integer, got "x"`},
		{"warmup missing", nil, []string{"10", "--warmup"}, false, "--warmup needs a number of samples"},
		{"warmup env", []string{"PROMPTFOO_RATIO_WARMUP=-1"}, []string{"10"}, false, `got "-1"`},
		{"zero", nil, []string{"0"}, false, `N must be a positive integer, got "0"`},
		{"word", nil, []string{"2000", "many"}, false, `got "many"`},
		{"concurrency", []string{"PROMPTFOO_RATIO_CONCURRENCY=x"}, []string{"10"}, false, "PROMPTFOO_RATIO_CONCURRENCY must be a positive integer"},
		{"batch", []string{"PROMPTFOO_RATIO_BATCH=yes"}, []string{"10"}, false, `PROMPTFOO_RATIO_BATCH must be 0 or 1, got "yes"`},
		{"no benchline", []string{"BENCHLINE_BIN=" + filepath.Join(cache, "nope")}, []string{"10"}, false, "no benchline executable at " + filepath.Join(cache, "nope") + ": run make build"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := append([]string{"BENCHLINE_CACHE=" + cache}, tc.env...)
			got, ok := run(t, root, env, append([]string{"bash", promptfooScript}, tc.args...)...)
			if ok != tc.ok || !strings.Contains(got, tc.want) {
				t.Errorf("ok=%v, output %q; want ok=%v and %q", ok, got, tc.ok, tc.want)
			}
		})
	}
	if entries, _ := os.ReadDir(cache); len(entries) > 0 {
		t.Errorf("the script wrote into the cache before its checks passed: %v", entries)
	}
}
