package scorers

import "testing"

// TestPromptHash pins the hash recorded with results: the values stay
// those the tasks recorded before they shared it.
func TestPromptHash(t *testing.T) {
	for _, tc := range []struct {
		parts []string
		want  string
	}{
		{[]string{"abc"}, "ba7816bf8f01cfea"}, // SHA-256("abc"), FIPS 180-2
		{[]string{""}, "e3b0c44298fc1c14"},
		{[]string{"a", "b"}, PromptHash("a\x00b")},
		{[]string{"a", ""}, PromptHash("a\x00")}, // a trailing NUL, as rmtbench and medrubric hash
	} {
		if got := PromptHash(tc.parts...); got != tc.want {
			t.Errorf("PromptHash(%q) = %s, want %s", tc.parts, got, tc.want)
		}
	}
}
