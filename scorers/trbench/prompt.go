package trbench

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Message is one chat message of the conversation being judged.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// SystemWithTools renders the system message that presents the tools of a
// conversation (benchline's wording, in the Hermes tool-call convention the
// replies use).
func SystemWithTools(toolsJSON string) (string, error) {
	var tools []json.RawMessage
	if err := json.Unmarshal([]byte(toolsJSON), &tools); err != nil {
		return "", fmt.Errorf("trbench: tools: %w", err)
	}
	var b strings.Builder
	b.WriteString("You can call functions to help with the user's request. The available functions are listed below, one JSON schema per line, between <tools> and </tools>.\n<tools>\n")
	for _, t := range tools {
		b.Write(t)
		b.WriteByte('\n')
	}
	b.WriteString("</tools>\n\nTo call a function, reply with one block per call:\n<tool_call>\n{\"name\": <function name>, \"arguments\": <arguments as a JSON object>}\n</tool_call>")
	return b.String(), nil
}

// CritiquePrompt is the generative reward model's task for one order of a
// pair: the conversation (system message with the tools first), then two
// candidate assistant replies, asking for the better one as
// <choice>\nN\n</choice>.
func CritiquePrompt(chat []Message, reply1, reply2 string) string {
	var b strings.Builder
	b.WriteString("You are judging two replies of an AI assistant that can call functions (tools). ")
	b.WriteString("Read the conversation, including the tool definitions, and decide which reply handles the user's last request better. ")
	b.WriteString("A good reply calls the right function(s), with every required argument, with values that match what the user asked for and the tool schema, ")
	b.WriteString("makes no unnecessary calls, and does not call a tool when none fits.\n\n")
	b.WriteString("## Conversation\n\n")
	for _, m := range chat {
		fmt.Fprintf(&b, "[%s]\n%s\n\n", m.Role, m.Content)
	}
	fmt.Fprintf(&b, "## Reply 1\n\n%s\n\n## Reply 2\n\n%s\n\n", orEmpty(reply1), orEmpty(reply2))
	b.WriteString("## Your verdict\n\n")
	b.WriteString("Think it through briefly, then end with your choice in exactly this form, 1 or 2 on its own line:\n")
	b.WriteString("<choice>\n1\n</choice>\nor\n<choice>\n2\n</choice>")
	return b.String()
}

func orEmpty(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(empty reply)"
	}
	return s
}
