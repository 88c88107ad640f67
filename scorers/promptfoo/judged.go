package promptfoo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/dop251/goja"
	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/scorers/taskfile"
)

// The judged assertions (llm-rubric, not-llm-rubric,
// model-graded-closedqa, factuality or model-graded-factuality) ask each judge of the run's panel
// once per assertion and sample, with benchline's own prompts (the
// versions below), and read each reply as promptfoo's matchers read a
// grader's (matchesLlmRubric, matchesClosedQa, matchesFactuality in
// promptfoo 0.123): that judge's pass and score. A reply promptfoo would
// call malformed (no JSON object; a reply ending in neither Y nor N; no
// category A to E) is a judge error here, asked again once, counted in
// judge_error_rate and shown, never a fail with score 0 as promptfoo
// grades it. The panel resolves an assertion by the majority of the
// judges' pass (a tie fails) and the median of their scores; an assertion
// no judge answered leaves its test without pass and score (the metrics
// are absent for the sample).

// MaxGraderStarts bounds the search for a JSON object in a judge's reply
// (at most judge.MaxReplyBytes): the first this many "{" are tried as its
// start, each span at most 100,000 characters, as promptfoo's.
const MaxGraderStarts = 256

// Prompt versions of the judged assertions.
const (
	RubricPromptVersion     = "promptfoo-llm-rubric/1"
	ClosedQAPromptVersion   = "promptfoo-closedqa/1"
	FactualityPromptVersion = "promptfoo-factuality/1"
)

// RubricReply is an llm-rubric judge's reply as promptfoo reads it: the
// first JSON object of the reply; pass absent or null is true, a pass not
// boolean is true when String(pass) is true, yes, pass or y (any case);
// score is the number, else Number(score) when finite, else Number(pass).
type RubricReply struct {
	Pass   bool    `json:"pass"`
	Score  float64 `json:"score"`
	Reason string  `json:"reason,omitempty"`
}

var passWord = regexp.MustCompile(`(?i)^(true|yes|pass|y)$`)

// DecodeReply implements judge.ReplyDecoder.
func (r *RubricReply) DecodeReply(reply string) error {
	objs := extractJSONObjectsN(reply, MaxGraderStarts)
	if len(objs) == 0 {
		return fmt.Errorf("no JSON object in the reply (at its first %d \"{\")", MaxGraderStarts)
	}
	m, _ := objs[0].(map[string]any)
	r.Pass = true
	if v, ok := m["pass"]; ok && v != nil {
		if b, isBool := v.(bool); isBool {
			r.Pass = b
		} else {
			r.Pass = passWord.MatchString(jsString(v))
		}
	}
	r.Score = b2f(r.Pass)
	switch v := m["score"].(type) {
	case int:
		r.Score = float64(v)
	case float64:
		r.Score = v
	default:
		if _, ok := m["score"]; ok {
			if f := goja.New().ToValue(v).ToFloat(); !math.IsNaN(f) && !math.IsInf(f, 0) {
				r.Score = f
			}
		}
	}
	if s, ok := m["reason"].(string); ok {
		r.Reason = s
	}
	return nil
}

// ClosedQAReply is a model-graded-closedqa judge's reply: it meets the
// criterion when it ends (trailing white space aside) with Y, not when
// with N; any other ending is unparseable.
type ClosedQAReply struct {
	Meets bool `json:"meets"`
}

// DecodeReply implements judge.ReplyDecoder.
func (r *ClosedQAReply) DecodeReply(reply string) error {
	t := strings.TrimRightFunc(reply, func(c rune) bool { return unicode.IsSpace(c) || c == '\uFEFF' })
	switch {
	case strings.HasSuffix(t, "Y"):
		r.Meets = true
	case strings.HasSuffix(t, "N"):
		r.Meets = false
	default:
		return errors.New("the reply ends with neither Y nor N")
	}
	return nil
}

// FactualityReply is a factuality judge's reply: the category of the
// first JSON object's "category" (trimmed, upper case, A to E); without
// one, the first letter A to E followed by ")" (promptfoo's legacy
// reading); else unparseable.
type FactualityReply struct {
	Category string `json:"category"`
	Reason   string `json:"reason,omitempty"`
}

var legacyCategory = regexp.MustCompile(`\(?([a-eA-E])\)`)

// DecodeReply implements judge.ReplyDecoder.
func (r *FactualityReply) DecodeReply(reply string) error {
	if objs := extractJSONObjectsN(reply, MaxGraderStarts); len(objs) > 0 {
		m, _ := objs[0].(map[string]any)
		if c, ok := m["category"].(string); ok && c != "" {
			c = strings.ToUpper(strings.TrimSpace(c))
			if len(c) != 1 || c[0] < 'A' || c[0] > 'E' {
				return fmt.Errorf("category %q is not A, B, C, D or E", c)
			}
			r.Category = c
			r.Reason, _ = m["reason"].(string)
			return nil
		}
	}
	m := legacyCategory.FindStringSubmatch(reply)
	if m == nil {
		return errors.New("no category A to E in the reply")
	}
	r.Category = strings.ToUpper(m[1])
	return nil
}

