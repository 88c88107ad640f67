package wfclient

import (
	"bytes"
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/judge"
)

func TestPrintAgreement(t *testing.T) {
	alpha := 0.25
	var buf bytes.Buffer
	printAgreement(&buf, []judge.Agreement{
		{Set: "score", Judges: []string{"a/x", "b/y"}, Samples: 3, Items: 20, Paired: 19, Unanimous: 12, Alpha: &alpha},
		{Set: "score_asym", Judges: []string{"c/z"}, Samples: 3, Items: 20, Note: "n/a (one judge)"},
		{Set: "quality", Judges: []string{"a/x", "b/y"}, Scale: judge.ScaleInterval, Samples: 2, Items: 10, Paired: 10, Unanimous: 4, Alpha: &alpha},
	})
	want := "judges score [a/x, b/y]: Krippendorff's alpha 0.250; unanimous on 12 of 19 items with two or more labels (20 items, 3 samples)\n" +
		"judges score_asym [c/z]: Krippendorff's alpha n/a (one judge); unanimous on 0 of 0 items with two or more labels (20 items, 3 samples)\n" +
		"judges quality [a/x, b/y]: Krippendorff's alpha (interval) 0.250; unanimous on 4 of 10 items with two or more labels (10 items, 2 samples)\n"
	if got := buf.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	buf.Reset()
	printAgreement(&buf, nil)
	if strings.TrimSpace(buf.String()) != "" {
		t.Errorf("no panels printed %q", buf.String())
	}
}
