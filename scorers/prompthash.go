package scorers

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// PromptHash is the hash every task records as Outcome.PromptHash: the
// first 8 bytes, in hex, of the SHA-256 of parts joined by NUL bytes. A
// task passes what identifies the prompt it sent (its text, or its JSON).
func PromptHash(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:8])
}
