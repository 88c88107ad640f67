package omnicloze

import (
	"errors"
	"fmt"
	"testing"
)

// TestFillReplyValidateMessages pins Validate's messages: the audit records of
// stored runs and the docs quote them.
func TestFillReplyValidateMessages(t *testing.T) {
	tests := []struct {
		name    string
		answers []BlankAnswer
		want    string // "<nil>" for a valid reply
	}{
		{"none", nil, "<nil>"},
		{"distinct blanks", []BlankAnswer{{Blank: 1, Option: "A"}, {Blank: 2, Option: "dog"}}, "<nil>"},
		{"blank 0", []BlankAnswer{{Blank: 1, Option: "A"}, {Blank: 0, Option: "B"}}, "omnicloze: invalid fill reply: answer 2 names blank 0"},
		{"a negative blank", []BlankAnswer{{Blank: -3, Option: "B"}}, "omnicloze: invalid fill reply: answer 1 names blank -3"},
		{"a blank twice", []BlankAnswer{{Blank: 2, Option: "A"}, {Blank: 2, Option: "B"}}, "omnicloze: invalid fill reply: blank 2 answered twice"},
		{"an empty option", []BlankAnswer{{Blank: 1, Option: " "}}, "omnicloze: invalid fill reply: blank 1 has an empty option"},
		{"twice before empty", []BlankAnswer{{Blank: 1, Option: "A"}, {Blank: 1, Option: ""}}, "omnicloze: invalid fill reply: blank 1 answered twice"},
		{"empty before a later twice", []BlankAnswer{{Blank: 1, Option: ""}, {Blank: 1, Option: "A"}}, "omnicloze: invalid fill reply: blank 1 has an empty option"},
	}
	for _, tc := range tests {
		err := FillReply{Answers: tc.answers}.Validate()
		if fmt.Sprint(err) != tc.want || err != nil && !errors.Is(err, ErrReply) {
			t.Errorf("%s: Validate = %v, want %s", tc.name, err, tc.want)
		}
	}
}
