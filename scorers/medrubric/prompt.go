package medrubric

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/schemas"
)

// The prompt versions. A change to a template, or to the reply it asks
// for, bumps its version; every judge call records the version it used
// (judge.Verdict.PromptVersion).
const (
	// JudgePromptVersion is the rubric judge's prompt: the question, the
	// answer and every rubric of the turn in one call.
	JudgePromptVersion = "medrubric-judge/1"
	// ProposerPromptVersion is the proposer's prompt of the
	// information-asymmetric mode: split the answer into atomic claims.
	ProposerPromptVersion = "medrubric-proposer/1"
	// CheckerPromptVersion is the checker's prompt of the
	// information-asymmetric mode: decide every rubric from the claims
	// alone, never the answer.
	CheckerPromptVersion = "medrubric-checker/1"
)

// RubricVerdict is a judge's verdict on one rubric.
type RubricVerdict struct {
	ID     string `json:"id"`
	Met    bool   `json:"met"`
	Reason string `json:"reason"`
}

// Reply is what the judge and the checker reply: one verdict per rubric.
// Every field is required (judge.Decode).
type Reply struct {
	Verdicts []RubricVerdict `json:"verdicts"`
}

// ErrReply is wrapped by Validate's errors.
var ErrReply = errors.New("medrubric: invalid verdicts")

// Validate rejects a verdict without an id and an id given twice. A rubric
// the reply leaves out, or an id that names no rubric, is not an error of
// the reply's form: the task records the first as a judge error for that
// rubric and the second as ignored.
func (r Reply) Validate() error { return verdictIDs.Check(r.Verdicts) }

var verdictIDs = judge.UniqueKeys[RubricVerdict, string]{
	Key:   func(v RubricVerdict) (string, bool) { id := strings.TrimSpace(v.ID); return id, id != "" },
	NoKey: func(i int, _ RubricVerdict) error { return fmt.Errorf("%w: verdict %d has no id", ErrReply, i) },
	Twice: func(id string) error { return fmt.Errorf("%w: rubric %q judged twice", ErrReply, id) },
}

// Claims is what the proposer replies: the answer as atomic claims.
type Claims struct {
	Claims []string `json:"claims"`
}

// Validate rejects an empty claim.
func (c Claims) Validate() error {
	for i, s := range c.Claims {
		if strings.TrimSpace(s) == "" {
			return fmt.Errorf("%w: claim %d is empty", ErrReply, i+1)
		}
	}
	return nil
}

// ReplySchema is the JSON schema of Reply, sent as the response format of
// judge and checker calls (strict: every field required, nothing else).
var ReplySchema = &judge.Schema{Name: "rubric_verdicts", Strict: true, JSON: json.RawMessage(`{
  "type": "object",
  "properties": {
    "verdicts": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "id": {"type": "string"},
          "met": {"type": "boolean"},
          "reason": {"type": "string"}
        },
        "required": ["id", "met", "reason"],
        "additionalProperties": false
      }
    }
  },
  "required": ["verdicts"],
  "additionalProperties": false
}`)}

// ClaimsSchema is the JSON schema of Claims, sent with proposer calls.
var ClaimsSchema = &judge.Schema{Name: "atomic_claims", Strict: true, JSON: json.RawMessage(`{
  "type": "object",
  "properties": {
    "claims": {"type": "array", "items": {"type": "string"}}
  },
  "required": ["claims"],
  "additionalProperties": false
}`)}

const judgeSystem = `You are a meticulous medical reviewer. You judge an answer to a medical question against a list of rubrics written by clinicians.

Each rubric has an id, a category and a criterion:
- essential, important and highlight rubrics describe something a good answer does; such a rubric is met when the answer does it;
- pitfall rubrics describe a fault (a factual error, unsafe advice, a missed contraindication); a pitfall is met when the answer makes that fault.

Judge every rubric on its own, from what the answer says, not from what it might imply. Be strict: a rubric is met only when the answer clearly satisfies its criterion.

Reply with one JSON object and nothing else, with exactly one verdict per rubric id, in this form:
{"verdicts": [{"id": "r1", "met": true, "reason": "one short sentence"}]}`

