package rmtbench

import (
	"errors"
	"fmt"
	"testing"
)

// TestReplyValidateMessages pins Validate's messages, by the message each
// reply gives (the first fault, item by item): judges' audit records quote
// them.
func TestReplyValidateMessages(t *testing.T) {
	for want, scores := range map[string][]DimensionScore{
		"<nil>": {{Dimension: "a", Score: 1}, {Dimension: "b", Score: 5}},
		"rmtbench: invalid scores: score 2 has no dimension":   {{Dimension: "a", Score: 3}, {Dimension: " ", Score: 3}},
		`rmtbench: invalid scores: dimension "a" scored twice`: {{Dimension: "a", Score: 3}, {Dimension: "a ", Score: 4}},
		"rmtbench: invalid scores: b scored 0, outside 1–5":    {{Dimension: " b", Score: 0}},
		"rmtbench: invalid scores: c scored 6, outside 1–5":    {{Dimension: "c", Score: 6}},
		// A dimension given twice is found before the second's scale...
		`rmtbench: invalid scores: dimension "d" scored twice`: {{Dimension: "d", Score: 3}, {Dimension: "d", Score: 9}},
		// ... and the first's scale before the second.
		"rmtbench: invalid scores: e scored 9, outside 1–5": {{Dimension: "e", Score: 9}, {Dimension: "e", Score: 3}},
	} {
		err := Reply{Scores: scores}.Validate()
		if fmt.Sprint(err) != want || err != nil && !errors.Is(err, ErrReply) {
			t.Errorf("Validate(%+v) = %v, want %s", scores, err, want)
		}
	}
}
