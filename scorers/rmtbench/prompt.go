package rmtbench

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/schemas"
)

// The prompt versions. A change to a template, or to the reply it asks
// for, bumps its version; every judge call records the version it used
// (judge.Verdict.PromptVersion), and the details record the others.
const (
	// PersonaPromptVersion is the persona: the system message the model
	// under test gets once, first.
	PersonaPromptVersion = "rmtbench-persona/1"
	// UserPromptVersion is the simulated user's prompt: the motivation,
	// the topics and preferences, and the conversation as the user sees
	// it (its own turns as assistant messages).
	UserPromptVersion = "rmtbench-user/1"
	// JudgePromptVersion is the judge's prompt: the character, the
	// motivation, the earlier rounds as context, the round and the
	// dimensions to score, in one call per round and judge.
	JudgePromptVersion = "rmtbench-judge/1"
)

// Exchange is one round: the user's turn and the character's reply.
type Exchange struct {
	User, Reply string
}

// Languages the persona and the simulated user are written for.
const (
	English = "en"
	Chinese = "zh"
)

// PersonaMessage is the persona (PersonaPromptVersion): the system message
// that makes the model under test the character, injected once. Its first
// sentence is "You are <name>." ("你是<name>。").
func PersonaMessage(c schemas.RMTCharacter, language string) openai.ChatCompletionMessage {
	var b strings.Builder
	if language == Chinese {
		fmt.Fprintf(&b, "你是%s。\n", c.Name)
		if c.Background != "" {
			b.WriteString(c.Background + "\n")
		} else {
			fmt.Fprintf(&b, "你的特点：%s。\n", strings.Join(c.Traits, "、"))
		}
		fmt.Fprintf(&b, "\n在整个对话中始终扮演%s：用第一人称、用中文、以%s的方式说话和感受。不要说或暗示你是人工智能、语言模型或助手。", c.Name, c.Name)
	} else {
		fmt.Fprintf(&b, "You are %s.\n", c.Name)
		if c.Background != "" {
			b.WriteString(c.Background + "\n")
		} else {
			fmt.Fprintf(&b, "Your traits: %s.\n", strings.Join(c.Traits, ", "))
		}
		fmt.Fprintf(&b, "\nStay in character as %s for the whole conversation: speak and feel as %s would, in the first person, in English. "+
			"Never say or imply that you are an AI, a language model or an assistant.", c.Name, c.Name)
	}
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: b.String()}
}

// userSystem is the simulated user's instructions.
const userSystem = `You are role-playing a user who is talking to a character played by someone else. You are the user: not the character, and not an assistant.

The character: %s
Your motivation: %s
What you want to talk about: %s
%s
Write only your next message to %s, in %s: one to three sentences, in the user's own voice. Keep to your motivation and react to what %s said last. Mention your preferences naturally, one at a time, when they fit.

When your motivation is fulfilled or the conversation has run its course, reply with exactly %s instead of a message.`

// startTurn is the simulated user's cue before the conversation begins.
const startTurn = "(The conversation has not started yet. Write your first message to %s.)"

// UserMessages is the simulated user's prompt (UserPromptVersion) for its
// next turn after history: the instructions as the system message, then
// the conversation as the user sees it, a cue first, its own turns as
// assistant messages and the character's replies as user messages.
func UserMessages(c schemas.RMTCharacter, motivation string, d schemas.RMTDialogue, language string, history []Exchange) []openai.ChatCompletionMessage {
	prefs := ""
	if len(d.Preferences) > 0 {
		prefs = "Your preferences:\n"
		for _, p := range d.Preferences {
			prefs += "- " + p.Statement + "\n"
		}
	}
	lang := "English"
	if language == Chinese {
		lang = "Chinese"
	}
	sys := fmt.Sprintf(userSystem, characterLine(c), motivation, strings.Join(d.Topics, "; "), prefs, c.Name, lang, c.Name, modelapi.EndOfConversation)
	out := []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: sys},
		{Role: openai.ChatMessageRoleUser, Content: fmt.Sprintf(startTurn, c.Name)},
	}
	for _, h := range history {
		out = append(out,
			openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: h.User},
			openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: h.Reply})
	}
	return out
}

// characterLine names the character and what it is, in one line.
func characterLine(c schemas.RMTCharacter) string {
	if c.Background != "" {
		return c.Name + ". " + c.Background
	}
	return c.Name + ", " + strings.Join(c.Traits, ", ")
}

