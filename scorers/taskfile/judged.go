package taskfile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/scorers"
)

// The judged scorers (rubric, scale, qa_grade) ask judge models about a
// reply, as the built-in judged benchmarks do (internal/judge): each judge
// of the panel is asked once per scorer and sample with a versioned
// prompt, its reply parsed tolerantly (asked again once when it does not
// parse), every call's audit record (prompt version, reply, parsed
// verdict) kept in the result's details, and the panel's labels resolved
// per item (judge.Resolve, a tie to the conservative label; a numeric
// scale by the median, as rmtbench). A judge whose reply does not parse,
// or whose call is refused, gives no label: a judge error, counted in
// judge_error_rate and left out of the score, never scored 0. An item no
// judge labelled has no score: the scorer's metric is absent for the
// sample.

// DefaultJudge judges a run that names no judge and a scorer without a
// default panel: the baseline judge, which answers with the scorer's
// oracle (see oracle in each scorer).
const DefaultJudge = "baseline/judge"

// Metric names the judged scorers add, as the built-in judged benchmarks
// report them.
const (
	// MetricJudgeErrorRate is the share of the panel judges' labels that
	// are judge errors, over every judged scorer of the sample.
	MetricJudgeErrorRate = "judge_error_rate"
	// MetricPanelUnanimous is the share of items that at least two judges
	// labelled on which they all agreed; reported for panels.
	MetricPanelUnanimous = "panel_unanimous"
)

// MaxPanel bounds the judges of a panel: each is one call per judged
// scorer and sample.
const MaxPanel = 8

// judgedScorer is a scorer that asks judges.
type judgedScorer interface {
	// panelDefault is the task file's default panel (nil for none).
	panelDefault() []string
	// judgeReply asks the panel about reply to row r, whose prompt was
	// prompt.
	judgeReply(ctx context.Context, a *asker, panel []string, prompt []openai.ChatCompletionMessage, reply Reply, r Row) (Judgement, error)
}

// Judgement is one judged scorer's judgement of one reply, stored in the
// result's details.
type Judgement struct {
	Metric string `json:"metric"`
	Type   string `json:"type"`
	// Judges are the panel's audit records, in the panel's order: each
	// call's prompt version, raw reply, parsed verdict or parse error.
	Judges []judge.Record `json:"judges"`
	// Items are what the panel labelled (a rubric's criteria; one item
	// for scale and qa_grade).
	Items []JudgedItem `json:"items"`
	// Score is the scorer's score; absent when no judge gave a usable
	// label (every call a judge error).
	Score *float64 `json:"score,omitempty"`
	// JudgeErrors counts the labels missing (items × judges).
	JudgeErrors int `json:"judge_errors"`
	// Rubric holds a rubric's metrics (medrubric's formula).
	Rubric *RubricMetrics `json:"rubric,omitempty"`
	// Why, when set, is the scorer's reason for its score (a registered
	// judged scorer's), shown as the verdict's why.
	Why string `json:"-"`
}

// JudgedItem is one item's labels and the panel's resolution.
type JudgedItem struct {
	ID       string  `json:"id"`
	Category string  `json:"category,omitempty"`
	Weight   float64 `json:"weight,omitempty"`
	// Labels holds each judge's label in the panel's order ("" for a
	// judge error); Label the panel's, "" when no judge gave one.
	Labels    []string `json:"labels"`
	Label     string   `json:"label"`
	Tie       bool     `json:"tie,omitempty"`
	Unanimous bool     `json:"unanimous,omitempty"`
}

// asker asks the judges of one sample (as medrubric's).
type asker struct {
	models   judge.Completer
	seed     *int
	noCache  bool
	usage    modelapi.Totals
	deferred judge.Deferred
	// memo is what a sample's judged scorers share (Judges.Memo).
	memo map[string]any
}

// judgeParams are the sampling parameters of every judge call: greedy.
func judgeParams() modelapi.Params {
	zero := float32(0)
	return modelapi.Params{Temperature: &zero}
}

