// Package access decides who may read a leaderboard served by
// `benchline leaderboard serve`: a board's Policy (the access: key of its
// board file), the machines' bearer tokens (a Tokens file of hashes) and the
// Identity of a request.
package access

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/benchline/benchline/internal/secret"
)

// MaxTokenFileBytes bounds a tokens file; a larger one is refused unread.
const MaxTokenFileBytes = 1 << 20

// MaxTokens bounds the tokens one file names.
const MaxTokens = 10000

// TokenPrefix starts every token NewToken makes.
const TokenPrefix = "blt_"

var tokenName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// Policy is the access: key of a board file:
//
//	access:
//	  groups: [eval-team]          # an OIDC groups claim naming one of these
//	  email_domains: [example.com] # a verified email in one of these domains
//	  tokens: [ci-scores]          # a bearer token of one of these names
//	  anonymous: false             # anyone (also needs serve --allow-anonymous)
//
// The zero Policy lets no one read: a board is private by default.
type Policy struct {
	Groups       []string `json:"groups,omitempty" yaml:"groups"`
	EmailDomains []string `json:"email_domains,omitempty" yaml:"email_domains"`
	Tokens       []string `json:"tokens,omitempty" yaml:"tokens"`
	Anonymous    bool     `json:"anonymous,omitempty" yaml:"anonymous"`
}

// MaxPolicyEntries bounds each list of a Policy.
const MaxPolicyEntries = 100

// Normal is p with empty lists nil, so that equal policies compare equal.
func (p Policy) Normal() Policy {
	nilIfEmpty := func(s []string) []string {
		if len(s) == 0 {
			return nil
		}
		return s
	}
	return Policy{nilIfEmpty(p.Groups), nilIfEmpty(p.EmailDomains), nilIfEmpty(p.Tokens), p.Anonymous}
}

// Validate checks a policy's names; the error names the key.
func (p Policy) Validate() error {
	lists := []struct {
		key  string
		vals []string
		ok   func(string) bool
	}{
		{"groups", p.Groups, func(s string) bool { return s != "" && len(s) <= 256 && !strings.ContainsAny(s, "\x00\n") }},
		{"email_domains", p.EmailDomains, func(s string) bool {
			return s != "" && len(s) <= 253 && !strings.ContainsAny(s, "@/ \x00") && strings.ToLower(s) == s
		}},
		{"tokens", p.Tokens, tokenName.MatchString},
	}
	for _, l := range lists {
		if len(l.vals) > MaxPolicyEntries {
			return fmt.Errorf("access: %s: %d entries, at most %d", l.key, len(l.vals), MaxPolicyEntries)
		}
		for i, v := range l.vals {
			if !l.ok(v) {
				return fmt.Errorf("access: %s[%d]: %q is not a valid entry", l.key, i, v)
			}
		}
	}
	return nil
}

// Identity is who made a request. The zero Identity is anonymous.
type Identity struct {
	// Token is the name of the bearer token presented, if any.
	Token string
	// Subject, Email (verified only) and Groups come from an OIDC session.
	Subject string
	Email   string
	Groups  []string
}

// Who names the identity for an audit line.
func (id Identity) Who() string {
	switch {
	case id.Token != "":
		return "token:" + id.Token
	case id.Email != "":
		return "user:" + id.Email
	case id.Subject != "":
		return "user:" + id.Subject
	}
	return "anonymous"
}

// Allows reports whether id may read a board with policy p; anonymous
// access counts only when the operator allows it (allowAnonymous).
func (p Policy) Allows(id Identity, allowAnonymous bool) bool {
	if p.Anonymous && allowAnonymous {
		return true
	}
	if id.Token != "" {
		for _, t := range p.Tokens {
			if t == id.Token {
				return true
			}
		}
		return false
	}
	for _, g := range id.Groups {
		for _, want := range p.Groups {
			if g == want {
				return true
			}
		}
	}
	if at := strings.LastIndexByte(id.Email, '@'); at > 0 {
		domain := strings.ToLower(id.Email[at+1:])
		for _, d := range p.EmailDomains {
			if d == domain {
				return true
			}
		}
	}
	return false
}

// Tokens is a parsed tokens file: one "NAME sha256:HEX" line per token
// (blank lines and # comments skipped). Only hashes are held.
type Tokens struct {
	byHash map[[sha256.Size]byte]string
}

// ErrBadTokens is wrapped by every error of ReadTokens and ParseTokens.
var ErrBadTokens = errors.New("bad tokens file")

// ReadTokens reads a tokens file of at most MaxTokenFileBytes.
func ReadTokens(path string) (*Tokens, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("access: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxTokenFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("access: %s: %w", path, err)
	}
	return ParseTokens(path, data)
}

// ParseTokens parses a tokens file's content; errors name file and line.
func ParseTokens(file string, data []byte) (*Tokens, error) {
	if len(data) > MaxTokenFileBytes {
		return nil, fmt.Errorf("access: %s: larger than %d bytes: %w", file, MaxTokenFileBytes, ErrBadTokens)
	}
	t := &Tokens{byHash: map[[sha256.Size]byte]string{}}
	names := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 4096), MaxTokenFileBytes)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("access: %s:%d: %s: %w", file, line, fmt.Sprintf(format, args...), ErrBadTokens)
		}
		fields := strings.Fields(s)
		if len(fields) != 2 {
			return nil, bad("want NAME sha256:HEX")
		}
		name, h := fields[0], fields[1]
		if !tokenName.MatchString(name) {
			return nil, bad("%q is not a token name", name)
		}
		if names[name] {
			return nil, bad("token %q named twice", name)
		}
		hexSum, ok := strings.CutPrefix(h, "sha256:")
		raw, err := hex.DecodeString(hexSum)
		if !ok || err != nil || len(raw) != sha256.Size {
			return nil, bad("token %q: want sha256: and 64 hex digits (never the token itself)", name)
		}
		if len(names) >= MaxTokens {
			return nil, bad("more than %d tokens", MaxTokens)
		}
		names[name] = true
		t.byHash[[sha256.Size]byte(raw)] = name
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("access: %s: %w: %w", file, err, ErrBadTokens)
	}
	return t, nil
}

// Lookup returns the name of the token tok, if the file holds its hash.
func (t *Tokens) Lookup(tok secret.Value) (string, bool) {
	if t == nil || tok.IsZero() {
		return "", false
	}
	sum := sha256.Sum256([]byte(tok.Reveal()))
	// Looked up by the hash of a 256-bit token: a timing difference
	// says nothing about the token itself.
	name, ok := t.byHash[sum]
	return name, ok
}

// NewToken makes a token for name (32 random bytes) and returns it with
// its line for the tokens file. The token is shown once; only the line is kept.
func NewToken(name string) (secret.Value, string, error) {
	if !tokenName.MatchString(name) {
		return secret.Value{}, "", fmt.Errorf("access: %q is not a token name (letters, digits, _ . -, at most 64)", name)
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return secret.Value{}, "", fmt.Errorf("access: %w", err)
	}
	tok := TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return secret.New(tok), Line(name, secret.New(tok)), nil
}

// Line is a tokens file's line for token tok named name.
func Line(name string, tok secret.Value) string {
	sum := sha256.Sum256([]byte(tok.Reveal()))
	return name + " sha256:" + hex.EncodeToString(sum[:])
}
