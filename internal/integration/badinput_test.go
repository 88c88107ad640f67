package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/benchline/benchline/internal/wfclient"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/bfcl"
	"github.com/benchline/benchline/datasets/datasetstest"
	"github.com/benchline/benchline/datasets/ifevalcode"
	"github.com/benchline/benchline/datasets/trbench"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/workflows"
)

// The bad-input corpus: testdata/badinput/ holds the small cases, and the
// functions below generate the large or binary ones deterministically
// (huge lines, invalid UTF-8, random bytes, damaged Parquet). Every case
// must end with an error naming where the input is bad (a file and line, a
// data file, a setting, a sample), before its deadline (a context
// deadline: a case that hangs or retries forever fails when it fires), and
// must publish nothing (no new key under datasets/: no part, manifest or
// latest; no summary for a failed run).
const badInputDir = "testdata/badinput"

// runDependent, when set in the environment, also runs the cases that wait
// for a fix on another branch (see badInput.dependsOn), to see which of
// them fail.
const runDependent = "BENCHLINE_BADINPUT_ALL"

// A badInput is one case of the corpus.
type badInput struct {
	name string
	// dependsOn names the fix of issue #11 this case waits for. While it
	// is set the case is skipped (unless BENCHLINE_BADINPUT_ALL=1): it fails
	// until that fix is merged, and the lead removes the field then.
	dependsOn string
	// timeout bounds the case's action [90s].
	timeout time.Duration
	// prepare sets the case up (outside the deadline) and returns its
	// action: the step that must fail.
	prepare func(t *testing.T, h *badHarness) func(ctx context.Context) error
	// want are what the error must name: substrings, each either of its
	// alternatives when it holds several separated by "|" (a line named
	// "line 2" or "file:2:").
	want func(h *badHarness) []string
}

// badHarness is what the cases share: the benchline binary (built on
// first use) and the directory of generated files.
type badHarness struct {
	parent  *testing.T // owns what outlives one case (the hostile model's worker)
	replies *hostileModel
	dir     string
	binOnce sync.Once
	bin     string
	binErr  error
	// last is the most recent case's detail (a file or run id) for want.
	last map[string]string
}

func (h *badHarness) binary(t *testing.T) string {
	h.binOnce.Do(func() {
		h.bin = filepath.Join(h.dir, "benchline")
		out, err := exec.Command("go", "build", "-o", h.bin, "../../cmd/benchline").CombinedOutput()
		if err != nil {
			h.binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if h.binErr != nil {
		t.Fatal(h.binErr)
	}
	return h.bin
}

// copyCorpus copies a committed case directory to a fresh directory and
// returns it (builds stage what they read; the copy keeps paths unique).
func copyCorpus(t *testing.T, name string) string {
	return datasetstest.SourceDir(t, filepath.Join(badInputDir, name), nil)
}

// buildAction builds dataset from req on the shared worker.
func buildAction(t *testing.T, dataset string, req datasets.Request) func(context.Context) error {
	terminateOnCleanup(t, wfclient.BuildWorkflowID(dataset, req))
	return func(ctx context.Context) error {
		_, err := wfclient.BuildDataset(ctx, stack.Client, stack.Stack.Config, workflows.BuildDatasetInput{Dataset: dataset, Request: req})
		return err
	}
}

// bfclLines returns the first n lines of the bundled simple_python question
// and answer files.
func bfclLines(t *testing.T, n int) (q, a []string) {
	t.Helper()
	read := func(p string) []string {
		b, err := os.ReadFile(filepath.Join("../../datasets/bfcl/fixtures", p))
		if err != nil {
			t.Fatal(err)
		}
		return strings.SplitAfter(string(b), "\n")[:n]
	}
	return read("BFCL_v4_simple_python.json"), read("possible_answer/BFCL_v4_simple_python.json")
}

// bfclDir writes a one-category BFCL source whose question file is q.
func bfclDir(t *testing.T, q string, answers []string) string {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"BFCL_v4_simple_python.json": q, "possible_answer/BFCL_v4_simple_python.json": strings.Join(answers, "")})
	return dir
}

// randomBytes returns n deterministic pseudo-random bytes without
// newlines (so a file of them is one line).
func randomBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.IntN(256))
		if b[i] == '\n' {
			b[i] = 0
		}
	}
	return b
}

