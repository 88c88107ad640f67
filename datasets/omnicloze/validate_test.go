package omnicloze_test

import (
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets/omnicloze"
)

// TestReplyItemReasons: each way a written item fails is rejected under
// its reason, the first it meets.
func TestReplyItemReasons(t *testing.T) {
	c := omnicloze.Caption{ID: "x", Domain: "music", Subcategory: "live", Text: "A red violin and a dark green cello play.",
		Media: omnicloze.Media{Kind: "audio", URI: "https://m.invalid/x.wav", SHA256: strings.Repeat("0", 64), Type: "audio/wav"}}
	opts := func(correct int, texts ...string) []omnicloze.WrittenOption {
		out := make([]omnicloze.WrittenOption, len(texts))
		for i, s := range texts {
			out[i] = omnicloze.WrittenOption{Text: s, Correct: i == correct}
		}
		return out
	}
	one := func(passage string, o []omnicloze.WrittenOption) omnicloze.WriterReply {
		return omnicloze.WriterReply{Passage: passage, Blanks: []omnicloze.WrittenBlank{{Blank: 1, Options: o}}}
	}
	for _, tc := range []struct {
		name   string
		reply  omnicloze.WriterReply
		reason string
	}{
		{"kept", one("A [BLANK_1] violin and a dark green cello play.", opts(0, "red", "blue")), ""},
		{"two options marked correct", one("A [BLANK_1] violin.", []omnicloze.WrittenOption{{Text: "red", Correct: true}, {Text: "blue", Correct: true}}), omnicloze.RejectAnswerKey},
		{"none marked correct", one("A [BLANK_1] violin.", opts(-1, "red", "blue")), omnicloze.RejectAnswerKey},
		{"a marker missing", one("A red violin.", opts(0, "red", "blue")), omnicloze.RejectMalformed},
		{"the passage gives it away", one("A [BLANK_1] violin and a red cello.", opts(0, "red", "blue")), omnicloze.RejectWithoutCaption},
		{"the answer is not in the caption", one("A [BLANK_1] violin.", opts(0, "blue", "pink")), omnicloze.RejectNotInCaption},
		{"the key names the wrong option", one("A [BLANK_1] violin.", opts(1, "red", "blue")), omnicloze.RejectWrongKey},
		{"two options occur in the caption", one("A [BLANK_1] cello.", opts(0, "green", "dark green")), omnicloze.RejectAmbiguous},
	} {
		t.Run(tc.name, func(t *testing.T) {
			it, check := omnicloze.ReplyItem(c, tc.reply, "w/x")
			if check.Reason != tc.reason || (tc.reason != "") != (check.Detail != "") {
				t.Errorf("check %+v, want reason %q", check, tc.reason)
			}
			if it.ID != "x" || it.Origin != "w/x" || it.Caption != c.Text {
				t.Errorf("item %+v", it)
			}
		})
	}
}
