package access

import (
	"errors"
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/secret"
)

func TestNewTokenRoundTrip(t *testing.T) {
	tok, line, err := NewToken("ci-scores")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(line, tok.Reveal()) || !strings.HasPrefix(tok.Reveal(), TokenPrefix) {
		t.Fatalf("line %q holds the token or token has no prefix", line)
	}
	tokens, err := ParseTokens("tokens", []byte("# machines\n\n"+line+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if name, ok := tokens.Lookup(tok); !ok || name != "ci-scores" {
		t.Fatalf("Lookup: %q %v", name, ok)
	}
	other, _, _ := NewToken("ci-scores")
	for _, bad := range []secret.Value{other, {}, secret.New(line), secret.New(strings.TrimPrefix(line, "ci-scores sha256:"))} {
		if name, ok := tokens.Lookup(bad); ok {
			t.Errorf("Lookup(%q) = %q", bad.Reveal(), name)
		}
	}
	if _, _, err := NewToken("bad name"); err == nil {
		t.Error("NewToken took a bad name")
	}
}

func TestParseTokensRefuses(t *testing.T) {
	_, good, _ := NewToken("a")
	hash := strings.TrimPrefix(good, "a ")
	for _, tc := range []struct{ name, data, want string }{
		{"clear token", "a blt_abcdef\n", "tokens:1: token \"a\": want sha256:"},
		{"short hash", "a sha256:abcd\n", "tokens:1:"},
		{"three fields", good + " x\n", "tokens:1: want NAME sha256:HEX"},
		{"bad name", "a/b " + hash + "\n", "tokens:1: \"a/b\" is not a token name"},
		{"twice", good + "\n# c\n" + good + "\n", "tokens:3: token \"a\" named twice"},
		{"too large", strings.Repeat("#", MaxTokenFileBytes+1), "larger than"},
	} {
		_, err := ParseTokens("tokens", []byte(tc.data))
		if !errors.Is(err, ErrBadTokens) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestPolicy(t *testing.T) {
	p := Policy{Groups: []string{"eval"}, EmailDomains: []string{"example.com"}, Tokens: []string{"ci"}}
	for _, tc := range []struct {
		name string
		id   Identity
		anon bool
		want bool
	}{
		{"anonymous", Identity{}, true, false},
		{"group", Identity{Subject: "u", Groups: []string{"x", "eval"}}, false, true},
		{"other group", Identity{Subject: "u", Groups: []string{"evals"}}, false, false},
		{"domain", Identity{Email: "a@Example.com"}, false, true},
		{"subdomain", Identity{Email: "a@evil.example.com"}, false, false},
		{"suffix", Identity{Email: "a@notexample.com"}, false, false},
		{"token", Identity{Token: "ci"}, false, true},
		{"other token", Identity{Token: "cd"}, false, false},
	} {
		if got := p.Allows(tc.id, tc.anon); got != tc.want {
			t.Errorf("%s: %v", tc.name, got)
		}
	}
	open := Policy{Anonymous: true}
	if open.Allows(Identity{}, false) || !open.Allows(Identity{}, true) {
		t.Error("anonymous: true must need the operator's allowance")
	}
	if (Policy{}).Allows(Identity{Token: "ci", Groups: []string{"eval"}}, true) {
		t.Error("the zero policy let someone in")
	}
	for _, bad := range []Policy{{Groups: []string{""}}, {EmailDomains: []string{"a@b.com"}}, {EmailDomains: []string{"Example.com"}},
		{Tokens: []string{"a b"}}, {Groups: make([]string, MaxPolicyEntries+1)}} {
		if bad.Validate() == nil {
			t.Errorf("%+v validated", bad)
		}
	}
}
