package medrubric

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/schemas"
	scorer "github.com/benchline/benchline/scorers/medrubric"
)

// WriterPromptVersion is the rubric writer's prompt; a change to it, or to
// the reply it asks for, bumps it (and so the generation units' labels).
const WriterPromptVersion = "medrubric-writer/1"

// WrittenRubric is one rubric a writer proposes.
type WrittenRubric struct {
	Category string `json:"category"`
	Text     string `json:"text"`
	// Keywords are optional: words or phrases whose presence in an answer
	// shows the rubric is met. They are lower-cased, trimmed and
	// de-duplicated when read (Proposals).
	Keywords []string `json:"keywords,omitempty"`
}

// WriterReply is what a writer replies.
type WriterReply struct {
	Rubrics []WrittenRubric `json:"rubrics"`
}

// ErrWriterReply is wrapped by Validate's errors.
var ErrWriterReply = errors.New("medrubric: invalid rubric proposals")

// Validate rejects an unknown category and an empty text.
func (r WriterReply) Validate() error {
	for i, w := range r.Rubrics {
		if _, err := scorer.ParseCategory(w.Category); err != nil {
			return fmt.Errorf("%w: rubric %d: %w", ErrWriterReply, i+1, err)
		}
		if strings.TrimSpace(w.Text) == "" {
			return fmt.Errorf("%w: rubric %d has no text", ErrWriterReply, i+1)
		}
	}
	return nil
}

// Proposals are the reply's rubrics as writer's proposals for Consensus,
// with normalized keywords.
func (r WriterReply) Proposals(writer string) []Proposal {
	out := make([]Proposal, 0, len(r.Rubrics))
	for _, w := range r.Rubrics {
		var kws []string
		for _, k := range w.Keywords {
			k = strings.ToLower(strings.Join(strings.Fields(k), " "))
			if k != "" && !contains(kws, k) {
				kws = append(kws, k)
			}
		}
		out = append(out, Proposal{Writer: writer, Category: scorer.Category(w.Category), Text: strings.TrimSpace(w.Text), Keywords: kws})
	}
	return out
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// WriterSchema is the JSON schema of WriterReply, sent with writer calls.
var WriterSchema = &judge.Schema{Name: "rubric_proposals", JSON: json.RawMessage(`{
  "type": "object",
  "properties": {
    "rubrics": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "category": {"type": "string", "enum": ["essential", "important", "highlight", "pitfall"]},
          "text": {"type": "string"},
          "keywords": {"type": "array", "items": {"type": "string"}}
        },
        "required": ["category", "text"]
      }
    }
  },
  "required": ["rubrics"]
}`)}

const writerSystem = `You are a senior clinician writing grading rubrics for answers to a medical question, in the manner of QuarkMedBench. Write 5 to 8 rubrics for the question, in four categories:
- essential: core facts, diagnoses and safety advice every good answer must give;
- important: clinical reasoning and key context a good answer gives;
- highlight: extra value, such as evidence or useful nuance;
- pitfall: a fault an answer might make (a factual error, unsafe advice, a missed contraindication).
Give at least one essential rubric and at least one pitfall. Each rubric is one checkable criterion, written as a short sentence about the answer ("Advises ...", "Recommends ..."), in the question's language. For each, give a few lower-case keywords whose presence in an answer shows the rubric is met.

Reply with one JSON object and nothing else, in this form:
{"rubrics": [{"category": "essential", "text": "Advises ...", "keywords": ["..."]}]}`

// WriterMessages is the writer's prompt (WriterPromptVersion) for the
// question of one turn, given the session's earlier turns (questions and
// reference answers, when the source has them) and evidence passages.
func WriterMessages(earlier []schemas.MedRubricTurn, question string, evidence []string) []openai.ChatCompletionMessage {
	var b strings.Builder
	if len(earlier) > 0 {
		b.WriteString("## Earlier turns of the conversation (context)\n\n")
		for i, t := range earlier {
			fmt.Fprintf(&b, "User (turn %d):\n<<<\n%s\n>>>\n", i+1, t.User)
			if t.Reference != "" {
				fmt.Fprintf(&b, "Assistant (turn %d):\n<<<\n%s\n>>>\n", i+1, t.Reference)
			}
			b.WriteString("\n")
		}
	}
	if len(evidence) > 0 {
		b.WriteString("## Evidence passages (use them where they apply)\n\n")
		for i, e := range evidence {
			fmt.Fprintf(&b, "[%d] %s\n", i+1, e)
		}
		b.WriteString("\n")
	}
	b.WriteString("## Question to write rubrics for\n\n<<<\n")
	b.WriteString(question)
	b.WriteString("\n>>>\n")
	return []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: writerSystem},
		{Role: openai.ChatMessageRoleUser, Content: b.String()},
	}
}

