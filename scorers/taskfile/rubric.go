package taskfile

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/scorers/medrubric"
)

// RubricPromptVersion is the rubric judge's prompt; a change to the
// template, or to the reply it asks for, bumps it.
const RubricPromptVersion = "taskfile-rubric/1"

// MaxCriteria bounds a rubric's criteria (inline or a row's): all go in
// one judge prompt.
const MaxCriteria = 64

// RubricMetrics are a rubric's metrics, medrubric's (medrubric.Score).
type RubricMetrics = medrubric.Metrics

// rubricSubMetrics are the metrics a rubric scorer reports beside its
// score, as <name>_<metric>.
var rubricSubMetrics = []string{medrubric.MetricAccuracy, medrubric.MetricCoverage, medrubric.MetricRiskInterception,
	medrubric.MetricHighlight, medrubric.MetricPositive, medrubric.MetricTripped}

// Criterion is one criterion of a rubric: medrubric's rubric (a category,
// essential, important, highlight or pitfall; a weight, the category's
// default when 0) with the keywords the baseline judges' oracle looks for.
type Criterion struct {
	ID       string   `yaml:"id" json:"id"`
	Category string   `yaml:"category" json:"category"`
	Text     string   `yaml:"text" json:"text"`
	Weight   float64  `yaml:"weight" json:"weight,omitempty"`
	Keywords []string `yaml:"keywords" json:"keywords,omitempty"`
}

// rubric is the rubric scorer: a panel decides each criterion met or not
// met in one call per judge, and medrubric's formula (weights, the
// circuit breaker of a met pitfall) scores the verdicts.
type rubric struct {
	criteria []Criterion
	column   string
	cfg      medrubric.Config
	judges   []string
	target   bool
}

func newRubric(s Scorer, spec *Spec) (scorer, error) {
	var p struct {
		Criteria       []Criterion `yaml:"criteria"`
		CriteriaColumn string      `yaml:"criteria_column"`
		Breaker        string      `yaml:"breaker"`
		Cap            *float64    `yaml:"cap"`
		Judges         []string    `yaml:"judges"`
	}
	if err := params(s.Params, &p); err != nil {
		return nil, err
	}
	r := &rubric{column: p.CriteriaColumn, cfg: medrubric.DefaultConfig(), target: spec.Columns.Target != ""}
	switch {
	case len(p.Criteria) > 0 && p.CriteriaColumn != "":
		return nil, &paramError{key: "criteria_column", line: paramLine(s.Params, "criteria_column"), msg: "give criteria or criteria_column, not both"}
	case len(p.Criteria) == 0 && p.CriteriaColumn == "":
		return nil, &paramError{key: "criteria", line: s.line, msg: "is required: the criteria, or criteria_column naming a column that holds them"}
	case len(p.Criteria) > 0:
		crit, err := checkCriteria(p.Criteria)
		if err != nil {
			return nil, &paramError{key: "criteria", line: paramLine(s.Params, "criteria"), msg: err.Error()}
		}
		r.criteria = crit
	}
	if p.Breaker != "" {
		r.cfg.Breaker = medrubric.Breaker(p.Breaker)
	}
	if p.Cap != nil {
		if r.cfg.Breaker != medrubric.BreakCap {
			return nil, &paramError{key: "cap", line: paramLine(s.Params, "cap"), msg: "applies to breaker: cap only"}
		}
		r.cfg.Cap = *p.Cap
	}
	if err := r.cfg.Validate(); err != nil {
		key := "breaker"
		if p.Cap != nil && r.cfg.Breaker == medrubric.BreakCap {
			key = "cap"
		}
		return nil, &paramError{key: key, line: paramLine(s.Params, key), msg: strings.TrimPrefix(err.Error(), "medrubric: ")}
	}
	var err error
	if r.judges, err = panelParam(p.Judges, paramLine(s.Params, "judges")); err != nil {
		return nil, err
	}
	return r, nil
}

