package reporteval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzReport is a report long enough to be split, with sections that pass
// and fail the filters.
var fuzzReport = "# Title\n\nIntro paragraph.\n\n## Background\n" + strings.Repeat("Some background text. ", 12) +
	"\n\n## Method\n" + strings.Repeat("How it was done, in detail. ", 10) + "\n\n## Links\nsee https://example.org\n\n## Results\n" +
	strings.Repeat("What came out. ", 15) + "\n\n## Conclusion\nShort.\n"

// FuzzSections splits arbitrary valid UTF-8 reports: every section left
// passes the original's filters (at least MinSectionLength code points, no
// "https"), and a report skipped as too short has none.
func FuzzSections(f *testing.F) {
	for _, s := range []string{fuzzReport, "## a\n\n## b\n\n## c", "", "\n\n\n", "## x\r\n## x\n## x", strings.Repeat("## h\n\n", 50), "a\u2028\n\u3000\nb\n\nc\n\nd\n\ne"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, report string) {
		if !utf8.ValidString(report) {
			return // documented precondition; lines with invalid UTF-8 are rejected before
		}
		skipped, secs := Sections(report)
		if skipped && len(secs) > 0 {
			t.Fatalf("skipped, yet %d sections", len(secs))
		}
		for _, s := range secs {
			if strings.Contains(s, "https") || utf8.RuneCountInString(s) < MinSectionLength {
				t.Fatalf("section %q passes no filter", s)
			}
			if !strings.Contains(s, "\n") {
				t.Fatalf("section %q has no heading line", s)
			}
		}
	})
}

// FuzzScoreSectionsLines feeds arbitrary input to `benchline score
// reporteval-sections`: one JSON result line per non-blank input line, in
// order, and an error only wrapping ErrMalformedInput.
func FuzzScoreSectionsLines(f *testing.F) {
	line, _ := json.Marshal(map[string]string{"id": "r1", "report": fuzzReport})
	for _, s := range []string{string(line), `{"id": 7, "report": "## a"}` + "\n\n" + `{"report": null}`, "not json\n[]\n{}", "{\"id\": \"x\", \"report\": \"\xff\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		err := ScoreSectionsLines(context.Background(), bytes.NewReader(data), &out)
		if err != nil && !errors.Is(err, ErrMalformedInput) {
			t.Fatalf("error %v", err)
		}
		want := 0
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 {
				want++
			}
		}
		got := bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n"))
		if out.Len() == 0 {
			got = nil
		}
		if len(got) != want {
			t.Fatalf("%d result lines for %d input lines", len(got), want)
		}
		for _, g := range got {
			var r SectionsOut
			if err := json.Unmarshal(g, &r); err != nil {
				t.Fatalf("result line %q: %v", g, err)
			}
		}
	})
}

// FuzzCitedSentences extracts claims from arbitrary reports: every claim
// cites at least one reference, and its URLs are at most its references.
func FuzzCitedSentences(f *testing.F) {
	for _, s := range []string{"Water boils at 100 C [[1]]. Ice melts [[1,2]]!\n## Reference\n[1],https://a.example/x)\n[2],\n", "[[]]", "[[1]]", "x [[٣]]."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, report string) {
		for _, c := range CitedSentences(report) {
			if len(c.URLs) > len(c.Refs) {
				t.Fatalf("claim %+v: more URLs than references", c)
			}
			if !strings.Contains(c.Sentence, "[[") {
				t.Fatalf("claim %q cites nothing", c.Sentence)
			}
		}
	})
}
