package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/bfcl"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/internal/wfclient"
	"github.com/benchline/benchline/workflows"
)

// The cases of issue 23 ("bounded everywhere") in the bad-input corpus:
// each finding with the time bound it must meet. Large inputs are
// generated at test time as sparse files (a 300 MB or 2 GB line costs no
// disk and no time to write): the build must refuse them after reading
// the line limit.

// quickBound is the deadline of the cases that must fail without
// retrying (invalid names, a refused destination, refused credentials).
// A retried failure takes minutes (activities back off to a minute over
// 12 attempts), so a minute still tells one from the other; it was 15 s,
// which a worker starting and a workflow running on a loaded 2-core
// machine could miss with nothing wrong.
const quickBound = time.Minute

// sparseLineDir writes a BFCL source whose question file is one valid
// line and then a line of size bytes (a JSON string that never ends,
// mostly a hole of NULs).
func sparseLineDir(t *testing.T, size int64) string {
	q, a := bfclLines(t, 1)
	dir := bfclDir(t, q[0]+`{"id": "big", "question": "`, a)
	if err := os.Truncate(filepath.Join(dir, "BFCL_v4_simple_python.json"), int64(len(q[0]))+size); err != nil {
		t.Fatal(err)
	}
	return dir
}

// publishAction publishes in on the shared worker (the workflow checks
// the names and the destination itself, whatever the client did).
func publishAction(t *testing.T, in workflows.PublishDatasetInput) func(context.Context) error {
	return func(ctx context.Context) error {
		_, err := wfclient.PublishDataset(ctx, stack.Client, stack.Stack.Config, in)
		return err
	}
}