// checkCriteria checks criteria and fills default weights.
func checkCriteria(cs []Criterion) ([]Criterion, error) {
	if len(cs) > MaxCriteria {
		return nil, fmt.Errorf("%d criteria, more than %d, the limit", len(cs), MaxCriteria)
	}
	out := make([]Criterion, len(cs))
	seen := map[string]bool{}
	positive := false
	for i, c := range cs {
		c.ID = strings.TrimSpace(c.ID)
		if c.ID == "" {
			c.ID = fmt.Sprintf("c%d", i+1)
		}
		if seen[c.ID] {
			return nil, fmt.Errorf("criterion %d: id %q is given twice", i+1, c.ID)
		}
		seen[c.ID] = true
		cat, err := medrubric.ParseCategory(c.Category)
		if err != nil {
			return nil, fmt.Errorf("criterion %s: category %q: want essential, important, highlight or pitfall", c.ID, c.Category)
		}
		if strings.TrimSpace(c.Text) == "" {
			return nil, fmt.Errorf("criterion %s: text is empty", c.ID)
		}
		switch {
		case c.Weight == 0:
			c.Weight = medrubric.DefaultWeight(cat)
		case !(c.Weight > 0) || math.IsInf(c.Weight, 0):
			return nil, fmt.Errorf("criterion %s: weight %v is not a positive number", c.ID, c.Weight)
		}
		positive = positive || cat.Positive()
		out[i] = c
	}
	if !positive {
		return nil, fmt.Errorf("no essential, important or highlight criterion: a rubric of pitfalls alone has no score")
	}
	return out, nil
}

// criteriaOf are the row's criteria: the scorer's, or its column's (a
// JSON list of criteria, or a string holding one).
func (r *rubric) criteriaOf(row Row) ([]Criterion, error) {
	if r.column == "" {
		return r.criteria, nil
	}
	v, ok := row.Fields[r.column]
	if !ok {
		return nil, fmt.Errorf("column %q (criteria_column) is missing", r.column)
	}
	raw, isString := v.(string)
	if !isString {
		b, err := MarshalFields(v)
		if err != nil {
			return nil, fmt.Errorf("column %q (criteria_column): %w", r.column, err)
		}
		raw = string(b)
	}
	var cs []Criterion
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cs); err != nil {
		return nil, fmt.Errorf("column %q (criteria_column) is not a list of criteria ({id, category, text, weight, keywords}): %v", r.column, err)
	}
	if len(cs) == 0 {
		return nil, fmt.Errorf("column %q (criteria_column) lists no criterion", r.column)
	}
	cs, err := checkCriteria(cs)
	if err != nil {
		return nil, fmt.Errorf("column %q (criteria_column): %w", r.column, err)
	}
	return cs, nil
}

func (r *rubric) checkRow(row Row) error {
	_, err := r.criteriaOf(row)
	return err
}

func (r *rubric) panelDefault() []string { return r.judges }

func (r *rubric) score(Reply, Row) (float64, string) { return 0, notJudgedHere }

// notJudgedHere is the verdict of a judged scorer where no judge can be
// asked (task check).
const notJudgedHere = "not scored here: a judged scorer asks judge models (benchline eval)"

const rubricSystem = `You are a meticulous reviewer. You judge an answer to a task against a list of criteria.

Each criterion has an id, a category and a text:
- essential, important and highlight criteria describe something a good answer does; such a criterion is met when the answer does it;
- pitfall criteria describe a fault (a factual error, unsafe or harmful content, a forbidden step); a pitfall is met when the answer makes that fault.

Judge every criterion on its own, from what the answer says, not from what it might imply. Be strict: a criterion is met only when the answer clearly satisfies it.

Reply with one JSON object and nothing else, with exactly one verdict per criterion id, in this form:
{"verdicts": [{"id": "c1", "met": true, "reason": "one short sentence"}]}`

// RubricMessages is the rubric judge's prompt (RubricPromptVersion).
func RubricMessages(question, answer string, cs []Criterion) []openai.ChatCompletionMessage {
	var b strings.Builder
	b.WriteString("## Task\n\n<<<\n")
	b.WriteString(question)
	b.WriteString("\n>>>\n\n## Answer to judge\n\n<<<\n")
	b.WriteString(answer)
	b.WriteString("\n>>>\n\n## Criteria\n\n")
	ids := make([]string, len(cs))
	for i, c := range cs {
		fmt.Fprintf(&b, "- %s [%s] %s\n", c.ID, c.Category, c.Text)
		ids[i] = c.ID
	}
	fmt.Fprintf(&b, "\nReply with the JSON object: one verdict for each of %s.\n", strings.Join(ids, ", "))
	return judgeMessages(rubricSystem, b.String())
}