// ask asks one judge; a call refused for this request is recorded
// (CallError) and reported as ok false, like a reply that does not parse;
// so is an answer deferred to a batch. Other call failures are returned.
func (a *asker) ask(ctx context.Context, model, version string, msgs []openai.ChatCompletionMessage, schema *judge.Schema, oracle string, v any) (judge.Record, bool, error) {
	verdict, err := judge.Ask(ctx, a.models, judge.Request{
		Judge: model, PromptVersion: version, Messages: msgs, Schema: schema,
		Params: judgeParams(), Seed: a.seed, NoCache: a.noCache, Oracle: oracle,
	}, v)
	a.usage.Merge(verdict.Usage)
	rec := judge.Record{Verdict: verdict}
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

// panelCall is one question to every judge of a panel.
type panelCall struct {
	version string
	msgs    []openai.ChatCompletionMessage
	schema  *judge.Schema
	oracle  string
	items   int
	// newReply is a fresh reply to decode into; read writes judge ji's
	// labels of every item from its parsed reply and returns the ids it
	// left out and those it gave that name no item, or a reason the
	// reply, though it parsed, gives no verdict (which makes it a judge
	// error).
	newReply func() any
	read     func(reply any, labels [][]string, ji int) (missing, ignored []string, bad string)
}

// askPanel asks every judge and returns the records and the labels
// (items × judges, "" for a judge error).
func (a *asker) askPanel(ctx context.Context, panel []string, c panelCall) ([]judge.Record, [][]string, error) {
	labels := make([][]string, c.items)
	for i := range labels {
		labels[i] = make([]string, len(panel))
	}
	recs := make([]judge.Record, 0, len(panel))
	for ji, model := range panel {
		reply := c.newReply()
		rec, ok, err := a.ask(ctx, model, c.version, c.msgs, c.schema, c.oracle, reply)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			var bad string
			rec.Missing, rec.Ignored, bad = c.read(reply, labels, ji)
			if bad != "" {
				rec.Verdict.Error = "judge: unusable verdict: " + bad
				for i := range labels {
					labels[i][ji] = ""
				}
			}
		}
		recs = append(recs, rec)
	}
	return recs, labels, nil
}

// resolveItems resolves each item's labels with judge.Resolve.
func resolveItems(items []JudgedItem, labels [][]string, conservative func(i int) string) int {
	errs := 0
	for i := range items {
		res := judge.Resolve(labels[i], conservative(i))
		items[i].Labels, items[i].Label = labels[i], res.Label
		items[i].Tie, items[i].Unanimous = res.Tie, res.Unanimous && res.Votes > 1
		errs += res.Missing
	}
	return errs
}

// panelOf is the judges of a judged scorer in a run: the run's judge
// role (--judge judge=MODEL[,MODEL...]), else the task file's default
// panel, else DefaultJudge. A run naming roles other than judge is
// refused: task files have no information-asymmetric mode.
func panelOf(runJudges map[string]string, def []string) ([]string, error) {
	for role := range runJudges {
		if role != judge.RoleJudge {
			return nil, fmt.Errorf("taskfile: %w: role %q: a task file's judged scorers have one role, %s (--judge %s=MODEL[,MODEL...])", judge.ErrRoles, role, judge.RoleJudge, judge.RoleJudge)
		}
	}
	p := judge.Panel(runJudges, judge.RoleJudge)
	if len(p) == 0 {
		p = judge.Panel(map[string]string{judge.RoleJudge: strings.Join(def, ",")}, judge.RoleJudge)
	}
	if len(p) == 0 {
		p = []string{DefaultJudge}
	}
	if len(p) > MaxPanel {
		return nil, fmt.Errorf("taskfile: %w: %d judges, more than %d, the limit", judge.ErrRoles, len(p), MaxPanel)
	}
	return p, nil
}

// Panel is the panel a run with judges runJudges uses for the task's
// judged scorers (nil when it has none): see panelOf.
func (c *Compiled) Panel(runJudges map[string]string) ([]string, error) {
	var def []string
	for _, s := range c.scorers {
		if j, ok := s.(judgedScorer); ok {
			def = j.panelDefault()
			return panelOf(runJudges, def)
		}
	}
	return nil, nil
}

// Judged reports whether the task has a judged scorer.
func (c *Compiled) Judged() bool {
	for _, s := range c.scorers {
		if _, ok := s.(judgedScorer); ok {
			return true
		}
	}
	return false
}

// DefaultJudges are the run judges a task file's default panel stands
// for ({"judge": "m1,m2"}), nil when it names none: the demo evaluates a
// judged task file with them so that the run reports its agreement.
func (c *Compiled) DefaultJudges() map[string]string {
	for _, s := range c.scorers {
		if j, ok := s.(judgedScorer); ok && len(j.panelDefault()) > 0 {
			return map[string]string{judge.RoleJudge: judge.NormalPanel(strings.Join(j.panelDefault(), ","))}
		}
	}
	return nil
}

// Judging is what a sample's judged scorers give: metrics, details and
// the usage of the judge calls.
type Judging struct {
	Metrics    map[string]float64
	Verdicts   []Verdict
	Judgements []Judgement
	Ratings    []judge.Ratings
	Panel      []string
	Usage      modelapi.Totals
}

