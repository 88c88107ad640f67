package reporteval

import (
	"encoding/json"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/judge"
)

// The prompt versions. A change to a template, or to the reply it asks
// for, bumps its version; every judge call records the version it used
// (judge.Verdict.PromptVersion), and the task's version changes with them.
const (
	// ReportPromptVersion asks the model under test for a report on a
	// topic.
	ReportPromptVersion = "reporteval-report/1"
	// QualityPromptVersion is the quality judge's: the five criteria on
	// 0–4 in one call.
	QualityPromptVersion = "reporteval-quality/1"
	// RedundancyPromptVersion is the redundancy judge's: one pair of
	// sections, 0–4.
	RedundancyPromptVersion = "reporteval-redundancy/1"
	// FactPromptVersion is the fact checker's: one cited sentence against
	// the text of its source, -1/0/1.
	FactPromptVersion = "reporteval-fact/1"
	// ProposerPromptVersion is the proposer's of the information-asymmetric
	// mode: the report's cited statements as atomic claims.
	ProposerPromptVersion = "reporteval-proposer/1"
	// CheckerPromptVersion is the checker's of the information-asymmetric
	// mode: one atomic claim against the text of its source, -1/0/1, never
	// the report.
	CheckerPromptVersion = "reporteval-checker/1"
)

// MaxSourceChars bounds the source text put in a fact-checking prompt (in
// bytes of UTF-8, cut at a character boundary; a marker says where): a
// page may be up to webfetch's 2 MiB, far more than a judge's context.
const MaxSourceChars = 60_000

const reportSystem = `You are a deep-research assistant. You write long, well-sourced research reports in Markdown.`

// ReportMessages is the prompt (ReportPromptVersion) that asks the model
// under test for a report on topic, in the form the scorer reads: "## "
// sections, citations [n] and a reference list of "[n],URL" lines.
func ReportMessages(topic string) []openai.ChatCompletionMessage {
	user := `Write a research report on the topic below.

Form:
- a title line starting with "# ", then an introduction;
- the body in sections, each under a heading line starting with "## ", then a conclusion under "## Conclusion";
- after each sentence that rests on a source, cite it with its number in square brackets, e.g. [3] or [2,5];
- at the end, a section "## References" with one line per source, the number in brackets, a comma and the URL, e.g. [3],https://example.org/page.

Cover the topic in depth, analyse rather than list, and do not repeat yourself across sections.

Topic:
` + topic
	return messages(reportSystem, user)
}

const qualitySystem = `You are an expert reviewer of research reports. You are given a research question and a report written to answer it, and you grade the report's quality.`

const qualityInstructions = `Grade the report below on five criteria, each with a whole number from 0 to 4.

1. Comprehensiveness and depth: does the report cover the key aspects of the question, with detailed analysis?
   4: complete, detailed and deep, nothing significant missing. 3: most key aspects, some depth, minor gaps. 2: notable gaps or shallow analysis that hinder understanding. 1: key aspects missing, little analysis. 0: almost no usable content.
2. Structure and logic: is it well organised, with a clear structure and a logical flow?
   4: clear, logical, smooth transitions. 3: reasonable, some awkward transitions or ordering. 2: loose structure, unclear links between parts. 1: confused structure, hard to follow. 0: no discernible structure.
3. Fluency and consistency of expression: is the language accurate, professional and consistent?
   4: fluent and precise throughout, no redundancy. 3: clear, occasional repetition or wordiness. 2: frequent redundancy or awkward wording. 1: confusing language, heavy repetition. 0: hard to read at all.
4. Material integration and originality: does it integrate its sources into independent analysis rather than stitching quotations together?
   4: deep synthesis, independent insight throughout. 3: mostly own analysis, sources well integrated. 2: visible patchwork, analysis leans on quotations. 1: mostly listed or excerpted material. 0: pure patchwork, no analysis.
5. Overall: how much do you like this report?
   4: very much. 3: like it. 2: it is average. 1: not much. 0: not at all.

A satisfactory report earns about 2 on each criterion; give more for excellence and less for deficiencies. Do not give a score above 3 or below 1 without substantial reasons.

Reply with one JSON object and nothing else, in this form:
{"Reason": "your reasons for the scores", "Comprehensiveness_Score": 2, "Coherence_Score": 2, "Clarity_Score": 2, "Insightfulness_Score": 2, "Overall_Score": 2}`

