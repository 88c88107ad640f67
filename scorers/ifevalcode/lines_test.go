package ifevalcode_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/sandbox"
	"github.com/benchline/benchline/scorers/ifevalcode"
)

func jsonLine(t *testing.T, m map[string]any) string {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestScoreLines runs the CLI contract over the fixtures' references and
// broken replies, plus malformed lines, with 3 lines in flight: outputs
// come back one per input, in input order.
func TestScoreLines(t *testing.T) {
	s := newScorer(t, ifevalcode.Options{Concurrency: 3})
	var in strings.Builder
	type want struct {
		id                   any
		correct, instruction bool
		status               ifevalcode.Status
		detail               string
	}
	var wants []want
	for i, row := range fixtureItems(t) {
		if row.ProgrammingLanguage != "python" && row.ProgrammingLanguage != "shell" && row.ProgrammingLanguage != "php" {
			continue
		}
		reply := *row.ReferenceSolution
		w := want{row.ID, true, true, ifevalcode.StatusOK, ""}
		if i%2 == 1 {
			reply = "I cannot do that."
			w = want{row.ID, false, false, ifevalcode.StatusFailed, "correctness: "}
		}
		in.WriteString(jsonLine(t, map[string]any{"id": row.ID, "programming_language": row.ProgrammingLanguage,
			"check_correctness": row.CheckCorrectness, "check_instruction": row.CheckInstruction, "response": reply}) + "\n")
		wants = append(wants, w)
		if len(wants) == 3 {
			in.WriteString("\n{not json\n")
			wants = append(wants, want{nil, false, false, ifevalcode.StatusFailed, "input error: not a JSON object"})
			in.WriteString(jsonLine(t, map[string]any{"id": 42, "programming_language": "rust", "check_correctness": "",
				"check_instruction": "", "response": ""}) + "\n")
			wants = append(wants, want{float64(42), false, false, ifevalcode.StatusFailed, `input error: unknown programming_language "rust"`})
			in.WriteString(jsonLine(t, map[string]any{"id": "no-response", "programming_language": "python",
				"check_correctness": "def check_correctness():\n    assert f() == 1", "check_instruction": "def check_instruction(response):\n    assert response == ''"}) + "\n")
			wants = append(wants, want{"no-response", false, true, ifevalcode.StatusFailed, "NameError"})
		}
	}
	var out bytes.Buffer
	err := s.ScoreLines(context.Background(), strings.NewReader(in.String()), &out)
	if err == nil || !strings.Contains(err.Error(), "2 malformed input line(s): 5, 6") {
		t.Errorf("err = %v, want one naming malformed lines 5 and 6", err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(wants) {
		t.Fatalf("%d output lines for %d inputs:\n%s", len(lines), len(wants), out.String())
	}
	for i, l := range lines {
		var got map[string]any
		if err := json.Unmarshal([]byte(l), &got); err != nil {
			t.Fatalf("line %d: %v: %s", i+1, err, l)
		}
		if len(got) != 5 {
			t.Errorf("line %d: want exactly id, correct, instruction, status, detail: %s", i+1, l)
		}
		w := wants[i]
		if got["id"] != w.id || got["correct"] != w.correct || got["instruction"] != w.instruction ||
			got["status"] != string(w.status) || !strings.Contains(got["detail"].(string), w.detail) {
			t.Errorf("line %d = %s; want %+v", i+1, l, w)
		}
	}
}

// TestScoreLinesSandboxError: an infrastructure failure is retried, then
// reported as sandbox-error (never as the model's failure) and as an error.
func TestScoreLinesSandboxError(t *testing.T) {
	sb, err := sandbox.New(sandbox.Config{})
	if err != nil {
		t.Fatalf("sandbox unavailable: %v", err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	s := ifevalcode.New(failingSandbox{sb}, ifevalcode.Options{Attempts: 2})
	in := jsonLine(t, map[string]any{"id": "a", "programming_language": "python", "check_correctness": "def check_correctness():\n    pass",
		"check_instruction": "def check_instruction(r):\n    pass", "response": "pass"}) + "\n"
	var out bytes.Buffer
	err = s.ScoreLines(context.Background(), strings.NewReader(in), &out)
	if !sandbox.IsInfrastructure(err) || !strings.Contains(err.Error(), "after 2 attempts") {
		t.Errorf("err = %v", err)
	}
	if !strings.Contains(out.String(), `"status":"sandbox-error"`) || !strings.Contains(out.String(), `"correct":false`) {
		t.Errorf("output %s", out.String())
	}
}
