package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/scorers/taskfile"
)

// evalFlags returns the flags a task file's first lines ask every eval to
// take: a comment "# eval-flags: --judge baseline/judge --repeats 2".
func evalFlags(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for i := 0; i < 5 && sc.Scan(); i++ {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "# eval-flags:"); ok {
			return strings.Fields(rest)
		}
	}
	return nil
}

// TestTaskFileAcceptance runs every task file of testdata/tasks through
// the real stack as a user would: build it, evaluate baseline/reference
// (every metric 1) and baseline/noisy-0.3 (the headline less), refresh a
// board with it, evaluate noisy-0.3 again in batch mode (the same scores
// as the direct run) and publish the run and the dataset.
func TestTaskFileAcceptance(t *testing.T) {
	files, err := filepath.Glob("testdata/tasks/*/task.yaml")
	if err != nil || len(files) < 4 {
		t.Fatalf("task files %v (%v): want the acceptance suite's", files, err)
	}
	bin := buildBinary(t)
	for _, file := range files {
		t.Run(filepath.Base(filepath.Dir(file)), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			c, err := taskfile.Load(file, raw)
			if err != nil {
				t.Fatal(err)
			}
			head := struct{ Name, Metric string }{c.Spec.Name, c.Spec.Headline()}
			abs, _ := filepath.Abs(file)
			built, err := buildVia(t, head.Name, datasets.Request{Source: abs, Task: true})
			if err != nil {
				t.Fatal(err)
			}
			ds := head.Name + "@" + built.Version
			card, err := blob.GetBytes(context.Background(), stack.Store, catalog.CardKey(head.Name, built.Version))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(card), "## Task file\n\n```yaml\n"+string(raw)) {
				t.Errorf("the version's card does not show the task file: %s", excerpt(string(card), 600))
			}
			flags := evalFlags(t, file)
			cli := func(args ...string) []byte {
				t.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, bin, args...)
				cmd.Dir = t.TempDir()
				cmd.Env = workerEnv(stack.Stack.Config.Temporal.TaskQueue, stack.BaselineURL)
				out, err := cmd.Output()
				if err != nil {
					var stderr []byte
					if ee, ok := err.(*exec.ExitError); ok {
						stderr = ee.Stderr
					}
					t.Fatalf("benchline %s: %v\n%s", strings.Join(args, " "), err, stderr)
				}
				return out
			}
			eval := func(model string, extra ...string) aggregate.Summary {
				t.Helper()
				args := append([]string{"eval", "--dataset", ds, "--model", model, "--json"}, flags...)
				var s aggregate.Summary
				if out := cli(append(args, extra...)...); json.Unmarshal(out, &s) != nil {
					t.Fatalf("eval %s printed %q", model, out)
				}
				if s.Scored != built.Rows {
					t.Errorf("%s: scored %d of %d rows (%+v)", model, s.Scored, built.Rows, s.ErrorsByClass)
				}
				return s
			}

			ref := eval("baseline/reference")
			if metric(ref, head.Metric).N == 0 {
				t.Fatalf("baseline/reference: no %q metric in %+v", head.Metric, ref.Metrics)
			}
			// Every scorer's own metric is 1; the judged scorers' others
			// (a rubric's tripped pitfalls, judge_error_rate, agreement)
			// are not scores of the reply.
			for _, name := range c.Spec.Metrics() {
				if m := metric(ref, name); m.N == 0 || m.Mean != 1 {
					t.Errorf("baseline/reference: %s = %v over %d samples, want 1", name, m.Mean, m.N)
				}
			}
			noisy := eval("baseline/noisy-0.3")
			if got := metric(noisy, head.Metric); got.Mean >= 1 {
				t.Errorf("baseline/noisy-0.3: %s = %v, want less than 1", head.Metric, got.Mean)
			}

			// A board holding it refreshes.
			board := "accept-" + strings.TrimPrefix(head.Name, "accept-")
			refreshDatasetBoard(t, board, head.Name, built.Version, "baseline/reference", "baseline/noisy-0.3")

			// Batch mode scores each sample as the direct run did.
			sameAsDirect(t, eval("baseline/noisy-0.3", "--batch"), noisy)

			// Published: the run's details and the dataset, with every row.
			dest := t.TempDir()
			var pub struct {
				Rows int64 `json:"rows"`
			}
			if out := cli("runs", "publish", noisy.RunID, "--to", dest, "--json"); json.Unmarshal(out, &pub) != nil || pub.Rows != built.Rows {
				t.Errorf("runs publish printed %q: want %d rows", out, built.Rows)
			}
			pub.Rows = 0
			if out := cli("dataset", "publish", ds, "--to", dest, "--json"); json.Unmarshal(out, &pub) != nil || pub.Rows != built.Rows {
				t.Errorf("dataset publish printed %q: want %d rows", out, built.Rows)
			}
			readme, err := os.ReadFile(filepath.Join(dest, head.Name, "v"+built.Version, "README.md"))
			if err != nil || !strings.Contains(string(readme), "## Task file\n\n```yaml\n"+string(raw)) {
				t.Errorf("the release's README does not show the task file (%v): %s", err, excerpt(string(readme), 600))
			}
		})
	}
}

// TestTaskFileBadFiles builds every task file of testdata/tasks-bad on the
// real stack: each fails at once (a non-retryable error, within the build's
// deadline) with an error holding every part its first line's
// "# want: a|b|c" lists (the file with its line, the key, the row), and
// publishes no version.
func TestTaskFileBadFiles(t *testing.T) {
	files, err := filepath.Glob("testdata/tasks-bad/*/task.yaml")
	if err != nil || len(files) < 10 {
		t.Fatalf("bad task files %v (%v): want ten or more", files, err)
	}
	for _, file := range files {
		name := filepath.Base(filepath.Dir(file))
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(string(raw), "\n")
			wants, ok := strings.CutPrefix(first, "# want: ")
			if !ok {
				t.Fatalf("%s: the first line must be # want: ...", file)
			}
			abs, _ := filepath.Abs(file)
			dataset := "bad-" + name
			_, err = buildVia(t, dataset, datasets.Request{Source: abs, Task: true})
			if err == nil {
				t.Fatal("the build succeeded")
			}
			for _, w := range strings.Split(wants, "|") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if _, err := catalog.Resolve(ctx, stack.Store, dataset); err == nil {
				t.Error("a version was published")
			}
		})
	}
}