// QualityMessages is the quality judge's prompt (QualityPromptVersion).
func QualityMessages(topic, report string) []openai.ChatCompletionMessage {
	var b strings.Builder
	b.WriteString(qualityInstructions)
	b.WriteString("\n\n## Research question\n\n<<<\n")
	b.WriteString(topic)
	b.WriteString("\n>>>\n\n## Report\n\n<<<\n")
	b.WriteString(report)
	b.WriteString("\n>>>\n")
	return messages(qualitySystem, b.String())
}

const redundancySystem = `You assess how much two passages of the same report repeat each other's content.

Repetition is the same viewpoint, theme or conclusion stated twice, reworded or not; the same example, figure, fact or source used for the same point; or the same core information in different words.
Not repetition: a difference of wording alone; related topics that convey different information; one passage extending the other with new points; the same example used to explain different ideas.

Judge the information, not the style, and only from the two passages: not from what you know about the topic. It may help to look for the same quotations, figures or sources, and for the same line of argument.

Score on a scale of 0 to 4:
4: almost no repetition; the passages are independent.
3: slight repetition; one or two small overlaps that do not hurt the reading.
2: some repetition; several overlaps that hurt the reading somewhat.
1: severe repetition; much of the content is repeated.
0: excessive repetition; nearly everything is said twice.

Reply with one JSON object and nothing else, in this form:
{"score": 3, "explanation": "why, with the repeated content named", "repetitions_found": ["a repeated point"], "confidence": "90%"}`

// RedundancyMessages is the redundancy judge's prompt
// (RedundancyPromptVersion) for one pair of sections.
func RedundancyMessages(a, b string) []openai.ChatCompletionMessage {
	user := "Assess the repetition between the two passages.\n\n## Passage 1\n\n<<<\n" + a +
		"\n>>>\n\n## Passage 2\n\n<<<\n" + b + "\n>>>\n"
	return messages(redundancySystem, user)
}

const factCriteria = `Judge only from the web content, never from your own knowledge. Check every detail of the statement (times, places, people, quantities, names); a statement with several points is supported only when each point is.

- 1, fully supported: the web content states the information, or it follows by reasonable inference from what the content states.
- 0, partially supported: the content has related information but not enough to confirm or refute the statement, or it is ambiguous.
- -1, not supported: the content says nothing related to the statement, or it contradicts the statement.

Reply with one JSON object and nothing else, in this form:
{"is_factual": 1, "sentence_support": "the sentences of the web content that bear on the statement"}`

const factSystem = `You check a sentence from a research report against the web page it cites: can the sentence be found in, or reasonably inferred from, the page's content?

` + factCriteria

const checkerSystem = `You check a claim against the web page it cites: can the claim be found in, or reasonably inferred from, the page's content? The claim was extracted from a document you do not see; judge the claim as stated.

` + factCriteria

// FactMessages is the fact checker's prompt (FactPromptVersion): the
// source's text (cut at MaxSourceChars) and the sentence.
func FactMessages(source, sentence string) []openai.ChatCompletionMessage {
	return messages(factSystem, "## Web content\n\n<<<\n"+source+"\n>>>\n\n## Sentence\n\n<<<\n"+sentence+"\n>>>\n")
}

// CheckerMessages is the checker's prompt (CheckerPromptVersion): the
// source's text and one claim; never the report or the sentence the claim
// came from.
func CheckerMessages(source, claim string) []openai.ChatCompletionMessage {
	return messages(checkerSystem, "## Web content\n\n<<<\n"+source+"\n>>>\n\n## Claim\n\n<<<\n"+claim+"\n>>>\n")
}

