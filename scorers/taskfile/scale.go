package taskfile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/judge"
)

// ScalePromptVersion is the scale judge's instructions; a scale scorer's
// prompt version is it with a digest of the task file's template
// (taskfile-scale/1+<12 hex digits>), so that a changed template is a
// changed prompt.
const ScalePromptVersion = "taskfile-scale/1"

// MaxScaleSteps bounds a scale (max - min).
const MaxScaleSteps = 100

// scale is the scale scorer: each judge of the panel scores the reply on
// [min, max] from a prompt rendered from the task file's template (over
// the row's columns, reply and target); the panel's score is the median
// of the judges' (rmtbench's rule), normalised to [0, 1].
type scale struct {
	prompt   *Template
	min, max int
	judges   []string
	version  string
	schema   *judge.Schema
}

func newScale(s Scorer) (scorer, error) {
	var p struct {
		Prompt string   `yaml:"prompt"`
		Min    *int     `yaml:"min"`
		Max    *int     `yaml:"max"`
		Judges []string `yaml:"judges"`
	}
	if err := params(s.Params, &p); err != nil {
		return nil, err
	}
	if p.Prompt == "" {
		return nil, &paramError{key: "prompt", line: s.line, msg: "is required: the judge's prompt, a template over the row's columns, reply and target"}
	}
	t, err := compileTemplate(p.Prompt)
	if err != nil {
		return nil, &paramError{key: "prompt", line: paramLine(s.Params, "prompt"), msg: err.Error()}
	}
	sc := &scale{prompt: t, min: 1, max: 5}
	if p.Min != nil {
		sc.min = *p.Min
	}
	if p.Max != nil {
		sc.max = *p.Max
	}
	if sc.max <= sc.min || sc.max-sc.min > MaxScaleSteps {
		return nil, &paramError{key: "max", line: paramLine(s.Params, "max"), msg: fmt.Sprintf("the scale %d-%d: want min < max, at most %d steps apart", sc.min, sc.max, MaxScaleSteps)}
	}
	if sc.judges, err = panelParam(p.Judges, paramLine(s.Params, "judges")); err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(p.Prompt))
	sc.version = ScalePromptVersion + "+" + hex.EncodeToString(sum[:6])
	sc.schema = &judge.Schema{Name: "scale_score", Strict: true, JSON: json.RawMessage(fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "score": {"type": "integer", "minimum": %d, "maximum": %d},
    "reason": {"type": "string"}
  },
  "required": ["score", "reason"],
  "additionalProperties": false
}`, sc.min, sc.max))}
	return sc, nil
}

// ScaleReply is what a scale judge replies.
type ScaleReply struct {
	Score  int    `json:"score"`
	Reason string `json:"reason"`
}

// vars are what the scale's template sees: the row's columns, reply and
// target (these two over columns of the same names).
func (sc *scale) vars(r Row, reply string) map[string]any {
	v := vars(r)
	v["reply"], v["target"] = reply, r.Target
	return v
}

func (sc *scale) checkRow(r Row) error {
	if _, err := sc.prompt.render(sc.vars(r, "")); err != nil {
		return fmt.Errorf("prompt: %v", err)
	}
	return nil
}

func (sc *scale) panelDefault() []string { return sc.judges }

func (sc *scale) score(Reply, Row) (float64, string) { return 0, notJudgedHere }

func (sc *scale) system() string {
	return fmt.Sprintf(`You are a careful evaluator. Score the answer as the instructions below ask, on an integer scale from %d (worst) to %d (best).

Reply with one JSON object and nothing else, in this form:
{"score": %d, "reason": "one short sentence"}`, sc.min, sc.max, sc.max)
}

// oracle is the baseline judges' score: the top of the scale when the
// reply contains the target, the bottom otherwise (and without a target).
func (sc *scale) oracle(reply, target string) string {
	rep := ScaleReply{Score: sc.min, Reason: "target rule: the answer lacks the target"}
	if target != "" && judge.ContainsKeyword(reply, target) {
		rep = ScaleReply{Score: sc.max, Reason: "target rule: the answer contains the target"}
	}
	b, _ := json.Marshal(rep)
	return string(b)
}

// Normalise maps a score on [lo, hi] to [0, 1].
func Normalise(v float64, lo, hi int) float64 { return (v - float64(lo)) / float64(hi-lo) }

// median is the median of xs (the mean of the middle two for an even
// count), as rmtbench's panel; xs is sorted in place.
func median(xs []int) float64 {
	slices.Sort(xs)
	m := float64(xs[len(xs)/2])
	if len(xs)%2 == 0 {
		m = float64(xs[len(xs)/2-1]+xs[len(xs)/2]) / 2
	}
	return m
}

func (sc *scale) judgeReply(ctx context.Context, a *asker, panel []string, _ []openai.ChatCompletionMessage, reply Reply, r Row) (Judgement, error) {
	jm := Judgement{Type: "scale"}
	text, err := sc.prompt.render(sc.vars(r, reply.Text))
	if err != nil {
		return jm, fmt.Errorf("prompt: row %s: %v", r.ID, err)
	}
	recs, labels, err := a.askPanel(ctx, panel, panelCall{
		version: sc.version, msgs: judgeMessages(sc.system(), text), schema: sc.schema,
		oracle: sc.oracle(reply.Text, r.Target), items: 1,
		newReply: func() any { return &ScaleReply{} },
		read: func(v any, labels [][]string, ji int) ([]string, []string, string) {
			s := v.(*ScaleReply).Score
			if s < sc.min || s > sc.max {
				return nil, nil, fmt.Sprintf("score %d is outside the scale %d-%d", s, sc.min, sc.max)
			}
			labels[0][ji] = strconv.Itoa(s)
			return nil, nil, ""
		},
	})
	if err != nil {
		return jm, err
	}
	jm.Judges = recs
	jm.Items = []JudgedItem{{ID: "score"}}
	var got []int
	for _, l := range labels[0] {
		if l != "" {
			n, _ := strconv.Atoi(l)
			got = append(got, n)
		} else {
			jm.JudgeErrors++
		}
	}
	jm.Items[0].Labels = labels[0]
	if len(got) > 0 {
		m := median(got)
		jm.Items[0].Label = strconv.FormatFloat(m, 'f', -1, 64)
		jm.Items[0].Unanimous = len(got) >= 2 && got[0] == got[len(got)-1]
		v := Normalise(m, sc.min, sc.max)
		jm.Score = &v
	}
	return jm, nil
}
