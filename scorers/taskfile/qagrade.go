package taskfile

import (
	"context"
	"encoding/json"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/judge"
)

// QAGradePromptVersion is the QA grader's prompt.
const QAGradePromptVersion = "taskfile-qa-grade/1"

// The grades of qa_grade, SimpleQA's: the reply states the target's
// answer, contradicts it, or does not try.
const (
	GradeCorrect      = "correct"
	GradeIncorrect    = "incorrect"
	GradeNotAttempted = "not_attempted"
)

// qaGrade is the qa_grade scorer: each judge compares the reply with the
// target and grades it correct, incorrect or not attempted; the panel's
// grade is judge.Resolve's (a tie is incorrect); the score is 1 for
// correct, else 0.
type qaGrade struct {
	judges []string
}

func newQAGrade(s Scorer, spec *Spec) (scorer, error) {
	var p struct {
		Judges []string `yaml:"judges"`
	}
	if err := params(s.Params, &p); err != nil {
		return nil, err
	}
	if spec.Columns.Target == "" {
		return nil, &paramError{key: "type", line: s.line, msg: "qa_grade compares with the target: set columns.target"}
	}
	j, err := panelParam(p.Judges, paramLine(s.Params, "judges"))
	if err != nil {
		return nil, err
	}
	return &qaGrade{judges: j}, nil
}

// GradeReply is what a QA grader replies: whether the answer tries to
// answer, and whether it gives the reference answer. Booleans, so that
// the baseline judges (judge-yes, judge-noisy) can bias and flip them.
type GradeReply struct {
	Attempted bool   `json:"attempted"`
	Correct   bool   `json:"correct"`
	Reason    string `json:"reason"`
}

// Grade is the grade a reply says.
func (g GradeReply) Grade() string {
	switch {
	case !g.Attempted:
		return GradeNotAttempted
	case g.Correct:
		return GradeCorrect
	}
	return GradeIncorrect
}

var gradeSchema = &judge.Schema{Name: "qa_grade", Strict: true, JSON: json.RawMessage(`{
  "type": "object",
  "properties": {
    "attempted": {"type": "boolean"},
    "correct": {"type": "boolean"},
    "reason": {"type": "string"}
  },
  "required": ["attempted", "correct", "reason"],
  "additionalProperties": false
}`)}

const gradeSystem = `You grade an answer to a question against the gold target answer.

- The answer is correct when it contains the gold target's meaning and contradicts nothing in it; wording, order, capitalisation and extra detail that does not contradict the target do not matter. Hedging is fine as long as the answer commits to the target.
- The answer is incorrect when it states something that contradicts the target, or gives several candidate answers of which not all agree with the target.
- The answer is not attempted when it gives no answer to the question (it refuses, says it does not know, or asks for more information) and contradicts nothing.

Reply with one JSON object and nothing else, in this form:
{"attempted": true, "correct": false, "reason": "one short sentence"}
("attempted": false for an answer not attempted; "correct" then does not matter.)`

// GradeMessages is the QA grader's prompt (QAGradePromptVersion).
func GradeMessages(question, target, answer string) []openai.ChatCompletionMessage {
	var b strings.Builder
	b.WriteString("## Question\n\n<<<\n")
	b.WriteString(question)
	b.WriteString("\n>>>\n\n## Gold target\n\n<<<\n")
	b.WriteString(target)
	b.WriteString("\n>>>\n\n## Answer to grade\n\n<<<\n")
	b.WriteString(answer)
	b.WriteString("\n>>>\n")
	return judgeMessages(gradeSystem, b.String())
}

// gradeOracle is the baseline judges' grade: not attempted for an empty
// reply, correct when the reply contains the target
// (judge.ContainsKeyword), else incorrect.
func gradeOracle(reply, target string) string {
	g := GradeReply{Attempted: strings.TrimSpace(reply) != ""}
	switch {
	case !g.Attempted:
		g.Reason = "target rule: the answer is empty"
	case judge.ContainsKeyword(reply, target):
		g.Correct, g.Reason = true, "target rule: the answer contains the target"
	default:
		g.Reason = "target rule: the answer lacks the target"
	}
	b, _ := json.Marshal(g)
	return string(b)
}

func (q *qaGrade) panelDefault() []string { return q.judges }

func (q *qaGrade) score(Reply, Row) (float64, string) { return 0, notJudgedHere }

func (q *qaGrade) judgeReply(ctx context.Context, a *asker, panel []string, prompt []openai.ChatCompletionMessage, reply Reply, r Row) (Judgement, error) {
	jm := Judgement{Type: "qa_grade"}
	recs, labels, err := a.askPanel(ctx, panel, panelCall{
		version: QAGradePromptVersion, msgs: GradeMessages(lastUser(prompt), r.Target, reply.Text), schema: gradeSchema,
		oracle: gradeOracle(reply.Text, r.Target), items: 1,
		newReply: func() any { return &GradeReply{} },
		read: func(v any, labels [][]string, ji int) ([]string, []string, string) {
			labels[0][ji] = v.(*GradeReply).Grade()
			return nil, nil, ""
		},
	})
	if err != nil {
		return jm, err
	}
	jm.Judges = recs
	jm.Items = []JudgedItem{{ID: "grade"}}
	jm.JudgeErrors = resolveItems(jm.Items, labels, func(int) string { return GradeIncorrect })
	if jm.Items[0].Label != "" {
		v := 0.0
		if jm.Items[0].Label == GradeCorrect {
			v = 1
		}
		jm.Score = &v
	}
	return jm, nil
}