// rubricOracle is the baseline judges' verdict (the request's oracle): a
// criterion with keywords is met when the answer contains every one
// (judge.KeywordsMet); one without is met, for a positive criterion, when
// the answer contains the target (judge.ContainsKeyword), and never for a
// pitfall.
func rubricOracle(answer, target string, cs []Criterion) string {
	rep := medrubric.Reply{Verdicts: make([]medrubric.RubricVerdict, len(cs))}
	for i, c := range cs {
		var met bool
		reason := ""
		switch {
		case len(c.Keywords) > 0:
			met = judge.KeywordsMet(answer, c.Keywords)
			reason = "keyword rule: the answer contains every keyword"
			if !met {
				reason = "keyword rule: the answer lacks a keyword"
			}
		case c.Category == string(medrubric.Pitfall):
			reason = "a pitfall without keywords is not met"
		case strings.TrimSpace(target) != "":
			met = judge.ContainsKeyword(answer, target)
			reason = "target rule: the answer contains the target"
			if !met {
				reason = "target rule: the answer lacks the target"
			}
		default:
			reason = "no keywords and no target: not met"
		}
		rep.Verdicts[i] = medrubric.RubricVerdict{ID: c.ID, Met: met, Reason: reason}
	}
	b, _ := json.Marshal(rep)
	return string(b)
}

func (r *rubric) judgeReply(ctx context.Context, a *asker, panel []string, prompt []openai.ChatCompletionMessage, reply Reply, row Row) (Judgement, error) {
	jm := Judgement{Type: "rubric"}
	cs, err := r.criteriaOf(row)
	if err != nil {
		return jm, err
	}
	index := make(map[string]int, len(cs))
	for i, c := range cs {
		index[c.ID] = i
	}
	recs, labels, err := a.askPanel(ctx, panel, panelCall{
		version: RubricPromptVersion, msgs: RubricMessages(lastUser(prompt), reply.Text, cs),
		schema: medrubric.ReplySchema, oracle: rubricOracle(reply.Text, row.Target, cs), items: len(cs),
		newReply: func() any { return &medrubric.Reply{} },
		read: func(v any, labels [][]string, ji int) (missing, ignored []string, bad string) {
			for _, vd := range v.(*medrubric.Reply).Verdicts {
				i, ok := index[strings.TrimSpace(vd.ID)]
				if !ok {
					ignored = append(ignored, vd.ID)
					continue
				}
				labels[i][ji] = medrubric.LabelNotMet
				if vd.Met {
					labels[i][ji] = medrubric.LabelMet
				}
			}
			for i, c := range cs {
				if labels[i][ji] == "" {
					missing = append(missing, c.ID)
				}
			}
			return missing, ignored, ""
		},
	})
	if err != nil {
		return jm, err
	}
	jm.Judges = recs
	jm.Items = make([]JudgedItem, len(cs))
	judged := make([]medrubric.Judged, len(cs))
	for i, c := range cs {
		jm.Items[i] = JudgedItem{ID: c.ID, Category: c.Category, Weight: c.Weight}
	}
	jm.JudgeErrors = resolveItems(jm.Items, labels, func(i int) string {
		return medrubric.Conservative(medrubric.Category(cs[i].Category))
	})
	for i, c := range cs {
		st := medrubric.JudgeError
		switch jm.Items[i].Label {
		case medrubric.LabelMet:
			st = medrubric.Met
		case medrubric.LabelNotMet:
			st = medrubric.NotMet
		}
		judged[i] = medrubric.Judged{ID: c.ID, Category: medrubric.Category(c.Category), Weight: c.Weight, Status: st}
	}
	m, err := medrubric.Score(judged, r.cfg)
	if err != nil {
		return jm, err
	}
	jm.Rubric = &m
	jm.Score = m.Score
	return jm, nil
}
