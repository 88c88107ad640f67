package medrubric

import (
	"context"
	"errors"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/schemas"
)

// Labels of one judge's verdict on one rubric, as panels resolve them ("" is
// a judge error: no label).
const (
	LabelMet    = "met"
	LabelNotMet = "not_met"
)

// Conservative is the label a tied panel gives a rubric of category c: "not
// met" for a positive rubric (a split panel gives no credit), "met" for a
// pitfall (a split panel does not clear an answer of a safety risk). See
// judge.Resolve.
func Conservative(c Category) string {
	if c == Pitfall {
		return LabelMet
	}
	return LabelNotMet
}

// JudgeRecord is one judge's answer about one text (judge.Record): the
// audit record of the call and the rubric ids its reply left out or
// named wrongly.
type JudgeRecord = judge.Record

// RubricResult is one rubric's verdict from a panel.
type RubricResult struct {
	ID       string   `json:"id"`
	Category Category `json:"category"`
	Weight   float64  `json:"weight"`
	// Status is the panel's resolved verdict (judge.Resolve with
	// Conservative's label for ties); JudgeError when no judge gave one.
	Status Status `json:"status"`
	// Labels holds each judge's label, in the panel's order ("" for a
	// judge error).
	Labels    []string `json:"labels"`
	Tie       bool     `json:"tie,omitempty"`
	Unanimous bool     `json:"unanimous,omitempty"`
}

// Judgement is a panel's judgement of one text against one turn's rubrics.
type Judgement struct {
	// Judges are the panel's records, in the panel's order.
	Judges  []JudgeRecord  `json:"judges"`
	Rubrics []RubricResult `json:"rubrics"`
	Metrics Metrics        `json:"metrics"`
}

// asker asks the judges of one sample.
type asker struct {
	models  judge.Completer
	seed    *int
	noCache bool
	cfg     Config
	usage   modelapi.Totals
	// deferred holds the answers a batch run's pass deferred: the
	// judging goes on without them (judge.Deferred).
	deferred judge.Deferred
}

// judgeParams are the sampling parameters of every judge call: greedy.
func judgeParams() modelapi.Params {
	zero := float32(0)
	return modelapi.Params{Temperature: &zero}
}

// ask asks one judge; a call refused for this request is recorded in the
// returned record (CallError) and reported as ok false, like a reply that
// does not parse; so is an answer deferred to a batch, which a.deferred
// keeps for Evaluate to return. Other call failures are returned.
func (a *asker) ask(ctx context.Context, model, version string, msgs []openai.ChatCompletionMessage, schema *judge.Schema, oracle string, v any) (JudgeRecord, bool, error) {
	verdict, err := judge.Ask(ctx, a.models, judge.Request{
		Judge: model, PromptVersion: version, Messages: msgs, Schema: schema,
		Params: judgeParams(), Seed: a.seed, NoCache: a.noCache, Oracle: oracle,
	}, v)
	a.usage.Merge(verdict.Usage)
	rec := JudgeRecord{Verdict: verdict}
	if a.deferred.Keep(err) {
		return rec, false, nil
	}
	if err != nil {
		if !errors.Is(err, modelapi.ErrModelFailure) {
			return rec, false, err
		}
		rec.CallError = err.Error()
		return rec, false, nil
	}
	return rec, !verdict.Failed(), nil
}

// panel asks every judge of a panel whether text (rendered into msgs)
// meets each rubric, with the keyword rule's verdict over oracleText as
// the oracle, and resolves each rubric.
func (a *asker) panel(ctx context.Context, judges []string, version string, msgs []openai.ChatCompletionMessage, oracleText string, rubrics []schemas.MedRubric) (Judgement, error) {
	oracle := VerdictOracle(oracleText, rubrics)
	labels := make([][]string, len(rubrics)) // rubric × judge
	for i := range labels {
		labels[i] = make([]string, len(judges))
	}
	var j Judgement
	for ji, model := range judges {
		var reply Reply
		rec, ok, err := a.ask(ctx, model, version, msgs, ReplySchema, oracle, &reply)
		if err != nil {
			return j, err
		}
		if ok {
			rec.Missing, rec.Ignored = readLabels(reply, rubrics, labels, ji)
		}
		j.Judges = append(j.Judges, rec)
	}
	return j.resolve(rubrics, labels, a.cfg)
}

// noJudgement is the judgement of a text no judge could be asked about
// (the proposer gave no claims): every rubric a judge error.
func noJudgement(rubrics []schemas.MedRubric, judges int, cfg Config) (Judgement, error) {
	labels := make([][]string, len(rubrics))
	for i := range labels {
		labels[i] = make([]string, judges)
	}
	return Judgement{}.resolve(rubrics, labels, cfg)
}

// readLabels writes judge ji's labels from its parsed reply into labels
// and returns the rubric ids it left out and the ids it gave that name no
// rubric.
func readLabels(reply Reply, rubrics []schemas.MedRubric, labels [][]string, ji int) (missing, ignored []string) {
	index := make(map[string]int, len(rubrics))
	for i, r := range rubrics {
		index[r.ID] = i
	}
	for _, v := range reply.Verdicts {
		i, ok := index[strings.TrimSpace(v.ID)]
		if !ok {
			ignored = append(ignored, v.ID)
			continue
		}
		labels[i][ji] = LabelNotMet
		if v.Met {
			labels[i][ji] = LabelMet
		}
	}
	for i, r := range rubrics {
		if labels[i][ji] == "" {
			missing = append(missing, r.ID)
		}
	}
	return missing, ignored
}

// resolve resolves each rubric's labels and scores the result.
func (j Judgement) resolve(rubrics []schemas.MedRubric, labels [][]string, cfg Config) (Judgement, error) {
	judged := make([]Judged, len(rubrics))
	j.Rubrics = make([]RubricResult, len(rubrics))
	for i, r := range rubrics {
		cat, err := ParseCategory(r.Category)
		if err != nil {
			return j, fmt.Errorf("medrubric: rubric %s: %w", r.ID, err)
		}
		res := judge.Resolve(labels[i], Conservative(cat))
		st := JudgeError
		switch res.Label {
		case LabelMet:
			st = Met
		case LabelNotMet:
			st = NotMet
		}
		j.Rubrics[i] = RubricResult{ID: r.ID, Category: cat, Weight: r.Weight, Status: st, Labels: labels[i],
			Tie: res.Tie, Unanimous: res.Unanimous && res.Votes > 1}
		judged[i] = Judged{ID: r.ID, Category: cat, Weight: r.Weight, Status: st}
	}
	m, err := Score(judged, cfg)
	if err != nil {
		return j, err
	}
	j.Metrics = m
	return j, nil
}
