package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/benchline/benchline/activities"
	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/synthetic"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/gateway"
	"github.com/benchline/benchline/internal/registry"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/scorers"
)

// engineReferences publishes a synthetic dataset, plans a run on it as
// the PlanRun activity does (which writes the references file), and
// returns the store, the plan's task and the references file's key.
func engineReferences(t *testing.T, rows int) (blob.Store, catalog.Manifest, scorers.Task, string) {
	t.Helper()
	ctx := context.Background()
	store := blobtest.NewMemory()
	b := synthetic.Builder{}
	env := datasets.Env{Store: store}
	plan, err := b.Plan(ctx, env, datasets.Request{Params: map[string]string{"rows": strconv.Itoa(rows), "part_rows": "10"}})
	if err != nil {
		t.Fatal(err)
	}
	m := catalog.Manifest{Name: plan.Dataset, Version: plan.Version, Schema: plan.Schema, BuilderVersion: plan.BuilderVersion, Params: plan.Params}
	for _, p := range plan.Parts {
		info, err := b.WritePart(ctx, env, plan, p, catalog.PartKey(plan.Dataset, plan.Version, p.Index), func(int64) {})
		if err != nil {
			t.Fatal(err)
		}
		m.Files = append(m.Files, catalog.File{Path: catalog.PartPath(p.Index), Rows: info.Rows, Bytes: info.Bytes, SHA256: info.SHA256})
		m.Rows += info.Rows
	}
	if err := catalog.Publish(ctx, store, m, "card", catalog.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	tasks := registry.Default()
	a := &activities.Eval{Store: store, Benchmarks: tasks}
	res, err := a.PlanRun(ctx, activities.PlanRunInput{Request: runs.Request{Dataset: m.Name + "@" + m.Version, Model: "baseline/reference"}})
	if err != nil {
		t.Fatal(err)
	}
	task, err := tasks.Task(res.Dataset)
	if err != nil {
		t.Fatal(err)
	}
	return store, m, task, activities.ReferencesKey(m.Name, m.Version, task.Version())
}

// serveBaselines runs `benchline serve-baselines args...` on a free port
// until the test ends and returns its base URL.
func serveBaselines(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	root := newRootCmd()
	root.SetOut(pw)
	root.SetErr(io.Discard)
	root.SetArgs(append([]string{"serve-baselines", "--addr", "127.0.0.1:0"}, args...))
	go func() {
		err := root.ExecuteContext(ctx)
		pw.CloseWithError(err)
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	urlRE := regexp.MustCompile(`http://\S+/v1`)
	line, err := bufio.NewReader(pr).ReadString('\n')
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if err != nil {
		t.Fatalf("serve-baselines ended before listening: %v", err)
	}
	u := urlRE.FindString(line)
	if u == "" {
		t.Fatalf("no address in %q", line)
	}
	return u
}

// TestServeBaselinesReadsEngineReferences is the round trip of finding 7:
// the references file the engine writes, given to serve-baselines
// --references, makes baseline/reference answer every sample right.
func TestServeBaselinesReadsEngineReferences(t *testing.T) {
	ctx := context.Background()
	store, m, task, key := engineReferences(t, 30)
	rc, err := store.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(rc)
	_ = rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, body, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, path := range map[string]string{"file": file, "directory": filepath.Join(dir, "references")} {
		t.Run(name, func(t *testing.T) {
			url := serveBaselines(t, "--references", path)
			gcfg := &gateway.Config{Providers: map[string]*gateway.Provider{gateway.BaselineProvider: {BaseURL: url}}}
			gw, err := gateway.New(gateway.Options{Config: gcfg, Env: func(string) (string, bool) { return "", false }})
			if err != nil {
				t.Fatal(err)
			}
			env := scorers.Env{Models: gw, Model: "baseline/reference", NoCache: true}
			n := 0
			for _, f := range m.Files {
				err := task.ReadSamples(ctx, store, catalog.Dir(m.Name, m.Version)+f.Path, 0, f.Rows, func(s scorers.Sample) error {
					out, err := task.Evaluate(ctx, env, s)
					if err != nil {
						return err
					}
					n++
					if out.Metrics["exact"] != 1 {
						t.Errorf("sample %s: answered %q, not its reference", s.ID, out.Response)
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			if n != 30 {
				t.Errorf("evaluated %d samples, want 30", n)
			}
		})
	}
}
