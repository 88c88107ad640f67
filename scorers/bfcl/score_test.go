package bfcl

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/toolcall"
)

func TestScoreLines(t *testing.T) {
	line := func(id, category, lang, output string) string {
		return `{"id": "` + id + `", "category": "` + category + `", "language": "` + lang + `", "functions": ` + strings.ReplaceAll(triangleFuncs, "\n", " ") +
			`, "model_output": ` + output + `, "possible_answer": ` + triangleGT + "}"
	}
	in := strings.Join([]string{
		line("ok", "simple_python", "python", `[{"calculate_triangle_area": {"base": 10, "height": 5}}]`),
		line("missing", "simple_python", "", `[{"calculate_triangle_area": {"height": 5}}]`),
		"",
		`{"id": 7, "category": "simple_python", "functions": [`, // malformed JSON
		line("fmt", "simple_python", "python", `[{"a": {}, "b": {}}]`),
		line("null", "simple_python", "python", `null`),
		`{"id": "irr", "category": "live_irrelevance", "model_output": []}`,
		`{"id": "rel", "category": "live_relevance", "model_output": "not decodable"}`,
		`{"id": "nocat", "model_output": []}`,
		line("badlang", "simple_python", "cobol", `[]`),
		line("float", "simple_python", "python", `[{"calculate_triangle_area": {"base": 10.0, "height": 5}}]`),
	}, "\n")
	var out bytes.Buffer
	err := ScoreLines(strings.NewReader(in), &out)
	want := strings.Join([]string{
		`{"id": "ok", "valid": true, "error_type": ""}`,
		`{"id": "missing", "valid": false, "error_type": "simple_function_checker:missing_required"}`,
		`{"id": null, "valid": false, "error_type": "input_error:bad_json"}`,
		`{"id": "fmt", "valid": false, "error_type": "ast_decoder:decoder_wrong_output_format"}`,
		`{"id": "null", "valid": false, "error_type": "ast_decoder:decoder_failed"}`,
		`{"id": "irr", "valid": true, "error_type": ""}`,
		`{"id": "rel", "valid": false, "error_type": "relevance_error:decoder_failed"}`,
		`{"id": "nocat", "valid": false, "error_type": "input_error:missing_category"}`,
		`{"id": "badlang", "valid": false, "error_type": "input_error:bad_language"}`,
		`{"id": "float", "valid": false, "error_type": "type_error:simple"}`,
	}, "\n") + "\n"
	if out.String() != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	if err == nil || !strings.Contains(err.Error(), "[4 9 10]") || !strings.Contains(err.Error(), "line 4") {
		t.Fatalf("want an error naming lines 4, 9 and 10, got %v", err)
	}
}

func TestScoreLinesNoTrailingNewlineAndEmpty(t *testing.T) {
	var out bytes.Buffer
	if err := ScoreLines(strings.NewReader(`{"id": 1, "category": "irrelevance", "model_output": [{"f": {}}]}`), &out); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != `{"id": 1, "valid": false, "error_type": "irrelevance_error:decoder_success"}`+"\n" {
		t.Fatalf("got %q", got)
	}
	out.Reset()
	if err := ScoreLines(strings.NewReader(""), &out); err != nil || out.Len() != 0 {
		t.Fatalf("empty input: %q, %v", out.String(), err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestScoreLinesWriteError(t *testing.T) {
	in := strings.Repeat(`{"id": 1, "category": "irrelevance", "model_output": []}`+"\n", 5000)
	if err := ScoreLines(strings.NewReader(in), failWriter{}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("want write error, got %v", err)
	}
}

// TestGroundTruthHermesRoundTrip renders every Python-category ground truth
// as Hermes <tool_call> blocks (the TRBench "chosen" format), parses the
// text back with toolcall and checks the calls are accepted.
func TestGroundTruthHermesRoundTrip(t *testing.T) {
	items := loadAll(t)
	n := 0
	for i := range items {
		it := &items[i]
		if it.Lang != Python || it.Answers == nil {
			continue
		}
		want := Check(Python, it.Category, it.Funcs, groundTruthCalls(it), it.Answers)
		if !want.Valid {
			continue // ground truth the reference itself rejects (see TestConformance)
		}
		gt, err := toolcall.GroundTruthCalls(it.GTRaw)
		if err != nil {
			t.Fatalf("%s: %v", it.ID, err)
		}
		text, err := toolcall.RenderHermes(gt)
		if err != nil {
			t.Fatalf("%s: %v", it.ID, err)
		}
		calls, format, err := toolcall.Parse(text)
		if err != nil || format != toolcall.FormatHermes {
			t.Fatalf("%s: parse %q: %v (%s)", it.ID, text, err, format)
		}
		if r := Check(Python, it.Category, it.Funcs, calls, it.Answers); !r.Valid {
			// Items whose required parameters list "" first are rendered
			// without them by GroundTruthCalls (it has no schema).
			if r.ErrorType == "simple_function_checker:missing_required" || r.ErrorType == "parallel_function_checker_no_order:cannot_find_match" {
				continue
			}
			t.Errorf("%s: %s: %v\n%s", it.ID, r.ErrorType, r.Detail(), text)
		}
		n++
	}
	t.Logf("%d Python ground truths round-tripped through <tool_call> text", n)
}