// ScoreJudged scores reply with every scorer, asking the judges of the
// run (env.Judges, see Panel) for the judged ones. prompt is the chat the
// model was asked. An error is a failed call (retried by the engine), a
// batch's deferred answer, or judge roles the task cannot use (wrapping
// scorers.ErrBadSample).
func (c *Compiled) ScoreJudged(ctx context.Context, env scorers.Env, prompt []openai.ChatCompletionMessage, r Row, reply Reply) (Judging, error) {
	out := Judging{Metrics: map[string]float64{}}
	panel, err := c.Panel(env.Judges)
	if err != nil {
		return out, fmt.Errorf("%w: %w", err, scorers.ErrBadSample)
	}
	out.Panel = panel
	a := &asker{models: env.Models, seed: env.Seed, noCache: env.NoCache}
	var labels, errs, paired, unanimous int
	for i, s := range c.scorers {
		name := c.Spec.Scorers[i].Metric()
		js, ok := s.(judgedScorer)
		if !ok {
			score, why := s.score(reply, r)
			out.Metrics[name] = score
			out.Verdicts = append(out.Verdicts, Verdict{Metric: name, Score: score, Why: why})
			continue
		}
		jm, err := js.judgeReply(ctx, a, panel, prompt, reply, r)
		if err != nil {
			return out, fmt.Errorf("taskfile: scorers[%d] (%s): %w", i, name, err)
		}
		jm.Metric = name
		rt := judge.Ratings{Set: name, Judges: panel}
		if jm.Type == "scale" {
			rt.Scale = judge.ScaleInterval
		}
		for _, it := range jm.Items {
			rt.Items = append(rt.Items, it.Labels)
			n := 0
			for _, l := range it.Labels {
				labels++
				if l != "" {
					n++
				}
			}
			if n >= 2 {
				paired++
				if it.Unanimous {
					unanimous++
				}
			}
		}
		errs += jm.JudgeErrors
		v := Verdict{Metric: name}
		if jm.Score != nil {
			out.Metrics[name] = *jm.Score
			v.Score, v.Why = *jm.Score, jm.Why
		} else {
			v.Why = "no judge gave a verdict: every call a judge error (not scored)"
		}
		if jm.Rubric != nil {
			for k, x := range jm.Rubric.Map() {
				if k != "score" {
					out.Metrics[name+"_"+k] = x
				}
			}
		}
		out.Verdicts = append(out.Verdicts, v)
		if len(jm.Judges) == 0 && len(jm.Items) == 0 {
			// No judge asked (a registered scorer reading a judging an
			// earlier one kept): nothing to audit or to agree on.
			continue
		}
		out.Judgements = append(out.Judgements, jm)
		out.Ratings = append(out.Ratings, rt)
	}
	if err := a.deferred.Err(); err != nil {
		return out, err
	}
	out.Usage = a.usage
	if labels > 0 {
		out.Metrics[MetricJudgeErrorRate] = float64(errs) / float64(labels)
		if len(panel) > 1 && paired > 0 {
			out.Metrics[MetricPanelUnanimous] = float64(unanimous) / float64(paired)
		}
	}
	return out, nil
}

// judgedMetrics are the metrics a task's judged scorers add beyond their
// own: a rubric's sub-metrics, judge_error_rate and, for panels,
// panel_unanimous.
func (c *Compiled) judgedMetrics() []string {
	var out []string
	for i, s := range c.scorers {
		if _, ok := s.(*rubric); ok {
			for _, m := range rubricSubMetrics {
				out = append(out, c.Spec.Scorers[i].Metric()+"_"+m)
			}
		}
	}
	if c.Judged() {
		out = append(out, MetricJudgeErrorRate, MetricPanelUnanimous)
	}
	return out
}

// reservedMetric is a metric name a judged task reports of its own.
func reservedMetric(name string) bool {
	return slices.Contains([]string{MetricJudgeErrorRate, MetricPanelUnanimous}, name)
}

// lastUser is the last user message of a prompt (the question a judge
// is shown).
func lastUser(msgs []openai.ChatCompletionMessage) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == openai.ChatMessageRoleUser {
			return msgs[i].Content
		}
	}
	return ""
}

// judgeMessages is a judge's chat: the system's instructions and one user
// message.
func judgeMessages(system, user string) []openai.ChatCompletionMessage {
	return []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: system},
		{Role: openai.ChatMessageRoleUser, Content: user},
	}
}

// panelParam is the judges parameter: a scorer's default panel.
func panelParam(judges []string, line int) ([]string, error) {
	p := judge.Panel(map[string]string{judge.RoleJudge: strings.Join(judges, ",")}, judge.RoleJudge)
	for _, m := range judges {
		if strings.TrimSpace(m) == "" || strings.Contains(m, ",") || !strings.Contains(m, "/") {
			return nil, &paramError{key: "judges", line: line, msg: fmt.Sprintf("%q is not a model: want <provider>/<model>", m)}
		}
	}
	if len(p) > MaxPanel {
		return nil, &paramError{key: "judges", line: line, msg: fmt.Sprintf("%d judges, more than %d, the limit", len(p), MaxPanel)}
	}
	return p, nil
}