// The baseline writers' oracle. Baseline models answer from the oracle a
// request carries (baseline/judge verbatim); for a writer the generator
// attaches what a writer that knew the source's own rubrics for the turn
// would propose, perturbed deterministically per writer so that consensus
// has near-duplicates to merge, disagreements to resolve and singletons to
// drop. Real writers never receive it. For each of the turn's rubrics,
// by a hash of (item, turn, writer, seed, rubric id):
//
//   - it is left out with probability 1/4;
//   - otherwise its text is reworded with probability 1/2 (prefixed "The
//     answer " with its first letter lower-cased, or "答案" for CJK text),
//     which keeps it above the similarity threshold of the original;
//   - a positive rubric's category moves one step (essential ↔ important
//     ↔ highlight) with probability 1/10;
//
// and with probability 1/2 the writer adds one spurious highlight from
// spuriousRubrics, so that only what two writers happen to share survives
// k = 2. A turn without rubrics in the source has no oracle.

var spuriousRubrics = []WrittenRubric{
	{Category: "highlight", Text: "Mentions the cost of the recommended treatment.", Keywords: []string{"cost"}},
	{Category: "highlight", Text: "Cites a named clinical guideline by its publisher and year.", Keywords: []string{"guideline"}},
	{Category: "highlight", Text: "Suggests keeping a written diary of symptoms.", Keywords: []string{"diary"}},
	{Category: "highlight", Text: "Recommends asking a pharmacist for advice.", Keywords: []string{"pharmacist"}},
	{Category: "highlight", Text: "Gives a telephone helpline for further questions.", Keywords: []string{"helpline"}},
	{Category: "highlight", Text: "Explains how common the condition is in the population.", Keywords: []string{"common"}},
}

// draw maps the hash of parts to [0, 1).
func draw(parts ...any) float64 {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%v\x00", p)
	}
	return float64(binary.BigEndian.Uint64(h.Sum(nil)[:8])>>11) / (1 << 53)
}

// WriterOracle is the oracle of writer's request for turn (1-based) of
// item: the turn's rubrics, perturbed as described above; "" when the
// turn has no rubrics.
func WriterOracle(item string, turn int, writer string, seed uint64, rubrics []schemas.MedRubric) string {
	if len(rubrics) == 0 {
		return ""
	}
	key := []any{"medrubric writer oracle", item, turn, writer, seed}
	at := func(parts ...any) float64 { return draw(append(append([]any(nil), key...), parts...)...) }
	var r WriterReply
	for _, ru := range rubrics {
		if at(ru.ID, "drop") < 0.25 {
			continue
		}
		w := WrittenRubric{Category: ru.Category, Text: ru.Text, Keywords: ru.Keywords}
		if at(ru.ID, "reword") < 0.5 {
			w.Text = reword(w.Text)
		}
		if at(ru.ID, "category") < 0.1 {
			w.Category = shift(w.Category, at(ru.ID, "direction") < 0.5)
		}
		r.Rubrics = append(r.Rubrics, w)
	}
	if at("spurious") < 0.5 {
		r.Rubrics = append(r.Rubrics, spuriousRubrics[int(at("which")*float64(len(spuriousRubrics)))])
	}
	b, _ := json.Marshal(r) // strings only: cannot fail
	return string(b)
}

// reword prefixes a rubric text the way a writer might phrase it.
func reword(text string) string {
	first, size := utf8.DecodeRuneInString(text)
	if judge.IsCJK(first) {
		return "答案" + text
	}
	return "The answer " + strings.ToLower(string(first)) + text[size:]
}

// shift moves a positive category one step, up or down; a pitfall stays.
func shift(category string, up bool) string {
	order := []string{"highlight", "important", "essential"}
	for i, c := range order {
		if c != category {
			continue
		}
		switch {
		case up && i < 2:
			return order[i+1]
		case !up && i > 0:
			return order[i-1]
		case up:
			return order[i-1]
		default:
			return order[i+1]
		}
	}
	return category
}
