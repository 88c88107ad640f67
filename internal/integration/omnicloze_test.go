package integration

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/omnicloze"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
	scorer "github.com/benchline/benchline/scorers/omnicloze"
	"github.com/benchline/benchline/workflows"
)

// TestOmniClozeOnStack builds omnicloze on the real stack with a noisy
// baseline writer (rejections counted by reason in the build result and
// the manifest), evaluates the reference and the noisy captioner, checks
// that the run summary's count means give the micro rates over blanks
// that the scorer's Rollup computes from the stored results, and runs a
// captions file (one item missing: a bad sample, not a zero).
func TestOmniClozeOnStack(t *testing.T) {
	ctx := context.Background()
	res, err := buildVia(t, omnicloze.Name, datasets.Request{Source: omnicloze.Embedded,
		Params: map[string]string{"writer": "baseline/judge-noisy-0.05"}})
	if err != nil {
		t.Fatal(err)
	}
	m := verifiedManifest(t, res.Dataset, res.Version)
	rejected := res.Stats[omnicloze.StatRejectedPrefix+omnicloze.RejectAnswerKey]
	if rejected == 0 || res.Stats[omnicloze.StatKept]+rejected != 27 || m.Stats[omnicloze.StatKept] != res.Stats[omnicloze.StatKept] ||
		res.Rows != res.Stats[omnicloze.StatKept]+6 {
		t.Fatalf("build %+v, manifest stats %v", res, m.Stats)
	}
	t.Logf("noisy writer: %d items kept, %d rejected for their answer key", res.Stats[omnicloze.StatKept], rejected)
	dataset := omnicloze.Name + "@" + res.Version
	eval := func(model string) workflows.EvaluateModelResult {
		t.Helper()
		out, err := evalVia(t, "", workflows.EvaluateModelInput{Request: runs.Request{Dataset: dataset, Model: model,
			Judges: map[string]string{scorer.RoleJudge: "baseline/judge"}}})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}

	ref := eval("baseline/reference")
	if s := ref.Summary; s.Scored != res.Rows || metric(s, scorer.MetricAccuracy).Mean != 1 || metric(s, scorer.MetricJudgeErrorRate).Mean != 0 {
		t.Errorf("reference: %+v", s.Metrics)
	}
	noisy := eval("baseline/noisy-0.3")
	rep := rollupOf(t, noisy.RunID)
	s := noisy.Summary
	micro := metric(s, scorer.MetricCorrect).Mean / metric(s, scorer.MetricJudged).Mean
	if math.Abs(micro-rep.Overall.Micro.Accuracy) > 1e-9 || !(micro < 0.95) || !(rep.Overall.Micro.Omission > 0.05) {
		t.Errorf("noisy: micro accuracy from the summary %.4f, from the results %+v", micro, rep.Overall.Micro)
	}
	for _, c := range s.Categories {
		var g scorer.Group
		for _, sub := range rep.Subcategories {
			if sub.Name == c.Category {
				g = sub
			}
		}
		var correct, judged float64
		for _, ms := range c.Metrics {
			switch ms.Name {
			case scorer.MetricCorrect:
				correct = ms.Mean
			case scorer.MetricJudged:
				judged = ms.Mean
			}
		}
		if g.Name == "" || math.Abs(correct/judged-g.Micro.Accuracy) > 1e-9 {
			t.Errorf("category %s: micro accuracy %.4f from the summary, roll-up %+v", c.Category, correct/judged, g)
		}
	}
	t.Logf("noisy-0.3: accuracy per item %.4f, micro over %d blanks %.4f, omission %.4f", metric(s, scorer.MetricAccuracy).Mean,
		rep.Overall.Tally.Judged(), rep.Overall.Micro.Accuracy, rep.Overall.Micro.Omission)

	// A captions file: the reference captions, one item left out and one
	// caption emptied.
	var b strings.Builder
	_, rows := resultRows(ctx, t, ref.RunID)
	for i, r := range rows {
		caption := r.Response
		switch i {
		case 0:
			continue
		case 1:
			caption = ""
		}
		line, _ := json.Marshal(map[string]string{"item_id": r.SampleID, "caption": caption})
		b.Write(append(line, '\n'))
	}
	key := "inputs/omnicloze-captions-test.jsonl"
	if err := stack.Store.Put(ctx, key, strings.NewReader(b.String()), int64(b.Len())); err != nil {
		t.Fatal(err)
	}
	file := eval(scorer.CaptionsPrefix + key).Summary
	if file.Scored != res.Rows-1 || file.ErrorsByClass[schemas.ErrorClassBadSample] != 1 || file.Calls != res.Rows-1 {
		t.Errorf("captions file: scored %d of %d, errors %v, calls %d (judges only)", file.Scored, res.Rows, file.ErrorsByClass, file.Calls)
	}
	if om := metric(file, scorer.MetricOmitted); om.Mean == 0 || metric(file, scorer.MetricAccuracy).Mean == 1 {
		t.Errorf("captions file: an empty caption should omit: %+v", file.Metrics)
	}
}

// rollupOf is the scorer's roll-up of a run's stored results.
func rollupOf(t *testing.T, runID string) scorer.Report {
	t.Helper()
	var units []scorer.Unit
	_, rows := resultRows(context.Background(), t, runID)
	for _, r := range rows {
		var d scorer.Details
		if err := json.Unmarshal([]byte(r.DetailsJSON), &d); err != nil {
			t.Fatal(err)
		}
		domain, sub, ok := strings.Cut(r.Category, "/")
		if !ok {
			t.Fatalf("%s: category %q", r.SampleID, r.Category)
		}
		units = append(units, scorer.Unit{Domain: domain, Subcategory: sub, Tally: d.Tally})
	}
	return scorer.Rollup(units)
}