// factualityScore is the score of category c under the test's
// options.factuality: promptfoo's defaults are 1 but for disagree (D),
// 0; a category passes when its score is above 0.
func factualityScore(c string, opts map[string]float64) float64 {
	i := int(c[0] - 'A')
	if v, ok := opts[factualityKeys[i]]; ok {
		return v
	}
	if c == "D" {
		return 0
	}
	return 1
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// question is one judged assertion put to the panel.
type question struct {
	version  string
	msgs     []openai.ChatCompletionMessage
	oracle   string
	newReply func() any
	// read is one judge's pass and score from its decoded reply, as
	// promptfoo's handler gives them (threshold and not- applied).
	read func(v any) (bool, float64)
}

// questionOf is the question of judged assertion a (value rendered) about
// output, the reply to sample s of test t.
func questionOf(a Assertion, value string, t Test, s Sample, output string) question {
	base := strings.TrimPrefix(a.Type, "not-")
	inverse := base != a.Type
	switch base {
	case "model-graded-closedqa":
		return question{
			version: ClosedQAPromptVersion, msgs: ClosedQAMessages(s.Rendered, output, value),
			oracle:   closedQAOracle(value, output),
			newReply: func() any { return &ClosedQAReply{} },
			read: func(v any) (bool, float64) {
				m := v.(*ClosedQAReply).Meets
				return m, b2f(m)
			},
		}
	case "factuality", "model-graded-factuality":
		return question{
			version: FactualityPromptVersion, msgs: FactualityMessages(s.Rendered, value, output),
			oracle:   factualityOracle(value, output),
			newReply: func() any { return &FactualityReply{} },
			read: func(v any) (bool, float64) {
				sc := factualityScore(v.(*FactualityReply).Category, t.Factuality)
				return sc > 0, sc
			},
		}
	}
	return question{
		version: RubricPromptVersion, msgs: RubricMessages(value, output),
		oracle:   rubricOracle(value, output),
		newReply: func() any { return &RubricReply{} },
		read: func(v any) (bool, float64) {
			r := v.(*RubricReply)
			pass, score := r.Pass, r.Score
			if a.Threshold != nil {
				pass = pass && score >= *a.Threshold
			}
			if inverse {
				pass, score = !pass, min(1, max(0, 1-score))
			}
			return pass, score
		},
	}
}

func section(b *strings.Builder, title, text string) {
	b.WriteString("## ")
	b.WriteString(title)
	b.WriteString("\n\n<<<\n")
	b.WriteString(text)
	b.WriteString("\n>>>\n\n")
}

func chat(system string, sections ...string) []openai.ChatCompletionMessage {
	var b strings.Builder
	for i := 0; i+1 < len(sections); i += 2 {
		section(&b, sections[i], sections[i+1])
	}
	return []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: system},
		{Role: openai.ChatMessageRoleUser, Content: strings.TrimRight(b.String(), "\n") + "\n"},
	}
}

const rubricSystem = `You check a model's output against a rubric that the test's author wrote. The output passes when what the rubric says holds for it.

Reply with one JSON object and nothing else, in this form:
{"pass": true, "score": 1.0, "reason": "one short sentence"}
"score" runs from 0 (the rubric does not hold at all) to 1 (it holds fully).`

// RubricMessages is llm-rubric's question (RubricPromptVersion).
func RubricMessages(rubric, output string) []openai.ChatCompletionMessage {
	return chat(rubricSystem, "Rubric", rubric, "Output", output)
}

const closedQASystem = `You decide whether a submission to a task meets a criterion.

Think it through step by step first, without stating your conclusion at the start. Then end your reply with a line holding only one letter: Y if the submission meets the criterion, N if it does not.`

// ClosedQAMessages is model-graded-closedqa's question
// (ClosedQAPromptVersion).
func ClosedQAMessages(task, submission, criterion string) []openai.ChatCompletionMessage {
	return chat(closedQASystem, "Task", task, "Submission", submission, "Criterion", criterion)
}

const factualitySystem = `You compare the facts of a submitted answer with those of an expert's answer to the same question. Style, wording, grammar and punctuation do not matter.

Put the submission in one category:
(A) it states part of what the expert answer states, and nothing against it;
(B) it states everything the expert answer states and more, and nothing against it;
(C) it states the same facts as the expert answer;
(D) it contradicts the expert answer;
(E) it differs from the expert answer, but not in any fact that matters.

Reply with one JSON object and nothing else, in this form:
{"category": "C", "reason": "why, in a sentence or two"}`

