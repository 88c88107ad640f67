package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/scorers/taskfile"
	"github.com/benchline/benchline/workflows"
)

// TestTaskFileJudgePanel builds the rubric-panel acceptance task file and
// evaluates it on the real stack with judge panels of baseline judges:
// every judge call's record (prompt version, reply, parsed verdict) is in
// the result rows, baseline/reference scores 1 and baseline/noisy-0.3
// less, the run reports the panel's agreement, and a judge that replies
// garbage gives counted judge errors, not zeros.
func TestTaskFileJudgePanel(t *testing.T) {
	file, err := filepath.Abs("testdata/tasks/rubric-panel/task.yaml")
	if err != nil {
		t.Fatal(err)
	}
	head, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	// The panel its eval-flags line names.
	const flag = "# eval-flags: --judge judge="
	first, _, _ := strings.Cut(string(head), "\n")
	if !strings.HasPrefix(first, flag) {
		t.Fatalf("the task file's first line %q is no %q line", first, flag)
	}
	panel := strings.TrimPrefix(first, flag)
	built, err := buildVia(t, "it-rubric-panel", datasets.Request{Source: file, Task: true})
	if err != nil {
		t.Fatal(err)
	}
	ds := "it-rubric-panel@" + built.Version
	eval := func(model, judges string) aggregate.Summary {
		t.Helper()
		out, err := evalVia(t, "", workflows.EvaluateModelInput{Request: runs.Request{Dataset: ds, Model: model,
			Judges: map[string]string{judge.RoleJudge: judges}}})
		if err != nil {
			t.Fatal(err)
		}
		if s := out.Summary; s.Scored != built.Rows || s.InfraFailed != 0 {
			t.Fatalf("%s judged by %s: scored %d of %d, infrastructure failures %d", model, judges, s.Scored, built.Rows, s.InfraFailed)
		}
		return out.Summary
	}

	ref := eval("baseline/reference", panel)
	if got := metric(ref, "rubric"); got.Mean != 1 || int64(got.N) != built.Rows {
		t.Errorf("baseline/reference: rubric %+v, want 1 over %d", got, built.Rows)
	}
	if got := metric(ref, "tone"); got.Mean != 1 {
		t.Errorf("baseline/reference: tone %+v, want 1", got)
	}
	// judge-malformed-0.2 fails some calls twice: counted, never a 0.
	if got := metric(ref, taskfile.MetricJudgeErrorRate); int64(got.N) != built.Rows || got.Mean <= 0 || got.Mean >= 1.0/3 {
		t.Errorf("baseline/reference: judge_error_rate %+v, want some errors, from one judge of three at most", got)
	}
	if a := agreementOf(t, ref, "rubric"); len(a.Judges) != 3 || a.Paired == 0 || a.Alpha == nil || *a.Alpha != 1 {
		t.Errorf("baseline/reference: agreement %+v, want alpha 1 over paired items of three judges", a)
	}

	_, rows := resultRows(context.Background(), t, ref.RunID)
	var malformed int
	for _, r := range rows {
		var d taskfile.Details
		if err := json.Unmarshal([]byte(r.DetailsJSON), &d); err != nil {
			t.Fatalf("row %s: details: %v", r.SampleID, err)
		}
		if len(d.Judgements) != 2 || len(d.Ratings) != 2 || strings.Join(d.Judges, ",") != panel {
			t.Fatalf("row %s: judgements %d, ratings %d, judges %v", r.SampleID, len(d.Judgements), len(d.Ratings), d.Judges)
		}
		for _, jm := range d.Judgements {
			for _, rec := range jm.Judges {
				v := rec.Verdict
				if v.PromptVersion != taskfile.RubricPromptVersion || v.Reply == "" {
					t.Fatalf("row %s: record %+v", r.SampleID, v)
				}
				if v.Error != "" {
					malformed++
					if v.Judge != "baseline/judge-malformed-0.2" || v.Parsed != nil {
						t.Errorf("row %s: a judge error from %s: %+v", r.SampleID, v.Judge, v)
					}
				} else if !strings.Contains(string(v.Parsed), `"verdicts"`) {
					t.Errorf("row %s: parsed verdict %s", r.SampleID, v.Parsed)
				}
			}
		}
	}
	if malformed == 0 {
		t.Error("no judge error recorded from baseline/judge-malformed-0.2")
	}

	noisy := eval("baseline/noisy-0.3", panel)
	t.Logf("rubric: baseline/reference %.3f, baseline/noisy-0.3 %.3f; judge_error_rate %.3f; agreement %+v",
		metric(ref, "rubric").Mean, metric(noisy, "rubric").Mean, metric(ref, taskfile.MetricJudgeErrorRate).Mean, agreementOf(t, noisy, "rubric"))
	if got := metric(noisy, "rubric"); got.Mean >= 1 || int64(got.N) != built.Rows {
		t.Errorf("baseline/noisy-0.3: rubric %+v, want below 1 over %d", got, built.Rows)
	}

	// A judge that replies garbage to every call: every label a judge
	// error, counted; no sample scored 0 for it.
	garbage := eval("baseline/reference", "baseline/judge-malformed-1")
	if got := metric(garbage, taskfile.MetricJudgeErrorRate); got.Mean != 1 || int64(got.N) != built.Rows {
		t.Errorf("garbage judge: judge_error_rate %+v, want 1 on every row", got)
	}
	if got := metric(garbage, "rubric"); got.N != 0 {
		t.Errorf("garbage judge: rubric %+v, want no sample scored", got)
	}
	_, grows := resultRows(context.Background(), t, garbage.RunID)
	for _, r := range grows {
		if !strings.Contains(r.DetailsJSON, `"error":"judge: unparseable reply`) {
			t.Fatalf("row %s: details %s lack the parse error", r.SampleID, excerpt(r.DetailsJSON, 400))
		}
	}
}

