package integration

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers/promptfoo"
	"github.com/benchline/benchline/workflows"
)

// TestTaskFilePromptfoo translates a promptfoo config (a file:// prompt,
// file:// CSV tests, inline tests, defaultTest JavaScript, a threshold)
// into a task file and its rows, as dataset build --task does, builds it
// on the real stack and evaluates baseline/echo (which repeats the prompt)
// directly and in batch mode: every sample's pass and score equal what
// promptfoo.Grade (task check --replies) gives for the reply the run
// stored, batch equals direct, a board refreshes it and it publishes.
func TestTaskFilePromptfoo(t *testing.T) {
	dir := t.TempDir()
	var csv strings.Builder
	csv.WriteString("word,n,__expected\n")
	for i := range 10 {
		want := fmt.Sprintf("contains: w%d", i)
		if i%3 == 0 {
			want = fmt.Sprintf("icontains: W%d!", i) // echo never says "!"
		}
		fmt.Fprintf(&csv, "w%d,%d,%s\n", i, i, want)
	}
	writeFiles(t, dir, map[string]string{
		"prompt.txt": "Repeat {{ word }} {{ n }} times.\n",
		"tests.csv":  csv.String(),
		"promptfooconfig.yaml": `description: Echo a word (an integration test's promptfoo config)
prompts: [file://prompt.txt]
providers:
  - id: openai:chat:echo
    config: {apiBaseUrl: http://127.0.0.1:1/v1, temperature: 0}
defaultTest:
  assert: [{type: javascript, value: "output.includes(String(context.vars.n))", weight: 2}]
tests:
  - file://tests.csv
  - vars: {word: "x", n: 7}
    threshold: 0.5
    assert: [{type: starts-with, value: "Repeat"}, {type: equals, value: 4}]
`,
	})
	pf := promptfooBeside(t, dir, "promptfooconfig.yaml")
	task, cfg := pf.task, pf.cfg
	samples, err := cfg.Samples()
	if err != nil {
		t.Fatal(err)
	}
	built, err := buildVia(t, "promptfooconfig", datasets.Request{Source: task, Task: true})
	if err != nil {
		t.Fatalf("%v\n%s", err, pf.taskFile)
	}
	if built.Rows != int64(len(samples)) || built.Rows != 11 {
		t.Fatalf("built %d rows, want 11 samples", built.Rows)
	}
	ds := "promptfooconfig@" + built.Version
	ctx := context.Background()

	// Each row's pass and score are promptfoo.Grade's on the stored reply.
	check := func(runID string) map[string]schemas.ResultRow {
		t.Helper()
		_, rows := resultRows(ctx, t, runID)
		bySample := map[string]schemas.ResultRow{}
		passed := 0
		for _, r := range rows {
			bySample[r.SampleID] = r
		}
		for _, s := range samples {
			r, ok := bySample[s.ID]
			if !ok {
				t.Fatalf("run %s has no row for %s", runID, s.ID)
			}
			res := promptfoo.Grade(cfg.Tests[s.Test], cfg.Providers[0], s, promptfoo.Output{Text: r.Response})
			pass := 0.0
			if res.Pass {
				pass, passed = 1, passed+1
			}
			if r.Metrics["pass"] != pass || math.Abs(r.Metrics["score"]-res.Score) > 1e-12 {
				t.Errorf("%s: pass %v score %v, task check gives %v and %v (reply %q)", s.ID, r.Metrics["pass"], r.Metrics["score"], pass, res.Score, r.Response)
			}
		}
		if passed == 0 || passed == len(samples) {
			t.Errorf("run %s: %d of %d pass: the config should pass some and fail others", runID, passed, len(samples))
		}
		return bySample
	}
	direct, err := evalVia(t, "", workflows.EvaluateModelInput{Request: runs.Request{Dataset: ds, Model: "baseline/echo"}})
	if err != nil {
		t.Fatal(err)
	}
	if direct.Summary.Metrics[0].Name != "pass" || metric(direct.Summary, "score").N != 11 {
		t.Errorf("metrics %+v: want pass first, then score over 11", direct.Summary.Metrics)
	}
	drows := check(direct.RunID)

	batch, err := evalVia(t, "", workflows.EvaluateModelInput{Request: runs.Request{Dataset: ds, Model: "baseline/echo", Batch: true}})
	if err != nil {
		t.Fatal(err)
	}
	if !batch.Summary.Batch {
		t.Error("the batch run's summary does not say batch")
	}
	for id, r := range check(batch.RunID) {
		if d := drows[id]; d.Response != r.Response || fmt.Sprint(d.Metrics) != fmt.Sprint(r.Metrics) {
			t.Errorf("%s: batch %q %v, direct %q %v", id, r.Response, r.Metrics, d.Response, d.Metrics)
		}
	}
	for _, m := range []string{"pass", "score"} {
		if a, b := metric(direct.Summary, m), metric(batch.Summary, m); a.Mean != b.Mean || a.N != b.N {
			t.Errorf("%s: direct %+v, batch %+v", m, a, b)
		}
	}

	res, err := refreshBoard(t, "name: it-promptfoo\nbenchmarks: [{dataset: promptfooconfig, version: "+built.Version+"}]\nmodels: [baseline/echo, baseline/reference]\n")
	if err != nil {
		t.Fatal(err)
	}
	if res.RunsStarted+res.RunsReused != 2 || len(res.Failed) != 0 {
		t.Fatalf("refresh: %+v", res)
	}
	scores, err := blob.GetBytes(ctx, stack.Store, leaderboard.ScoresKey("it-promptfoo", res.Stamp))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(scores), "Echo a word") || !strings.Contains(string(scores), `"promptfooconfig"`) {
		t.Errorf("scores.json lacks the config's benchmark or description: %s", excerpt(string(scores), 400))
	}

	// Published as a release, every sample there.
	pub, err := publishVia(t, ds, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if pub.Rows != 11 {
		t.Errorf("published %d rows, want 11", pub.Rows)
	}
}