// FactualityMessages is factuality's question (FactualityPromptVersion).
func FactualityMessages(question, expert, submission string) []openai.ChatCompletionMessage {
	return chat(factualitySystem, "Question", question, "Expert answer", expert, "Submitted answer", submission)
}

var quoted = regexp.MustCompile(`"([^"\n]+)"`)

// quotedMet is the baseline rule of a rubric or criterion: the share of
// its double-quoted phrases the output contains (judge.ContainsKeyword),
// 1 for a rubric quoting none; an empty output meets nothing.
func quotedMet(rubric, output string) (float64, string) {
	if strings.TrimSpace(output) == "" {
		return 0, "baseline rule: the output is empty"
	}
	ps := quoted.FindAllStringSubmatch(rubric, -1)
	if len(ps) == 0 {
		return 1, "baseline rule: the rubric quotes no phrase and the output is not empty"
	}
	var met []string
	for _, p := range ps {
		if judge.ContainsKeyword(output, p[1]) {
			met = append(met, p[1])
		}
	}
	return float64(len(met)) / float64(len(ps)), fmt.Sprintf("baseline rule: the output contains %d of the rubric's %d quoted phrases", len(met), len(ps))
}

// rubricOracle is the baseline judges' llm-rubric reply: score the
// share of the rubric's quoted phrases in the output, pass when it is 1.
func rubricOracle(rubric, output string) string {
	sc, why := quotedMet(rubric, output)
	b, _ := json.Marshal(map[string]any{"pass": sc == 1, "score": sc, "reason": why})
	return string(b)
}

// closedQAOracle is the baseline judges' model-graded-closedqa reply:
// Y when the output contains every quoted phrase of the criterion.
func closedQAOracle(criterion, output string) string {
	sc, why := quotedMet(criterion, output)
	if sc == 1 {
		return why + ", so it meets the criterion.\nY"
	}
	return why + ", so it does not meet the criterion.\nN"
}

// factualityOracle is the baseline judges' factuality reply: C when the
// output contains the expert answer, A when the expert answer contains
// the (non-empty) output, else D.
func factualityOracle(expert, output string) string {
	c, why := "D", "baseline rule: neither answer contains the other"
	switch {
	case judge.ContainsKeyword(output, expert):
		c, why = "C", "baseline rule: the submission contains the expert answer"
	case strings.TrimSpace(output) != "" && judge.ContainsKeyword(expert, output):
		c, why = "A", "baseline rule: the expert answer contains the submission"
	}
	b, _ := json.Marshal(map[string]string{"category": c, "reason": why})
	return string(b)
}

// judging is what the panel gave for one sample's judged assertions.
type judging struct {
	res     Result
	judged  bool
	records []judge.Record
	items   []taskfile.JudgedItem
	errors  int
}

// judgeSample grades the reply text to a stored sample, asking j's panel
// about each judged assertion. The error is a failed call.
func judgeSample(ctx context.Context, j *taskfile.Judges, st stored, out Output) (*judging, error) {
	g := &judging{}
	var askErr error
	jf := func(i int, a Assertion, value string) (Component, bool) {
		c := Component{Type: a.Type}
		if askErr != nil {
			return c, false
		}
		q := questionOf(a, value, st.Test, st.Sample, out.outputString())
		recs, replies, err := j.Ask(ctx, q.version, q.msgs, q.oracle, q.newReply)
		if err != nil {
			askErr = err
			return c, false
		}
		g.records = append(g.records, recs...)
		labels := make([]string, len(replies))
		shown := make([]string, len(replies))
		var scores []float64
		for ji, v := range replies {
			shown[ji] = "error"
			if v == nil {
				continue
			}
			pass, score := q.read(v)
			labels[ji] = "fail"
			if pass {
				labels[ji] = "pass"
			}
			shown[ji] = fmt.Sprintf("%s %v", labels[ji], score)
			scores = append(scores, score)
		}
		res := judge.Resolve(labels, "fail")
		g.items = append(g.items, taskfile.JudgedItem{ID: fmt.Sprintf("assert[%d]", i), Category: a.Type,
			Labels: labels, Label: res.Label, Tie: res.Tie, Unanimous: res.Unanimous && res.Votes > 1})
		g.errors += res.Missing
		if res.Label == "" {
			c.Reason = "no judge gave a verdict: every call a judge error"
			return c, false
		}
		c.Pass, c.Score = res.Label == "pass", median(scores)
		c.Reason = fmt.Sprintf("judges: %s; the panel: %s, score %v", strings.Join(shown, ", "), res.Label, c.Score)
		return c, true
	}
	g.res, g.judged = grade(st.Test, st.Provider, st.Sample, out, jf)
	return g, askErr
}

// median is the median of xs (not empty): the mean of the two middle
// values for an even count.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