// boundedCases are issue 23's cases of the corpus.
func boundedCases() []badInput {
	fileLine := func(h *badHarness) []string { return []string{h.last["file"], "limits.max_line_bytes"} }
	line := func(size int64) func(t *testing.T, h *badHarness) func(context.Context) error {
		return func(t *testing.T, h *badHarness) func(context.Context) error {
			dir := sparseLineDir(t, size)
			h.last = map[string]string{"file": filepath.Join(dir, "BFCL_v4_simple_python.json") + ":2:"}
			return buildAction(t, bfcl.Name, datasets.Request{Source: dir})
		}
	}
	dest := func(t *testing.T, h *badHarness, ref string, prepare func(dir string) string) func(context.Context) error {
		if _, err := buildVia(t, bfcl.Name, datasets.Request{}); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		h.last = map[string]string{"file": prepare(dir)}
		return publishAction(t, workflows.PublishDatasetInput{Ref: ref, Dest: dir})
	}
	return []badInput{
		{name: "bounded/line-300MB", timeout: time.Minute, prepare: line(300 << 20), want: fileLine},
		// A 2 GB file is over limits.max_source_bytes (1 GiB) too: refused by
		// its size before a line is read.
		{name: "bounded/line-2GB", timeout: time.Minute, prepare: line(2 << 30), want: func(h *badHarness) []string {
			return []string{strings.TrimSuffix(h.last["file"], ":2:"), "limits.max_source_bytes", "it was not read"}
		}},
		{name: "bounded/ref-dotdot-version", timeout: quickBound,
			prepare: func(t *testing.T, h *badHarness) func(context.Context) error {
				return dest(t, h, "bfcl@../../../runs/X", func(string) string { return "../../../runs/X" })
			}, want: func(h *badHarness) []string { return []string{h.last["file"], "invalid name"} }},
		{name: "bounded/ref-dotdot-name", timeout: quickBound,
			prepare: func(t *testing.T, h *badHarness) func(context.Context) error {
				return dest(t, h, "../bfcl@latest", func(string) string { return "../bfcl" })
			}, want: func(h *badHarness) []string { return []string{h.last["file"], "invalid name"} }},
		{name: "bounded/run-dotdot", timeout: quickBound,
			prepare: func(t *testing.T, h *badHarness) func(context.Context) error {
				h.last = map[string]string{"file": "../datasets/bfcl/v1"}
				return publishAction(t, workflows.PublishDatasetInput{Run: "../datasets/bfcl/v1", Dest: t.TempDir()})
			}, want: func(h *badHarness) []string { return []string{h.last["file"], "invalid name"} }},
		{name: "bounded/publish-through-symlink", timeout: quickBound,
			prepare: func(t *testing.T, h *badHarness) func(context.Context) error {
				elsewhere := t.TempDir()
				t.Cleanup(func() {
					if ents, _ := os.ReadDir(elsewhere); len(ents) > 0 {
						t.Errorf("the publish wrote %d entries outside DEST", len(ents))
					}
				})
				return dest(t, h, "bfcl@latest", func(dir string) string {
					if err := os.Symlink(elsewhere, filepath.Join(dir, "bfcl")); err != nil {
						t.Fatal(err)
					}
					return filepath.Join(dir, "bfcl")
				})
			}, want: func(h *badHarness) []string { return []string{h.last["file"], "symbolic link"} }},
		{name: "bounded/garbage-latest-at-dest", timeout: quickBound,
			prepare: func(t *testing.T, h *badHarness) func(context.Context) error {
				return dest(t, h, "bfcl@latest", func(dir string) string {
					writeFiles(t, dir, map[string]string{"bfcl/latest": "\x00 not json {"})
					return filepath.Join(dir, "bfcl", "latest")
				})
			}, want: func(h *badHarness) []string { return []string{h.last["file"], "not a latest pointer"} }},
		{name: "bounded/worker-wrong-s3-secret", timeout: quickBound,
			prepare: func(t *testing.T, h *badHarness) func(context.Context) error {
				res, err := buildVia(t, bfcl.Name, datasets.Request{})
				if err != nil {
					t.Fatal(err)
				}
				queue := "badinput-wrong-secret"
				startProcWorker(t, h.binary(t), workerEnv(queue, stack.BaselineURL, "AWS_SECRET_ACCESS_KEY=wrong-secret"), "worker", "--queues", "main")
				h.last = map[string]string{"file": stack.Stack.Config.S3.Endpoint}
				return func(ctx context.Context) error {
					cfg := stack.Stack.Config
					cfg.Temporal.TaskQueue = queue
					seed := 23
					run, plan, err := wfclient.StartEval(ctx, stack.Client, cfg, stack.Store, workflows.EvaluateModelInput{
						Request: runs.Request{Dataset: bfcl.Name + "@" + res.Version, Model: "baseline/reference", Seed: &seed}})
					if err != nil {
						return err
					}
					terminateOnCleanup(t, wfclient.EvalWorkflowID(plan.RunID))
					_, err = wfclient.WaitEval(ctx, stack.Client, run, plan.RunID, time.Hour, nil)
					if err != nil {
						// runs show must say failed, with the cause.
						cmd := exec.Command(h.binary(t), "runs", "show", plan.RunID)
						cmd.Env = workerEnv(queue, stack.BaselineURL)
						out, _ := cmd.CombinedOutput()
						if !strings.Contains(string(out), "failed") || !strings.Contains(string(out), "access denied") {
							t.Errorf("runs show %s: %s", plan.RunID, out)
						}
					}
					return err
				}
			}, want: func(h *badHarness) []string {
				return []string{h.last["file"], "access denied", "SignatureDoesNotMatch"}
			}},
	}
}

// TestBoundedCasesAreFast guards the corpus's own cost: the sparse files
// of the line cases take no disk.
func TestBoundedCasesAreFast(t *testing.T) {
	dir := sparseLineDir(t, 2<<30)
	st, err := os.Stat(filepath.Join(dir, "BFCL_v4_simple_python.json"))
	if err != nil || st.Size() < 2<<30 {
		t.Fatalf("%v %v", st, err)
	}
	out, err := exec.Command("du", "-k", filepath.Join(dir, "BFCL_v4_simple_python.json")).Output()
	if err == nil {
		var kb int64
		fmt.Sscan(string(out), &kb)
		if kb > 64<<10 {
			t.Errorf("the 2 GB line takes %d KiB on disk; it should be sparse", kb)
		}
	}
}
