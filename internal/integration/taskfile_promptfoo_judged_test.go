package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/scorers"
	"github.com/benchline/benchline/scorers/promptfoo"
	"github.com/benchline/benchline/scorers/taskfile"
	"github.com/benchline/benchline/workflows"
)

// oracleJudge answers every judge question with its oracle, as
// baseline/judge does.
type oracleJudge struct{}

func (oracleJudge) Complete(_ context.Context, req modelapi.Request) (modelapi.Response, error) {
	return modelapi.Response{Choices: []modelapi.Choice{{Content: req.Oracle}}}, nil
}

// TestTaskFilePromptfooJudged translates a promptfoo config of judged
// assertions (llm-rubric, not-llm-rubric, model-graded-closedqa,
// factuality, with a plain one under a weight), builds it on the real
// stack and evaluates baseline/echo judged by baseline/judge: each row's
// pass and score are what the translated task gives in process with a
// judge answering from the oracle (so the oracle reached the baseline
// server and back), the audit records of every judge call are stored, a
// batch run gives the same rows, and a judge that replies garbage gives
// judge errors and no pass or score, never zeros.
func TestTaskFilePromptfooJudged(t *testing.T) {
	dir := t.TempDir()
	var tests strings.Builder
	for i := range 8 {
		fmt.Fprintf(&tests, "  - vars: {word: w%d}\n    assert:\n", i)
		rubric := `mentions "{{ word }}"`
		if i%2 == 1 {
			rubric = `mentions "{{ word }}" and "never"` // half met: fails, score 0.5
		}
		fmt.Fprintf(&tests, "      - {type: llm-rubric, value: '%s'}\n", rubric)
		fmt.Fprintf(&tests, "      - {type: model-graded-closedqa, value: 'says \"please\"'}\n")
		expert := "{{ word }}"
		if i%4 == 3 {
			expert = "something else" // disagrees: (D), score 0
		}
		fmt.Fprintf(&tests, "      - {type: factuality, value: '%s'}\n", expert)
		if i%3 == 0 {
			fmt.Fprintf(&tests, "      - {type: not-llm-rubric, value: 'mentions \"never\"', weight: 2}\n")
		}
		if i == 5 {
			fmt.Fprintf(&tests, "      - {type: contains, value: 'nope', weight: 3}\n")
		}
	}
	writeFiles(t, dir, map[string]string{"pfjudged.yaml": "description: Judged echo (an integration test's promptfoo config)\n" +
		"prompts: ['Say {{ word }} please.']\nproviders: [openai:chat:echo]\ntests:\n" + tests.String()})
	pf := promptfooBeside(t, dir, "pfjudged.yaml")
	task := pf.task
	compiled, err := taskfile.Load(task, pf.taskFile)
	if err != nil {
		t.Fatal(err)
	}
	rowsByID := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(string(pf.rows)), "\n") {
		var f map[string]any
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Fatal(err)
		}
		rowsByID[f["id"].(string)] = f
	}
	built, err := buildVia(t, "pfjudged", datasets.Request{Source: task, Task: true})
	if err != nil {
		t.Fatalf("%v\n%s", err, pf.taskFile)
	}
	if built.Rows != 8 {
		t.Fatalf("built %d rows, want 8", built.Rows)
	}
	ds := "pfjudged@" + built.Version
	ctx := context.Background()
	eval := func(judges string, batch bool) workflows.EvaluateModelResult {
		t.Helper()
		out, err := evalVia(t, "", workflows.EvaluateModelInput{Request: runs.Request{Dataset: ds, Model: "baseline/echo", Batch: batch,
			Judges: map[string]string{judge.RoleJudge: judges}}})
		if err != nil {
			t.Fatal(err)
		}
		if s := out.Summary; int64(s.Scored) != built.Rows || s.InfraFailed != 0 {
			t.Fatalf("judged by %s: scored %d of %d, infrastructure failures %d", judges, s.Scored, built.Rows, s.InfraFailed)
		}
		return out
	}

	direct := eval("baseline/judge", false)
	_, rows := resultRows(ctx, t, direct.RunID)
	passed := 0
	versions := map[string]bool{}
	for _, r := range rows {
		want, err := compiled.ScoreJudged(ctx, scorers.Env{Models: oracleJudge{}, Judges: map[string]string{judge.RoleJudge: "baseline/judge"}},
			[]openai.ChatCompletionMessage{{Role: "user", Content: "x"}}, taskfile.Row{ID: r.SampleID, Fields: rowsByID[r.SampleID]}, taskfile.Reply{Text: r.Response})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []string{"pass", "score", taskfile.MetricJudgeErrorRate} {
			if w, ok := want.Metrics[m]; !ok || math.Abs(r.Metrics[m]-w) > 1e-12 {
				t.Errorf("%s: %s %v, the task in process gives %v (reply %q)", r.SampleID, m, r.Metrics[m], want.Metrics, r.Response)
			}
		}
		if r.Metrics["pass"] == 1 {
			passed++
		}
		var d taskfile.Details
		if err := json.Unmarshal([]byte(r.DetailsJSON), &d); err != nil {
			t.Fatalf("row %s: details: %v", r.SampleID, err)
		}
		if len(d.Judgements) != 1 || len(d.Ratings) != 1 {
			t.Errorf("row %s: %d judgements, %d ratings: want one of each (pass and score share one judging)", r.SampleID, len(d.Judgements), len(d.Ratings))
		}
		recs := 0
		for _, jm := range d.Judgements {
			for _, rec := range jm.Judges {
				recs++
				v := rec.Verdict
				versions[v.PromptVersion] = true
				if v.Judge != "baseline/judge" || v.Reply == "" || v.Error != "" || len(v.Parsed) == 0 {
					t.Errorf("row %s: record %+v", r.SampleID, v)
				}
			}
		}
		if recs < 3 || recs > 4 {
			t.Errorf("row %s: %d audit records, want one per judged assertion", r.SampleID, recs)
		}
	}
	if passed == 0 || passed == len(rows) {
		t.Errorf("%d of %d pass: the config should pass some and fail others", passed, len(rows))
	}
	for _, v := range []string{promptfoo.RubricPromptVersion, promptfoo.ClosedQAPromptVersion, promptfoo.FactualityPromptVersion} {
		if !versions[v] {
			t.Errorf("no audit record of %s", v)
		}
	}

	batch := eval("baseline/judge", true)
	if !batch.Summary.Batch {
		t.Error("the batch run's summary does not say batch")
	}
	for _, m := range []string{"pass", "score", taskfile.MetricJudgeErrorRate} {
		if a, b := metric(direct.Summary, m), metric(batch.Summary, m); a.Mean != b.Mean || a.N != b.N {
			t.Errorf("%s: direct %+v, batch %+v", m, a, b)
		}
	}

	garbage := eval("baseline/judge-malformed-1", false)
	if got := metric(garbage.Summary, taskfile.MetricJudgeErrorRate); got.Mean != 1 || int64(got.N) != built.Rows {
		t.Errorf("garbage judge: judge_error_rate %+v, want 1 on every row", got)
	}
	for _, m := range []string{"pass", "score"} {
		if got := metric(garbage.Summary, m); got.N != 0 {
			t.Errorf("garbage judge: %s %+v, want no sample scored", m, got)
		}
	}
	_, grows := resultRows(ctx, t, garbage.RunID)
	for _, r := range grows {
		if !strings.Contains(r.DetailsJSON, `"error":"judge: unparseable reply`) {
			t.Fatalf("row %s: details %s lack the parse error", r.SampleID, excerpt(r.DetailsJSON, 400))
		}
	}
	t.Logf("baseline/echo judged by baseline/judge: pass %.3f, score %.3f over %d; batch the same; judge-malformed-1: judge_error_rate %.0f, no pass or score",
		metric(direct.Summary, "pass").Mean, metric(direct.Summary, "score").Mean, metric(direct.Summary, "pass").N, metric(garbage.Summary, taskfile.MetricJudgeErrorRate).Mean)
}
