package omnicloze

import (
	"errors"
	"fmt"
	"testing"
)

// TestFillReplyValidateMessages pins Validate's messages, by the message
// each reply gives (the first fault, answer by answer): judges' audit
// records quote them.
func TestFillReplyValidateMessages(t *testing.T) {
	for want, answers := range map[string][]BlankAnswer{
		"<nil>": {{Blank: 1, Option: "A"}, {Blank: 2, Option: "dog"}},
		"omnicloze: invalid fill reply: answer 2 names blank 0":      {{Blank: 1, Option: "A"}, {Blank: 0, Option: "B"}},
		"omnicloze: invalid fill reply: answer 1 names blank -3":     {{Blank: -3, Option: "B"}},
		"omnicloze: invalid fill reply: blank 2 answered twice":      {{Blank: 2, Option: "A"}, {Blank: 2, Option: "B"}},
		"omnicloze: invalid fill reply: blank 1 has an empty option": {{Blank: 1, Option: " "}},
		"omnicloze: invalid fill reply: blank 3 answered twice":      {{Blank: 3, Option: "A"}, {Blank: 3, Option: ""}},
		"omnicloze: invalid fill reply: blank 4 has an empty option": {{Blank: 4, Option: ""}, {Blank: 4, Option: "A"}},
	} {
		err := FillReply{Answers: answers}.Validate()
		if fmt.Sprint(err) != want || err != nil && !errors.Is(err, ErrReply) {
			t.Errorf("Validate(%+v) = %v, want %s", answers, err, want)
		}
	}
}
