package medrubric

import (
	"errors"
	"fmt"
	"testing"
)

// TestReplyValidateMessages pins Validate's messages, by the message each
// reply gives (the first fault wins): judges' audit records quote them.
func TestReplyValidateMessages(t *testing.T) {
	for want, verdicts := range map[string][]RubricVerdict{
		"<nil>": {{ID: "r1"}, {ID: "r2", Met: true}},
		"medrubric: invalid verdicts: verdict 2 has no id":      {{ID: "r1"}, {ID: " \t"}},
		`medrubric: invalid verdicts: rubric "r1" judged twice`: {{ID: "r1"}, {ID: "r2"}, {ID: "r1"}},
		`medrubric: invalid verdicts: rubric "r3" judged twice`: {{ID: "r3"}, {ID: " r3 "}},
		`medrubric: invalid verdicts: rubric "r4" judged twice`: {{ID: "r4"}, {ID: "r4"}, {ID: ""}},
		"medrubric: invalid verdicts: verdict 1 has no id":      {{ID: ""}, {ID: "r5"}, {ID: "r5"}},
	} {
		err := Reply{Verdicts: verdicts}.Validate()
		if fmt.Sprint(err) != want || err != nil && !errors.Is(err, ErrReply) {
			t.Errorf("Validate(%+v) = %v, want %s", verdicts, err, want)
		}
	}
	if err := (Reply{}).Validate(); err != nil {
		t.Errorf("Validate of no verdicts = %v", err)
	}
}