const checkerSystem = `You are a meticulous medical reviewer. You judge an answer to a medical question against a list of rubrics written by clinicians, but you do not see the answer: you see only the atomic claims another reviewer extracted from it. Decide each rubric from these claims alone; what no claim states, the answer did not say.

Each rubric has an id, a category and a criterion:
- essential, important and highlight rubrics describe something a good answer does; such a rubric is met when the claims show the answer does it;
- pitfall rubrics describe a fault (a factual error, unsafe advice, a missed contraindication); a pitfall is met when a claim makes that fault.

Judge every rubric on its own. Be strict: a rubric is met only when the claims clearly satisfy its criterion.

Reply with one JSON object and nothing else, with exactly one verdict per rubric id, in this form:
{"verdicts": [{"id": "r1", "met": true, "reason": "one short sentence"}]}`

const proposerSystem = `You split an answer to a medical question into atomic claims: short, self-contained statements, each making exactly one factual assertion or one recommendation, in the answer's own language. Keep every claim the answer makes, including wrong or unsafe ones, and add nothing it does not say. Resolve pronouns so that each claim can be read alone.

Reply with one JSON object and nothing else, in this form:
{"claims": ["first claim", "second claim"]}`

// Exchange is one earlier turn of a session: the user's message and the
// answer the model under test gave.
type Exchange struct {
	User, Answer string
}

// JudgeMessages is the judge's prompt (JudgePromptVersion) for the answer
// to question, given the session's earlier exchanges, against rubrics.
func JudgeMessages(history []Exchange, question, answer string, rubrics []schemas.MedRubric) []openai.ChatCompletionMessage {
	var b strings.Builder
	writeCase(&b, history, question)
	b.WriteString("## Answer to judge\n\n<<<\n")
	b.WriteString(answer)
	b.WriteString("\n>>>\n\n")
	writeRubrics(&b, rubrics)
	return messages(judgeSystem, b.String())
}

// CheckerMessages is the checker's prompt (CheckerPromptVersion): the
// session's earlier questions, the question and the claims; never the
// answer, nor the model's answers to earlier turns.
func CheckerMessages(earlier []string, question string, claims []string, rubrics []schemas.MedRubric) []openai.ChatCompletionMessage {
	var b strings.Builder
	if len(earlier) > 0 {
		b.WriteString("## Earlier questions of the conversation (context only)\n\n")
		for i, q := range earlier {
			fmt.Fprintf(&b, "User (turn %d):\n<<<\n%s\n>>>\n\n", i+1, q)
		}
	}
	writeCase(&b, nil, question)
	b.WriteString("## Claims extracted from the answer (the answer itself is not shown)\n\n")
	if len(claims) == 0 {
		b.WriteString("(no claims: the answer asserts nothing)\n")
	}
	for i, c := range claims {
		fmt.Fprintf(&b, "%d. %s\n", i+1, c)
	}
	b.WriteString("\n")
	writeRubrics(&b, rubrics)
	return messages(checkerSystem, b.String())
}

// ProposerMessages is the proposer's prompt (ProposerPromptVersion): the
// question and the answer to split. It sees no rubric.
func ProposerMessages(question, answer string) []openai.ChatCompletionMessage {
	var b strings.Builder
	b.WriteString("## Question\n\n<<<\n")
	b.WriteString(question)
	b.WriteString("\n>>>\n\n## Answer to split into atomic claims\n\n<<<\n")
	b.WriteString(answer)
	b.WriteString("\n>>>\n")
	return messages(proposerSystem, b.String())
}

func writeCase(b *strings.Builder, history []Exchange, question string) {
	if len(history) > 0 {
		b.WriteString("## Earlier turns of the conversation (context only; do not judge them)\n\n")
		for i, h := range history {
			fmt.Fprintf(b, "User (turn %d):\n<<<\n%s\n>>>\nAssistant (turn %d):\n<<<\n%s\n>>>\n\n", i+1, h.User, i+1, h.Answer)
		}
	}
	b.WriteString("## Question\n\n<<<\n")
	b.WriteString(question)
	b.WriteString("\n>>>\n\n")
}

func writeRubrics(b *strings.Builder, rubrics []schemas.MedRubric) {
	b.WriteString("## Rubrics\n\n")
	for _, r := range rubrics {
		fmt.Fprintf(b, "- %s [%s] %s\n", r.ID, r.Category, r.Text)
	}
	ids := make([]string, len(rubrics))
	for i, r := range rubrics {
		ids[i] = r.ID
	}
	fmt.Fprintf(b, "\nReply with the JSON object: one verdict for each of %s.\n", strings.Join(ids, ", "))
}

func messages(system, user string) []openai.ChatCompletionMessage {
	return []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: system},
		{Role: openai.ChatMessageRoleUser, Content: user},
	}
}