const proposerSystem = `You split the cited statements of a research report into atomic claims: short, self-contained statements, each making exactly one factual assertion, in the report's own language.

Take only sentences that cite a source with a number in square brackets ([3], [2,5] or [[3]]). Keep every assertion such a sentence makes, exactly as the report makes it, right or wrong, and add nothing. Resolve pronouns so that each claim can be read alone. Give each claim the numbers of the sources its sentence cites.

Reply with one JSON object and nothing else, in this form:
{"claims": [{"claim": "one atomic claim", "refs": [3]}]}`

// ProposerMessages is the proposer's prompt (ProposerPromptVersion): the
// report.
func ProposerMessages(report string) []openai.ChatCompletionMessage {
	return messages(proposerSystem, "## Report\n\n<<<\n"+report+"\n>>>\n")
}

// CutSource returns the source text a prompt shows: at most MaxSourceChars
// bytes, cut at a character boundary, with a line saying so when cut.
func CutSource(text string) string {
	if len(text) <= MaxSourceChars {
		return text
	}
	cut := MaxSourceChars
	for cut > 0 && !isRuneStart(text[cut]) {
		cut--
	}
	return text[:cut] + fmt.Sprintf("\n[… the page goes on: cut at %d of %d bytes]", cut, len(text))
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func messages(system, user string) []openai.ChatCompletionMessage {
	return []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: system},
		{Role: openai.ChatMessageRoleUser, Content: user},
	}
}

// scaleSchema is a 0–4 score: the enum lets providers constrain it and the
// baseline judges move it on its scale.
const scaleSchema = `{"type": "integer", "enum": [0, 1, 2, 3, 4]}`

// QualitySchema is the JSON schema of QualityReply, sent as the response
// format of quality calls (Reason as a string).
var QualitySchema = &judge.Schema{Name: "report_quality", Strict: true, JSON: json.RawMessage(`{
  "type": "object",
  "properties": {
    "Reason": {"type": "string"},
    "Comprehensiveness_Score": ` + scaleSchema + `,
    "Coherence_Score": ` + scaleSchema + `,
    "Clarity_Score": ` + scaleSchema + `,
    "Insightfulness_Score": ` + scaleSchema + `,
    "Overall_Score": ` + scaleSchema + `
  },
  "required": ["Reason", "Comprehensiveness_Score", "Coherence_Score", "Clarity_Score", "Insightfulness_Score", "Overall_Score"],
  "additionalProperties": false
}`)}

// RedundancySchema is the JSON schema of RedundancyReply.
var RedundancySchema = &judge.Schema{Name: "section_repetition", Strict: true, JSON: json.RawMessage(`{
  "type": "object",
  "properties": {
    "score": ` + scaleSchema + `,
    "explanation": {"type": "string"},
    "repetitions_found": {"type": "array", "items": {"type": "string"}},
    "confidence": {"type": "string"}
  },
  "required": ["score", "explanation", "repetitions_found", "confidence"],
  "additionalProperties": false
}`)}

// FactSchema is the JSON schema of FactReply, for fact checker and
// checker calls.
var FactSchema = &judge.Schema{Name: "fact_check", Strict: true, JSON: json.RawMessage(`{
  "type": "object",
  "properties": {
    "is_factual": {"type": "integer", "enum": [-1, 0, 1]},
    "sentence_support": {"type": "string"}
  },
  "required": ["is_factual", "sentence_support"],
  "additionalProperties": false
}`)}

// ClaimsSchema is the JSON schema of ProposedClaims.
var ClaimsSchema = &judge.Schema{Name: "atomic_claims", Strict: true, JSON: json.RawMessage(`{
  "type": "object",
  "properties": {
    "claims": {"type": "array", "items": {
      "type": "object",
      "properties": {"claim": {"type": "string"}, "refs": {"type": "array", "items": {"type": "integer"}}},
      "required": ["claim", "refs"],
      "additionalProperties": false
    }}
  },
  "required": ["claims"],
  "additionalProperties": false
}`)}
