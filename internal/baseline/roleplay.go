package baseline

import (
	"fmt"
	"strings"
	"unicode"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/internal/refkey"
)

// The role-play models. They know no benchmark: a persona is whatever the
// request's system message says, a simulated user's next turn is the
// request's oracle. Replies are in Chinese when the text they answer is
// mostly Han characters, else in English.
//
//   - persona: the reference answer when the references hold one for the
//     conversation (as reference), else a reply in the voice of the system
//     message: its first sentence in the first person ("You are X." →
//     "I am X."; "你是X。" → "我是X。"), the last user message quoted, every
//     earlier user message quoted as remembered, and a warm closing
//     sentence. A deterministic in-character floor: it never breaks
//     character and forgets nothing the user said.
//   - assistant: ignores any persona and answers as a generic AI
//     assistant that quotes the last user message: the classic
//     out-of-character failure of role-play.
//   - user, user-<k>: a simulated user. Its own earlier turns are the
//     request's assistant messages (the conversation as the user sees
//     it). It replies with the request's oracle, the next user turn the
//     task's own deterministic rule writes; user-<k> replies with
//     modelapi.EndOfConversation once it has written k turns, user never
//     does (the task's turn limit ends the dialogue).

// personaReply is baseline/persona's reply when no reference holds one.
func personaReply(msgs []openai.ChatCompletionMessage) string {
	system, users := "", []string(nil)
	for _, m := range msgs {
		switch m.Role {
		case openai.ChatMessageRoleSystem, openai.ChatMessageRoleDeveloper:
			if system == "" {
				system = refkey.Text(m)
			}
		case openai.ChatMessageRoleUser:
			users = append(users, strings.TrimSpace(refkey.Text(m)))
		}
	}
	last := ""
	if len(users) > 0 {
		last, users = users[len(users)-1], users[:len(users)-1]
	}
	intro := firstPerson(firstSentence(system))
	var b strings.Builder
	if mostlyHan(system + last) {
		b.WriteString(intro)
		fmt.Fprintf(&b, "你说：“%s”。", last)
		if len(users) > 0 {
			b.WriteString("我记得你告诉过我：")
			for _, u := range users {
				fmt.Fprintf(&b, "“%s”", u)
			}
			b.WriteString("。")
		}
		b.WriteString("很高兴你来找我。")
		return b.String()
	}
	if intro != "" {
		b.WriteString(intro + " ")
	}
	fmt.Fprintf(&b, "You say: \"%s\".", last)
	if len(users) > 0 {
		b.WriteString(" I remember what you told me:")
		for _, u := range users {
			fmt.Fprintf(&b, " \"%s\"", u)
		}
		b.WriteString(".")
	}
	b.WriteString(" I am glad you came to me.")
	return b.String()
}

// assistantReply is baseline/assistant's reply: out of character.
func assistantReply(msgs []openai.ChatCompletionMessage) string {
	last := lastUser(msgs)
	if mostlyHan(last) {
		return fmt.Sprintf("作为一个AI助手，我不扮演角色，但我可以帮你处理这条消息：“%s”。", last)
	}
	return fmt.Sprintf("As an AI assistant, I do not play characters, but I can help with your message: \"%s\".", last)
}

// userReply is a simulated user's next turn.
func userReply(m Model, msgs []openai.ChatCompletionMessage, oracle string) string {
	own := 0
	for _, msg := range msgs {
		if msg.Role == openai.ChatMessageRoleAssistant {
			own++
		}
	}
	switch {
	case m.K > 0 && own >= m.K:
		return modelapi.EndOfConversation
	case oracle == "":
		return NoOracleReply(m)
	}
	return oracle
}

func lastUser(msgs []openai.ChatCompletionMessage) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == openai.ChatMessageRoleUser {
			return strings.TrimSpace(refkey.Text(msgs[i]))
		}
	}
	return ""
}

// firstSentence is s up to its first sentence end (". ", "!", "?", a
// line break, or "。", "！", "？"), trimmed.
func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	for i, r := range s {
		switch r {
		case '\n':
			return strings.TrimSpace(s[:i])
		case '。', '！', '？':
			return s[:i+len(string(r))]
		case '.', '!', '?':
			if rest := s[i+1:]; rest == "" || rest[0] == ' ' || rest[0] == '\n' {
				return s[:i+1]
			}
		}
	}
	return s
}

// firstPerson turns a persona's "You are X." (or "你是X。") into "I am X."
// ("我是X。"); other sentences are kept as they are.
func firstPerson(s string) string {
	for _, p := range []struct{ you, i string }{{"You are ", "I am "}, {"you are ", "I am "}, {"你是", "我是"}} {
		if rest, ok := strings.CutPrefix(s, p.you); ok {
			return p.i + rest
		}
	}
	return s
}

// mostlyHan reports whether at least half of s's letters are Han
// characters.
func mostlyHan(s string) bool {
	han, letters := 0, 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			letters++
			if unicode.Is(unicode.Han, r) {
				han++
			}
		}
	}
	return letters > 0 && 2*han >= letters
}
