package judge

import "testing"

func TestContainsKeyword(t *testing.T) {
	tests := []struct {
		text, keyword string
		want          bool
	}{
		{"Apply ice for 20 minutes.", "ice", true},
		{"Follow this advice.", "ice", false},                              // inside a word
		{"Iron-rich foods", "iron", true},                                  // a hyphen ends a word
		{"the environment", "iron", false},                                 // inside a word
		{"Call Emergency  Services\nnow", "call emergency services", true}, // case and white space
		{"advice, then ice", "ice", true},                                  // a later occurrence qualifies
		{"Keep it under 200 mg a day", "200 mg", true},
		{"Keep it under 1200 mg a day", "200 mg", false}, // digits join
		{"(CBT-I) works", "cbt-i", true},
		{"8.0% target", "8.0%", true},
		{"按时复查INR。", "复查inr", true}, // CJK matches anywhere; case folded
		{"每天食盐不超过5克", "5克", true},
		{"高血压患者", "血压", true}, // inside CJK text
		{"", "ice", false},
		{"ice", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.text+"/"+tc.keyword, func(t *testing.T) {
			if got := ContainsKeyword(tc.text, tc.keyword); got != tc.want {
				t.Errorf("ContainsKeyword(%q, %q) = %v, want %v", tc.text, tc.keyword, got, tc.want)
			}
		})
	}
}

func TestKeywordsMet(t *testing.T) {
	const answer = "Rest, apply ice and keep the foot elevated."
	tests := []struct {
		name     string
		keywords []string
		want     bool
	}{
		{"all present", []string{"rest", "ice", "elevated"}, true},
		{"one missing", []string{"rest", "compression"}, false},
		{"no keywords", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := KeywordsMet(answer, tc.keywords); got != tc.want {
				t.Errorf("KeywordsMet(%q) = %v, want %v", tc.keywords, got, tc.want)
			}
		})
	}
}