// TestTaskFileJudgeDefaultPanel builds the demo's judged task file
// (demo-explain: a rubric from a column, a qa_grade and a scale) and
// evaluates it with no --judge: its default panel judges, with noisy
// judges in it, and the reference scores near 1, the noisy baseline less;
// in batch mode the judges' answers come in later rounds and every row is
// judged all the same.
func TestTaskFileJudgeDefaultPanel(t *testing.T) {
	file, err := filepath.Abs("../devstack/demotasks/explain/task.yaml")
	if err != nil {
		t.Fatal(err)
	}
	built, err := buildVia(t, "demo-explain", datasets.Request{Source: file, Task: true})
	if err != nil {
		t.Fatal(err)
	}
	ds := "demo-explain@" + built.Version
	eval := func(model string, batch bool) (aggregate.Summary, string) {
		t.Helper()
		out, err := evalVia(t, "", workflows.EvaluateModelInput{Request: runs.Request{Dataset: ds, Model: model, Batch: batch}})
		if err != nil {
			t.Fatal(err)
		}
		if s := out.Summary; int64(s.Scored) != built.Rows || s.InfraFailed != 0 {
			t.Fatalf("%s: scored %d of %d, infrastructure failures %d", model, s.Scored, built.Rows, s.InfraFailed)
		}
		return out.Summary, out.RunID
	}
	ref, runID := eval("baseline/reference", false)
	noisy, _ := eval("baseline/noisy-0.3", false)
	for _, m := range []string{"rubric", "correct", "clarity"} {
		r, n := metric(ref, m), metric(noisy, m)
		t.Logf("%s: baseline/reference %.3f, baseline/noisy-0.3 %.3f over %d", m, r.Mean, n.Mean, r.N)
		if r.N == 0 || r.Mean < 0.7 || n.Mean >= r.Mean {
			t.Errorf("%s: reference %+v, noisy-0.3 %+v: want the reference near 1 and the noisy one less", m, r, n)
		}
	}
	_, rows := resultRows(context.Background(), t, runID)
	for _, r := range rows {
		var d taskfile.Details
		if err := json.Unmarshal([]byte(r.DetailsJSON), &d); err != nil {
			t.Fatal(err)
		}
		if strings.Join(d.Judges, ",") != "baseline/judge,baseline/judge-noisy-0.1,baseline/judge-noisy-0.2" || len(d.Judgements) != 3 {
			t.Fatalf("row %s: judges %v, %d judgements: want the task file's panel on three scorers", r.SampleID, d.Judges, len(d.Judgements))
		}
		if v := d.Judgements[2].Judges[0].Verdict; !strings.HasPrefix(v.PromptVersion, taskfile.ScalePromptVersion+"+") || !strings.Contains(string(v.Parsed), `"score"`) {
			t.Fatalf("row %s: the scale's record %+v", r.SampleID, v)
		}
	}
	batch, _ := eval("baseline/noisy-0.4", true)
	if got := metric(batch, "rubric"); int64(got.N) != built.Rows || got.Mean >= metric(ref, "rubric").Mean {
		t.Errorf("baseline/noisy-0.4 in batch mode: rubric %+v, want every row judged, below the reference", got)
	}
}
