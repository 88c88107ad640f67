// Package refkey derives the keys under which reference answers are kept
// and looked up: the engine and the benchmarks' tasks compute them when
// they write references, the baseline model server when it answers a
// request. Keeping them here, apart from the server, lets tasks name a
// reference without linking a model server.
//
// Every key is a hex sha256, so keys written by one version are found by
// the next only while these functions stay the same: change them only
// together with every stored reference.
package refkey

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
)

// Conversation is the normalized hash of a conversation: sha256 over the
// role, whitespace-collapsed text, tool calls (arguments with sorted keys)
// and tool call ids of every message except system and developer messages,
// so a reference survives changes to the system prompt and to incidental
// whitespace.
func Conversation(msgs []openai.ChatCompletionMessage) string {
	// The bytes hashed are, per message, role NUL text NUL id NUL, then
	// "call" NUL name NUL arguments NUL per tool call, then a newline: built
	// in one buffer (keys are computed for every request and every
	// reference, so without fmt or a slice of words per message).
	h := sha256.New()
	buf := make([]byte, 0, 512)
	for _, m := range msgs {
		if m.Role == openai.ChatMessageRoleSystem || m.Role == openai.ChatMessageRoleDeveloper {
			continue
		}
		buf = append(buf[:0], m.Role...)
		buf = append(buf, 0)
		buf = appendNormalized(buf, Text(m))
		buf = append(buf, 0)
		buf = append(buf, m.ToolCallID...)
		buf = append(buf, 0)
		for _, tc := range m.ToolCalls {
			buf = append(buf, "call\x00"...)
			buf = append(buf, tc.Function.Name...)
			buf = append(buf, 0)
			buf = append(buf, normalizeJSON(tc.Function.Arguments)...)
			buf = append(buf, 0)
		}
		buf = append(buf, '\n')
		h.Write(buf)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Reward is the key of a reward reference: the answer reward models
// compare replies with, for the conversation msgs (the turns before the
// reply, normalized as Conversation does). It is apart from Conversation
// so that a reward reference never answers a chat request, nor the other
// way round.
func Reward(msgs []openai.ChatCompletionMessage) string {
	sum := sha256.Sum256([]byte("reward\x00" + Conversation(msgs)))
	return hex.EncodeToString(sum[:])
}

// ToolsHash identifies the tools offered with a request: their full
// definitions (names, descriptions, schemas), order-independent.
func ToolsHash(tools []openai.Tool) string {
	defs := make([]string, 0, len(tools))
	for _, t := range tools {
		b, _ := json.Marshal(t) // map keys are sorted, so equal tools encode equally
		defs = append(defs, string(b))
	}
	sort.Strings(defs)
	sum := sha256.Sum256([]byte(strings.Join(defs, "\x00")))
	return hex.EncodeToString(sum[:])
}

// WithTools is Conversation of msgs together with the ToolsHash of the
// tools offered: benchmarks whose items share a question but differ in
// their tools (BFCL's live categories do) key their references this way.
func WithTools(msgs []openai.ChatCompletionMessage, toolsHash string) string {
	sum := sha256.Sum256([]byte(Conversation(msgs) + "\x00tools\x00" + toolsHash))
	return hex.EncodeToString(sum[:])
}

// LastUser is Conversation of the last user message alone, "" when there
// is none: the fallback lookup when the full conversation has no reference
// (e.g. a benchmark that keys references by question while the engine adds
// earlier turns).
func LastUser(msgs []openai.ChatCompletionMessage) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == openai.ChatMessageRoleUser {
			return Conversation(msgs[i : i+1])
		}
	}
	return ""
}

// Text is the text of a message as keys see it: its content, or the text
// of its text parts, each followed by a newline.
func Text(m openai.ChatCompletionMessage) string {
	if len(m.MultiContent) == 0 {
		return m.Content
	}
	var b strings.Builder
	for _, p := range m.MultiContent {
		if p.Type == openai.ChatMessagePartTypeText {
			b.WriteString(p.Text)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// normalize collapses every run of white space (unicode.IsSpace) in s to
// one space and trims both ends: strings.Join(strings.Fields(s), " ").
func normalize(s string) string { return string(appendNormalized(nil, s)) }

// appendNormalized appends normalize(s) to dst without splitting s into
// words. Bytes that are not valid UTF-8 are kept, as strings.Fields keeps
// them.
func appendNormalized(dst []byte, s string) []byte {
	space := false // a space is owed before the next word
	start := len(dst)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiSpace[c] {
				space = true
			} else {
				if space && len(dst) > start {
					dst = append(dst, ' ')
				}
				space = false
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			space = true
		} else {
			if space && len(dst) > start {
				dst = append(dst, ' ')
			}
			space = false
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return dst
}

// asciiSpace marks the ASCII bytes unicode.IsSpace reports.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// normalizeJSON re-encodes a JSON value with sorted keys; invalid JSON is
// returned as is.
func normalizeJSON(s string) string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
