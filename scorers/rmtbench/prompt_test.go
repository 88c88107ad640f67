package rmtbench

import (
	"errors"
	"fmt"
	"testing"
)

// TestReplyValidateMessages pins Validate's messages: the audit records of stored
// runs and the docs quote them.
func TestReplyValidateMessages(t *testing.T) {
	tests := []struct {
		name   string
		scores []DimensionScore
		want   string // "<nil>" for a valid reply
	}{
		{"none", nil, "<nil>"},
		{"distinct dimensions", []DimensionScore{{Dimension: "a", Score: 1}, {Dimension: "b", Score: 5}}, "<nil>"},
		{"blank dimension", []DimensionScore{{Dimension: "a", Score: 3}, {Dimension: " ", Score: 3}}, "rmtbench: invalid scores: score 2 has no dimension"},
		{"a dimension twice", []DimensionScore{{Dimension: "a", Score: 3}, {Dimension: "a ", Score: 4}}, `rmtbench: invalid scores: dimension "a" scored twice`},
		{"below the scale", []DimensionScore{{Dimension: " a", Score: 0}}, "rmtbench: invalid scores: a scored 0, outside 1–5"},
		{"above the scale", []DimensionScore{{Dimension: "a", Score: 6}}, "rmtbench: invalid scores: a scored 6, outside 1–5"},
		{"twice before the scale", []DimensionScore{{Dimension: "a", Score: 3}, {Dimension: "a", Score: 9}}, `rmtbench: invalid scores: dimension "a" scored twice`},
		{"the scale before a later twice", []DimensionScore{{Dimension: "a", Score: 9}, {Dimension: "a", Score: 3}}, "rmtbench: invalid scores: a scored 9, outside 1–5"},
	}
	for _, tc := range tests {
		err := Reply{Scores: tc.scores}.Validate()
		if fmt.Sprint(err) != tc.want || err != nil && !errors.Is(err, ErrReply) {
			t.Errorf("%s: Validate = %v, want %s", tc.name, err, tc.want)
		}
	}
}
