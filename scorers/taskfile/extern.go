package taskfile

import (
	"context"
	"fmt"
	"slices"
	"sync"

	openai "github.com/sashabaranov/go-openai"
	"gopkg.in/yaml.v3"

	"github.com/benchline/benchline/internal/judge"
)

// ScoreFunc scores a row's replies together, one per repeat
// (generation.repeats; a list of one without): the score and why. A
// registered scorer sees all of a sample's replies, as lm-eval's filters
// (majority_vote) do, and the sample's score is its score of the list.
type ScoreFunc func(replies []Reply, r Row) (float64, string)

// NewScoreFunc compiles a registered scorer type's parameters.
type NewScoreFunc func(params yaml.Node, spec *Spec) (ScoreFunc, error)

var (
	externMu sync.RWMutex
	extern   = map[string]NewScoreFunc{}
)

// RegisterScorer adds a scorer type defined outside this package
// (scorers/lmeval's filter pipelines), so that this package links no
// other benchmark's. It panics on a name taken, as registering twice is
// a programming error.
func RegisterScorer(typ string, f NewScoreFunc) {
	externMu.Lock()
	defer externMu.Unlock()
	if _, ok := extern[typ]; ok || externJudged[typ] != nil {
		panic(fmt.Sprintf("taskfile: scorer type %q registered twice", typ))
	}
	extern[typ] = f
}

func externScorer(typ string) (NewScoreFunc, bool) {
	externMu.RLock()
	defer externMu.RUnlock()
	f, ok := extern[typ]
	return f, ok
}

type funcScorer ScoreFunc

func (f funcScorer) score(reply Reply, r Row) (float64, string) { return f([]Reply{reply}, r) }

func (f funcScorer) scoreList(replies []Reply, r Row) (float64, string) { return f(replies, r) }

// CompileTemplate compiles a Jinja template under the task file's rules
// (bounds, no file or network access).
func CompileTemplate(src string) (*Template, error) { return compileTemplate(src) }

// Render renders t over a row's columns.
func (t *Template) Render(fields map[string]any) (string, error) {
	return t.render(vars(Row{Fields: fields}))
}

// JudgedScoreFunc scores a row's reply by asking the run's judge panel
// through j; prompt is the chat the model was asked. It returns the
// scorer's Judgement: the audit records of every call it made (j.Ask
// gives them), what the panel labelled (Items, one label per judge, ""
// for a judge error, which JudgeErrors counts), and the Score, nil when
// the judge errors leave the row without one. An error is a failed call
// (retried by the engine), as Judges.Ask returns it.
type JudgedScoreFunc func(ctx context.Context, j *Judges, prompt []openai.ChatCompletionMessage, reply Reply, r Row) (Judgement, error)

// NewJudgedScoreFunc compiles a registered judged scorer type's
// parameters.
type NewJudgedScoreFunc func(params yaml.Node, spec *Spec) (JudgedScoreFunc, error)

// RegisterJudgedScorer adds a judged scorer type defined outside this
// package (scorers/promptfoo's model-graded assertions). Its panel is the
// run's judge role, else DefaultJudge (see Panel); its scorers are judged
// scorers in every respect (judge_error_rate, batch rounds, the rule
// against repeats). It panics on a name taken.
func RegisterJudgedScorer(typ string, f NewJudgedScoreFunc) {
	externMu.Lock()
	defer externMu.Unlock()
	_, taken := extern[typ]
	if _, ok := externJudged[typ]; ok || taken {
		panic(fmt.Sprintf("taskfile: scorer type %q registered twice", typ))
	}
	externJudged[typ] = f
}

var externJudged = map[string]NewJudgedScoreFunc{}

func externJudgedScorer(typ string) (NewJudgedScoreFunc, bool) {
	externMu.RLock()
	defer externMu.RUnlock()
	f, ok := externJudged[typ]
	return f, ok
}

// Judges is one sample's judge panel as a registered judged scorer asks
// it.
type Judges struct {
	a     *asker
	panel []string
}

// Panel is the judges asked, in order.
func (j *Judges) Panel() []string { return slices.Clone(j.panel) }

// Ask asks every judge of the panel one question: msgs built by the
// prompt template version, oracle the baseline judges' reply. Each reply
// is decoded into a fresh newReply() (judge.Decode's JSON rules, or the
// value's own judge.ReplyDecoder) and asked again once when it does not
// parse. It returns each judge's audit record and decoded reply, nil for
// a judge error (a reply that does not parse twice, a call refused for
// this request, or an answer a batch round deferred). The error is a
// failed call.
func (j *Judges) Ask(ctx context.Context, version string, msgs []openai.ChatCompletionMessage, oracle string, newReply func() any) ([]judge.Record, []any, error) {
	recs := make([]judge.Record, 0, len(j.panel))
	replies := make([]any, len(j.panel))
	for ji, model := range j.panel {
		v := newReply()
		rec, ok, err := j.a.ask(ctx, model, version, msgs, nil, oracle, v)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			replies[ji] = v
		}
		recs = append(recs, rec)
	}
	return recs, replies, nil
}

// Memo is what an earlier scorer of the same sample kept under key (two
// scorers of one judged type reading one judging, such as promptfoo's
// pass and score): the judges are asked once per sample.
func (j *Judges) Memo(key string) (any, bool) {
	v, ok := j.a.memo[key]
	return v, ok
}

// Keep keeps v under key for the sample's later scorers (see Memo).
func (j *Judges) Keep(key string, v any) {
	if j.a.memo == nil {
		j.a.memo = map[string]any{}
	}
	j.a.memo[key] = v
}

// funcJudged is a registered judged scorer.
type funcJudged JudgedScoreFunc

func (funcJudged) panelDefault() []string { return nil }

func (funcJudged) score(Reply, Row) (float64, string) { return 0, notJudgedHere }

func (f funcJudged) judgeReply(ctx context.Context, a *asker, panel []string, prompt []openai.ChatCompletionMessage, reply Reply, r Row) (Judgement, error) {
	return f(ctx, &Judges{a: a, panel: panel}, prompt, reply, r)
}
