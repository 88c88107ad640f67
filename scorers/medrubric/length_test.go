package medrubric

import (
	"strings"
	"testing"
)

func TestCountWords(t *testing.T) {
	tests := []struct {
		name, text string
		want       int
	}{
		{"empty", "", 0},
		{"spaces only", " \t\n ", 0},
		{"english", "Take two tablets daily.", 4},
		// "-" has no letter or digit: not a word.
		{"lone dash", "Take 5mg - twice", 3},
		{"hyphenated and numbers", "COVID-19 vaccine, 2 doses", 4},
		// 服 用 阿 司 匹 林: six characters.
		{"chinese", "服用阿司匹林", 6},
		// 每 天 服 用 (4) + aspirin (1) + "100mg，" (1: the fullwidth comma is
		// not CJK, so it sticks to 100mg) + 饭 后 (2) + "。" (no letter): 8.
		{"mixed", "每天服用 aspirin 100mg，饭后。", 8},
		// Hangul syllables count one each: 안 녕 하 세 요.
		{"korean", "안녕 하세요", 5},
		{"japanese kana and kanji", "お大事に", 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := CountWords(tc.text); got != tc.want {
				t.Errorf("CountWords(%q) = %d, want %d", tc.text, got, tc.want)
			}
		})
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		name, text string
		limit      int
		kept       string
		words      int
		cut        bool
	}{
		{"under the limit", "one two", 3, "one two", 2, false},
		{"at the limit", "one two three", 3, "one two three", 3, false},
		{"cut after the limit-th word", "one two three four", 2, "one two", 4, true},
		{"punctuation stays with its word", "one, two, three", 2, "one, two,", 3, true},
		{"leading space kept", "  a b c", 1, "  a", 3, true},
		{"chinese by character", "头痛时多喝水", 3, "头痛时", 6, true},
		{"mixed", "每天 aspirin 两次", 3, "每天 aspirin", 5, true},
		{"no limit", "one two three", 0, "one two three", 3, false},
		{"negative limit", "one two", -1, "one two", 2, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kept, n, cut := Truncate(tc.text, tc.limit)
			if kept != tc.kept || n != tc.words || cut != tc.cut {
				t.Errorf("Truncate(%q, %d) = %q, %d, %v; want %q, %d, %v", tc.text, tc.limit, kept, n, cut, tc.kept, tc.words, tc.cut)
			}
			if cut && CountWords(kept) != tc.limit {
				t.Errorf("kept %q has %d words, want %d", kept, CountWords(kept), tc.limit)
			}
		})
	}
}

// TestLengthGate shows the length-limited mode end to end on a fixed
// answer: 1,005 words, with the essential point in the first ten words and
// a pitfall phrase in the last five. Judged on the first 1,000 words, the
// essential point counts and the pitfall does not; the full answer would
// trip the breaker.
func TestLengthGate(t *testing.T) {
	answer := "Seek urgent care now if chest pain spreads to arm. " + // 10 words
		strings.Repeat("filler ", 990) + // 1,000 words so far
		"stop all your medicines now" // 5 more: 1,005
	kept, n, cut := Truncate(answer, DefaultWordLimit)
	if n != 1005 || !cut || CountWords(kept) != 1000 {
		t.Fatalf("Truncate: %d words, cut %v, kept %d words", n, cut, CountWords(kept))
	}
	judge := func(text string) []Judged {
		status := func(ok bool) Status {
			if ok {
				return Met
			}
			return NotMet
		}
		return []Judged{
			j("e1", Essential, status(strings.Contains(text, "urgent care"))),
			j("p1", Pitfall, status(strings.Contains(text, "stop all your medicines"))),
		}
	}
	limited := mustScore(t, judge(kept))
	full := mustScore(t, judge(answer))
	// Limited: e1 met, p1 not: score 3/3 = 1. Full: p1 met, zero mode: 0.
	if *limited.Score != 1 || *full.Score != 0 {
		t.Errorf("limited score %v, full score %v; want 1 and 0", *limited.Score, *full.Score)
	}
}
