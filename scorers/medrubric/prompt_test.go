package medrubric

import (
	"errors"
	"fmt"
	"testing"
)

// TestReplyValidateMessages pins Validate's messages: the audit records of stored
// runs and the docs quote them.
func TestReplyValidateMessages(t *testing.T) {
	tests := []struct {
		name     string
		verdicts []RubricVerdict
		want     string // "<nil>" for a valid reply
	}{
		{"none", nil, "<nil>"},
		{"distinct ids", []RubricVerdict{{ID: "r1"}, {ID: "r2", Met: true}}, "<nil>"},
		{"blank id", []RubricVerdict{{ID: "r1"}, {ID: " \t"}}, "medrubric: invalid verdicts: verdict 2 has no id"},
		{"an id twice", []RubricVerdict{{ID: "r1"}, {ID: "r2"}, {ID: "r1"}}, `medrubric: invalid verdicts: rubric "r1" judged twice`},
		{"an id twice, once padded", []RubricVerdict{{ID: "r1"}, {ID: " r1 "}}, `medrubric: invalid verdicts: rubric "r1" judged twice`},
		{"the first error wins", []RubricVerdict{{ID: "r1"}, {ID: "r1"}, {ID: ""}}, `medrubric: invalid verdicts: rubric "r1" judged twice`},
	}
	for _, tc := range tests {
		err := Reply{Verdicts: tc.verdicts}.Validate()
		if fmt.Sprint(err) != tc.want || err != nil && !errors.Is(err, ErrReply) {
			t.Errorf("%s: Validate = %v, want %s", tc.name, err, tc.want)
		}
	}
}
