package scorers

import openai "github.com/sashabaranov/go-openai"

// Turn is one user turn of a multi-turn sample and its reference reply
// ("" when it has none).
type Turn struct {
	User, Reference string
}

// TurnReferences returns the references of a multi-turn sample whose
// Evaluate sends, for turn t, prefix (a system message, or nothing)
// followed by the conversation so far: turn t is keyed by the earlier
// turns with their references as the assistant's replies, and, after the
// first turn, also by its user message alone, so that a model whose
// earlier replies differed still finds it (the baseline server's
// last-user fallback). Turns without a reference have none.
func TurnReferences(prefix []openai.ChatCompletionMessage, turns []Turn) []Reference {
	var refs []Reference
	msgs := append([]openai.ChatCompletionMessage(nil), prefix...)
	for i, t := range turns {
		user := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: t.User}
		msgs = append(msgs, user)
		if t.Reference != "" {
			refs = append(refs, Reference{Messages: append([]openai.ChatCompletionMessage(nil), msgs...), Content: t.Reference})
			if i > 0 {
				refs = append(refs, Reference{Messages: []openai.ChatCompletionMessage{user}, Content: t.Reference})
			}
		}
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: t.Reference})
	}
	return refs
}