// evalAction evaluates ds with baseline/reference on the shared worker and
// checks, whatever the outcome, that the run wrote no summary.
func evalAction(t *testing.T, h *badHarness, ds string) func(context.Context) error {
	return func(ctx context.Context) error {
		run, plan, err := wfclient.StartEval(ctx, stack.Client, stack.Stack.Config, stack.Store, workflows.EvaluateModelInput{
			Request: runs.Request{Dataset: ds, Model: "baseline/reference"}})
		if err != nil {
			return err
		}
		terminateOnCleanup(t, wfclient.EvalWorkflowID(plan.RunID))
		_, err = wfclient.WaitEval(ctx, stack.Client, run, plan.RunID, time.Hour, nil)
		if ok, _ := blob.Exists(context.Background(), stack.Store, runs.SummaryKey(plan.RunID)); ok {
			t.Errorf("run %s on bad data wrote %s", plan.RunID, runs.SummaryKey(plan.RunID))
		}
		return err
	}
}

// tamperedDataset builds a fresh synthetic version (3 parts of 100 rows),
// applies damage to part 1, and returns the dataset reference and the
// damaged file's path.
func tamperedDataset(t *testing.T, seed int, damage func(ctx context.Context, m *catalog.Manifest, key string, b []byte) []byte) (ref, path string) {
	t.Helper()
	ctx := context.Background()
	res, err := buildVia(t, "synthetic", datasets.Request{Params: map[string]string{"rows": "300", "part_rows": "100", "seed": fmt.Sprint(seed)}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := catalog.ReadManifest(ctx, stack.Store, res.Dataset, res.Version)
	if err != nil {
		t.Fatal(err)
	}
	f := m.Files[1]
	key := catalog.Dir(m.Name, m.Version) + f.Path
	b, err := blob.GetBytes(ctx, stack.Store, key)
	if err != nil {
		t.Fatal(err)
	}
	if nb := damage(ctx, &m, key, b); nb != nil {
		if err := blob.PutBytes(ctx, stack.Store, key, nb); err != nil {
			t.Fatal(err)
		}
	}
	return res.Dataset + "@" + res.Version, f.Path
}

// sameSize returns b with n bytes from off (negative: from the end)
// replaced by deterministic random bytes that differ from the originals.
func sameSize(b []byte, off, n int) []byte {
	out := bytes.Clone(b)
	if off < 0 {
		off += len(out)
	}
	for i, r := range randomBytes(uint64(off), n) {
		if r == out[off+i] {
			r ^= 0xff
		}
		out[off+i] = r
	}
	return out
}

// foreignPart returns a damage function that replaces the part with as
// many rows of another table (BFCL items) and rewrites the manifest to
// match the new bytes, so sizes, hashes and row counts all agree.
func foreignPart(t *testing.T) func(ctx context.Context, m *catalog.Manifest, key string, b []byte) []byte {
	return func(ctx context.Context, m *catalog.Manifest, key string, _ []byte) []byte {
		rows := make([]schemas.BFCLItem, m.Files[1].Rows)
		for i := range rows {
			rows[i] = schemas.BFCLItem{ID: fmt.Sprintf("foreign_%d", i), Category: "simple_python", Language: "python", TurnsJSON: "[]", FunctionsJSON: "[]"}
		}
		w := pq.NewWriter[schemas.BFCLItem](ctx, stack.Store, key, pq.Options{})
		if err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
		info, err := w.Close()
		if err != nil {
			t.Fatal(err)
		}
		m.Files[1].Bytes, m.Files[1].SHA256 = info.Bytes, info.SHA256
		if err := blob.PutJSON(ctx, stack.Store, catalog.ManifestKey(m.Name, m.Version), m); err != nil {
			t.Fatal(err)
		}
		return nil
	}
}

// configAction runs `benchline worker` with the test stack's settings in
// the environment plus env: a worker that accepts its configuration runs
// until the deadline, which fails the case.
func configAction(t *testing.T, h *badHarness, args []string, env ...string) func(context.Context) error {
	bin := h.binary(t)
	return func(ctx context.Context) error {
		cmd := exec.CommandContext(ctx, bin, append([]string{"worker", "--queues", "main"}, args...)...)
		cmd.Env = workerEnv("badinput-config", stack.BaselineURL, env...)
		out, err := cmd.CombinedOutput()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err == nil {
			return nil
		}
		return fmt.Errorf("%v: %s", err, out)
	}
}

// parquetCase damages part 1 of a fresh synthetic version with damage and
// evaluates it: the error must name the part and want.
func parquetCase(name, dependsOn string, seed int, damage func([]byte) []byte, want ...string) badInput {
	return badInput{name: name, dependsOn: dependsOn,
		prepare: func(t *testing.T, h *badHarness) func(context.Context) error {
			ds, p := tamperedDataset(t, seed, func(_ context.Context, _ *catalog.Manifest, _ string, b []byte) []byte { return damage(b) })
			h.last = map[string]string{"file": p}
			return evalAction(t, h, ds)
		},
		want: func(h *badHarness) []string { return append([]string{h.last["file"]}, want...) }}
}

// configCase is a case of the corpus file testdata/badinput/<name>.yaml:
// a --config file for names under config/, a providers file
// (BENCHLINE_PROVIDERS) for those under providers/. The error must name the
// file and want.
func configCase(name, dependsOn string, want []string, env ...string) badInput {
	return badInput{name: name, dependsOn: dependsOn, timeout: time.Minute,
		prepare: func(t *testing.T, h *badHarness) func(context.Context) error {
			file, err := filepath.Abs(filepath.Join(badInputDir, name+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			h.last = map[string]string{"file": file}
			if strings.HasPrefix(name, "providers/") {
				return configAction(t, h, nil, append(env, "BENCHLINE_PROVIDERS="+file)...)
			}
			return configAction(t, h, []string{"--config", file}, env...)
		},
		want: func(h *badHarness) []string { return append([]string{h.last["file"]}, want...) }}
}

func badInputs() []badInput {
	fileIn := func(h *badHarness) []string { return []string{h.last["file"]} }
	return []badInput{
		{name: "bfcl/truncated-line", prepare: func(t *testing.T, h *badHarness) func(context.Context) error {
			dir := copyCorpus(t, "bfcl-truncated-line")
			h.last = map[string]string{"file": filepath.Join(dir, "BFCL_v4_simple_python.json") + ":2:"}
			return buildAction(t, bfcl.Name, datasets.Request{Source: dir})
		}, want: fileIn},
		{name: "bfcl/missing-answer", prepare: func(t *testing.T, h *badHarness) func(context.Context) error {
			dir := copyCorpus(t, "bfcl-missing-answer")
			h.last = map[string]string{"file": filepath.Join(dir, "BFCL_v4_simple_python.json") + ":2:"}
			return buildAction(t, bfcl.Name, datasets.Request{Source: dir})
		}, want: func(h *badHarness) []string { return []string{h.last["file"], "simple_python_1", "no possible answer"} }},
		{name: "bfcl/duplicate-id", prepare: func(t *testing.T, h *badHarness) func(context.Context) error {
			dir := copyCorpus(t, "bfcl-duplicate-id")
			h.last = map[string]string{"file": filepath.Join(dir, "BFCL_v4_simple_python.json") + ":2:"}
			return buildAction(t, bfcl.Name, datasets.Request{Source: dir})
		}, want: func(h *badHarness) []string { return []string{h.last["file"], "duplicate id"} }},
		{name: "bfcl/binary-file", prepare: func(t *testing.T, h *badHarness) func(context.Context) error {
			_, a := bfclLines(t, 1)
			dir := bfclDir(t, string(randomBytes(1, 64<<10)), a)
			h.last = map[string]string{"file": filepath.Join(dir, "BFCL_v4_simple_python.json") + ":1:"}
			return buildAction(t, bfcl.Name, datasets.Request{Source: dir})
		}, want: fileIn},
		{name: "bfcl/invalid-utf8",
			prepare: func(t *testing.T, h *badHarness) func(context.Context) error {
				q, a := bfclLines(t, 2)
				q[1] = strings.Replace(q[1], "72 degrees", "72 \xff\xfe degrees", 1)
				dir := bfclDir(t, strings.Join(q, ""), a)
				h.last = map[string]string{"file": filepath.Join(dir, "BFCL_v4_simple_python.json") + ":2:"}
				return buildAction(t, bfcl.Name, datasets.Request{Source: dir})
			}, want: fileIn},
		{name: "bfcl/empty-dir", prepare: func(t *testing.T, h *badHarness) func(context.Context) error {
			dir := t.TempDir()
			h.last = map[string]string{"file": dir}
			return buildAction(t, bfcl.Name, datasets.Request{Source: dir})
		}, want: func(h *badHarness) []string {
			return []string{h.last["file"], "no BFCL_v4_<category>.json files found"}
		}},
		{name: "bfcl/missing-source",
			prepare: func(t *testing.T, h *badHarness) func(context.Context) error {
				dir := filepath.Join(t.TempDir(), "no-such-dir")
				h.last = map[string]string{"file": dir}
				return buildAction(t, bfcl.Name, datasets.Request{Source: dir})
			}, want: fileIn},
		{name: "bfcl/url-404",
			prepare: func(t *testing.T, h *badHarness) func(context.Context) error {
				srv := httptest.NewServer(http.NotFoundHandler())
				t.Cleanup(srv.Close)
				h.last = map[string]string{"file": srv.URL + "/bfcl"}
				return buildAction(t, bfcl.Name, datasets.Request{Source: srv.URL + "/bfcl/"})
			}, want: func(h *badHarness) []string { return []string{h.last["file"], "404"} }},
		{name: "ifevalcode/unknown-language", prepare: func(t *testing.T, h *badHarness) func(context.Context) error {
			dir := copyCorpus(t, "ifevalcode-unknown-language")
			h.last = map[string]string{"file": filepath.Join(dir, ifevalcode.DefaultFile) + ":2:"}
			return buildAction(t, ifevalcode.Name, datasets.Request{Source: dir})
		}, want: func(h *badHarness) []string { return []string{h.last["file"], `"cobol"`} }},
		{name: "ifevalcode/huge-broken-line", timeout: 3 * time.Minute, prepare: func(t *testing.T, h *badHarness) func(context.Context) error {
			// Line 2 is a 48 MiB JSON string that never ends.
			first, err := os.ReadFile("../../datasets/ifevalcode/fixtures/" + ifevalcode.DefaultFile)
			if err != nil {
				t.Fatal(err)
			}
			line1, _, _ := bytes.Cut(first, []byte("\n"))
			dir := t.TempDir()
			body := append(append(line1, "\n"+`{"id": "huge", "english_question": "`...), bytes.Repeat([]byte("a"), 48<<20)...)
			if err := os.WriteFile(filepath.Join(dir, ifevalcode.DefaultFile), body, 0o644); err != nil {
				t.Fatal(err)
			}
			h.last = map[string]string{"file": filepath.Join(dir, ifevalcode.DefaultFile) + ":2:"}
			return buildAction(t, ifevalcode.Name, datasets.Request{Source: dir})
		}, want: fileIn},
		{name: "trbench/wrong-schema-version", prepare: func(t *testing.T, h *badHarness) func(context.Context) error {
			// A toolpref "version" whose manifest says another schema
			// version than trbench reads (no latest pointer is written).
			m := catalog.Manifest{Name: "toolpref", Version: "badschema0000001", Schema: schemas.Table{Name: schemas.ToolPrefPairTable.Name, Version: 99}, Rows: 0, CreatedAt: time.Unix(0, 0).UTC()}
			if err := blob.PutJSON(context.Background(), stack.Store, catalog.ManifestKey(m.Name, m.Version), m); err != nil {
				t.Fatal(err)
			}
			h.last = map[string]string{"file": "toolpref@badschema0000001"}
			return buildAction(t, trbench.Name, datasets.Request{Params: map[string]string{"toolpref": m.Version}})
		}, want: func(h *badHarness) []string { return []string{h.last["file"], "v99"} }},

		// Damaged data files of a published version, read by an evaluation.
		parquetCase("parquet/truncated", "", 901, func(b []byte) []byte { return b[:len(b)/2] }, "does not match its manifest"),
		parquetCase("parquet/corrupt-other-size", "", 902, func(b []byte) []byte { return randomBytes(902, len(b)+17) }, "does not match its manifest"),
		parquetCase("parquet/same-size-random", "", 903, func(b []byte) []byte { return randomBytes(903, len(b)) }),
		parquetCase("parquet/same-size-footer", "", 904, func(b []byte) []byte { return sameSize(b, -8, 8) }),
		parquetCase("parquet/same-size-page", "", 905, func(b []byte) []byte { return sameSize(b, len(b)/3, 64) }),
		// A part of another table (BFCL items) in place of a synthetic
		// part, with a manifest that matches its bytes: only the check of
		// a part's columns against its table's on read can tell.
		{name: "parquet/other-table",
			prepare: func(t *testing.T, h *badHarness) func(context.Context) error {
				ds, p := tamperedDataset(t, 906, foreignPart(t))
				h.last = map[string]string{"file": p}
				return evalAction(t, h, ds)
			}, want: func(h *badHarness) []string {
				return []string{h.last["file"], "missing [", "extra [functions_json"}
			}},
		{name: "manifest/wrong-schema-version",
			prepare: func(t *testing.T, h *badHarness) func(context.Context) error {
				ds, _ := tamperedDataset(t, 907, func(ctx context.Context, m *catalog.Manifest, _ string, _ []byte) []byte {
					m.Schema.Version = 99
					if err := blob.PutJSON(ctx, stack.Store, catalog.ManifestKey(m.Name, m.Version), m); err != nil {
						t.Fatal(err)
					}
					return nil
				})
				h.last = map[string]string{"file": ds}
				return evalAction(t, h, ds)
			}, want: func(h *badHarness) []string { return []string{h.last["file"], "v99"} }},

		// Configuration and providers files, read by `benchline worker`.
		configCase("config/yaml-syntax", "", []string{"yaml: line "}),
		configCase("config/unknown-key", "", []string{"bogus_key"}),
		configCase("config/wrong-type", "", []string{"line 2|.yaml:2:"}),
		configCase("config/negative-worker-share", "", []string{"worker_share"}),
		// The file's S3 settings are its own only without BENCHLINE_S3_*.
		configCase("config/bad-endpoint", "", []string{"endpoint"}, "BENCHLINE_S3_ENDPOINT=", "BENCHLINE_S3_BUCKET="),
		configCase("providers/yaml-syntax", "", []string{"yaml: line "}),
		configCase("providers/no-base-url", "", []string{"local", "base_url"}),
		configCase("providers/unknown-key", "", []string{"max_concurency"}),
	}
}

// containsAny reports whether s contains one of subs.
func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// TestBadInputCorpus runs every case of the bad-input corpus and prints a
// table of the outcomes.
func TestBadInputCorpus(t *testing.T) {
	h := &badHarness{parent: t, replies: &hostileModel{}, dir: t.TempDir()}
	all := os.Getenv(runDependent) != ""
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "case\tdepends on\toutcome\ttime\terror")
	for _, c := range append(append(badInputs(), boundedCases()...), replyCases(t)...) {
		t.Run(c.name, func(t *testing.T) {
			if c.dependsOn != "" && !all {
				fmt.Fprintf(tw, "%s\t%s\tskipped\t\t\n", c.name, c.dependsOn)
				t.Skipf("waits for %s; %s=1 runs it", c.dependsOn, runDependent)
			}
			act := c.prepare(t, h)
			before := publishedState(t)
			timeout := c.timeout
			if timeout == 0 {
				timeout = 90 * time.Second
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			start := time.Now()
			err := act(ctx)
			took := time.Since(start).Round(100 * time.Millisecond)
			outcome := "ok"
			defer func() {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%s\n", c.name, c.dependsOn, outcome, took, excerpt(fmt.Sprint(err), 110))
			}()
			switch {
			case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
				outcome = "FAIL: no answer"
				t.Errorf("no answer within %v (the input hangs or is retried forever); last error: %v", timeout, err)
			case err == nil:
				outcome = "FAIL: accepted"
				t.Errorf("bad input accepted")
			default:
				for _, w := range c.want(h) {
					if !containsAny(err.Error(), strings.Split(w, "|")) {
						outcome = "FAIL: not named"
						t.Errorf("error does not name %q: %v", w, err)
					}
				}
			}
			if keys := publishedSince(t, before); len(keys) > 0 {
				outcome = "FAIL: published"
				t.Errorf("bad input published %d objects under datasets/: %v", len(keys), keys)
			}
		})
	}
	tw.Flush()
	t.Logf("bad-input corpus:\n%s", table.String())
}
