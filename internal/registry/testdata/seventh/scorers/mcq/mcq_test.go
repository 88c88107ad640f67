package mcq

import "testing"

func TestLetter(t *testing.T) {
	for _, tc := range []struct {
		reply string
		want  string
		ok    bool
	}{
		{"B", "B", true},
		{"  C) because", "C", true},
		{"A.", "A", true},
		{"E", "", false}, // only four choices
		{"b", "", false},
		{"", "", false},
		{"The answer is B", "", false},
	} {
		got, ok := Letter(tc.reply, 4)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Letter(%q) = %q, %v; want %q, %v", tc.reply, got, ok, tc.want, tc.ok)
		}
	}
}