const judgeSystem = `You are an expert evaluator of role-play conversations. A model plays a character in a conversation with a user who came with a motivation. You score one round: the user's latest message and the character's reply to it.

Score each listed dimension on its own, from 1 (very poor) to 5 (excellent), as an integer, from what the reply says in the context of the conversation. Be strict: a 5 needs a reply that clearly deserves it.

Reply with one JSON object and nothing else, with exactly one score per listed dimension, in this form:
{"scores": [{"dimension": "character_consistency", "score": 4, "reason": "one short sentence"}]}`

// JudgeMessages is the judge's prompt (JudgePromptVersion) for the reply
// of round: the character, the user's motivation, the preferences the user
// stated in earlier rounds, the earlier rounds as context, the round, and
// the dimensions to score.
func JudgeMessages(c schemas.RMTCharacter, motivation string, stated []schemas.RMTPreference, history []Exchange, round Exchange, dims []Dimension) []openai.ChatCompletionMessage {
	var b strings.Builder
	b.WriteString("## Character\n\n")
	fmt.Fprintf(&b, "Name: %s\n", c.Name)
	if c.Background != "" {
		fmt.Fprintf(&b, "Background: %s\n", c.Background)
	} else {
		fmt.Fprintf(&b, "Traits: %s\n", strings.Join(c.Traits, ", "))
	}
	fmt.Fprintf(&b, "\n## The user's motivation\n\n%s\n\n", motivation)
	if len(stated) > 0 {
		b.WriteString("## Preferences the user stated in earlier rounds\n\n")
		for _, p := range stated {
			fmt.Fprintf(&b, "- %s\n", p.Statement)
		}
		b.WriteString("\n")
	}
	if len(history) > 0 {
		b.WriteString("## Earlier rounds (context only; do not score them)\n\n")
		for i, h := range history {
			fmt.Fprintf(&b, "User (round %d):\n<<<\n%s\n>>>\n%s (round %d):\n<<<\n%s\n>>>\n\n", i+1, h.User, c.Name, i+1, h.Reply)
		}
	}
	fmt.Fprintf(&b, "## Round to score\n\nUser:\n<<<\n%s\n>>>\n%s:\n<<<\n%s\n>>>\n\n## Dimensions\n\n", round.User, c.Name, round.Reply)
	names := make([]string, len(dims))
	for i, d := range dims {
		fmt.Fprintf(&b, "- %s: %s\n", d, definitions[d])
		names[i] = string(d)
	}
	fmt.Fprintf(&b, "\nReply with the JSON object: one score for each of %s.\n", strings.Join(names, ", "))
	return []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: judgeSystem},
		{Role: openai.ChatMessageRoleUser, Content: b.String()},
	}
}

// DimensionScore is a judge's score of one dimension.
type DimensionScore struct {
	Dimension string `json:"dimension"`
	Score     int    `json:"score"`
	Reason    string `json:"reason"`
}

// Reply is what a judge replies: one score per dimension asked. Every
// field is required (judge.Decode).
type Reply struct {
	Scores []DimensionScore `json:"scores"`
}

// ErrReply is wrapped by Validate's errors.
var ErrReply = errors.New("rmtbench: invalid scores")

// Validate rejects a score without a dimension, a dimension scored twice
// and a score outside 1–5 (no clamping: a reply that breaks the scale is
// unparseable, asked again once, then a judge error). A dimension the
// reply leaves out, or one that was not asked, is not an error of the
// reply's form: the task records the first as a judge error for that
// dimension and the second as ignored.
func (r Reply) Validate() error { return scoredDimensions.Check(r.Scores) }

var scoredDimensions = judge.UniqueKeys[DimensionScore, string]{
	Key:   func(s DimensionScore) (string, bool) { d := strings.TrimSpace(s.Dimension); return d, d != "" },
	NoKey: func(i int, _ DimensionScore) error { return fmt.Errorf("%w: score %d has no dimension", ErrReply, i) },
	Twice: func(d string) error { return fmt.Errorf("%w: dimension %q scored twice", ErrReply, d) },
	Item: func(d string, s DimensionScore) error {
		if s.Score < MinScore || s.Score > MaxScore {
			return fmt.Errorf("%w: %s scored %d, outside %d–%d", ErrReply, d, s.Score, MinScore, MaxScore)
		}
		return nil
	},
}

// ReplySchema is the JSON schema of Reply, sent as the response format of
// judge calls (strict: every field required, nothing else).
var ReplySchema = &judge.Schema{Name: "round_scores", Strict: true, JSON: json.RawMessage(`{
  "type": "object",
  "properties": {
    "scores": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "dimension": {"type": "string"},
          "score": {"type": "integer", "minimum": 1, "maximum": 5},
          "reason": {"type": "string"}
        },
        "required": ["dimension", "score", "reason"],
        "additionalProperties": false
      }
    }
  },
  "required": ["scores"],
  "additionalProperties": false
}`)}
