package reporteval

import (
	"bufio"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// body returns a section body of len(tag)+240 code points that starts
// with tag and has no whitespace at either end.
func body(tag string) string { return tag + strings.Repeat(" lorem", 40) }

var (
	b1, b2, b3, b4 = body("one"), body("two"), body("three"), body("four")
	// fourSections is a report of an intro, four long sections and a
	// reference list, the shape of the real reports.
	fourSections = "Intro text.\n\n## S1\n\n" + b1 + "\n\n## S2\n\n" + b2 + "\n\n## S3\n\n" + b3 +
		"\n\n## S4\n\n" + b4 + "\n\n## Reference\n[1],https://example.com/a\n"
)

type sectionsCase struct {
	name    string
	report  string
	skipped bool
	want    []string
}

// sectionsCases are hand-written reports covering each rule; the wanted
// values are worked out by hand from the rules in Sections' doc comment.
var sectionsCases = []sectionsCase{
	{
		// all: Beginning, S1..S4, Reference; [1:-1]: S1..S4; [1:-1]: S2, S3.
		name:   "intro, four sections, references",
		report: fourSections,
		want:   []string{"## S2\n" + b2, "## S3\n" + b3},
	},
	{
		name:    "exactly three paragraphs is too short",
		report:  "## S1\n\n" + b1 + "\n\n## S2\n" + b2,
		skipped: true,
	},
	{
		name:    "three paragraphs after strip",
		report:  "\n\n a \n\n b\n\nc\n\n",
		skipped: true,
	},
	{
		// "\n\n \n\n" is one separator: \s* runs to the last newline.
		name:    "a whitespace-only paragraph is part of the separator",
		report:  "a\n\n \n\nb\n\nc",
		skipped: true,
	},
	{
		// U+001C is whitespace to Python (not to Go's unicode.IsSpace),
		// so "\n\x1c\n" separates a fourth paragraph.
		name:   "U+001C in a blank line separates paragraphs",
		report: "a\n\nb\n\nc\n\x1c\nd",
	},
	{
		name:   "U+3000 and U+2028 in blank lines separate paragraphs",
		report: "a\n\u3000\nb\n\u2028\nc\n\u00a0\u2009\nd",
	},
	{
		// U+200B (zero width space) is not whitespace to Python.
		name:    "U+200B does not make a blank line",
		report:  "a\n\nb\n\nc\n\u200b\nd",
		skipped: true,
	},
	{
		name:   "no headings: no sections",
		report: "a\n\nb\n\nc\n\nd",
	},
	{
		// all: S1..S4, Reference; [1:-1]: S2..S4; [1:-1]: S3.
		name:   "no text before the first heading",
		report: strings.TrimPrefix(fourSections, "Intro text.\n\n"),
		want:   []string{"## S3\n" + b3},
	},
	{
		// A whitespace-only intro still makes a (empty) first section.
		name:   "whitespace before the first heading",
		report: " \n" + strings.TrimPrefix(fourSections, "Intro text.\n\n"),
		want:   []string{"## S2\n" + b2, "## S3\n" + b3},
	},
	{
		// S2's body holds "https": [1:-1] S1..S4, filtered S1, S3, S4.
		name:   "a section containing https is removed",
		report: strings.Replace(fourSections, b2, b2+" see https://example.com/b", 1),
		want:   []string{"## S3\n" + b3},
	},
	{
		// "http://" is not "https".
		name:   "http without s is kept",
		report: strings.Replace(fourSections, b2, b2+" http://example.com/b", 1),
		want:   []string{"## S2\n" + b2 + " http://example.com/b", "## S3\n" + b3},
	},
	{
		name:   "markup is text",
		report: strings.Replace(fourSections, b2, b2+" <b>&amp;</b>", 1),
		want:   []string{"## S2\n" + b2 + " <b>&amp;</b>", "## S3\n" + b3},
	},
	{
		// "## S2\n" is 6 code points; 193 two-byte "é" make 199 code
		// points (392 bytes): removed. 194 make 200: kept.
		name:   "199 code points is too short",
		report: strings.Replace(fourSections, b2, strings.Repeat("é", 193), 1),
		want:   []string{"## S3\n" + b3},
	},
	{
		name:   "200 code points is long enough",
		report: strings.Replace(fourSections, b2, strings.Repeat("é", 194), 1),
		want:   []string{"## S2\n" + strings.Repeat("é", 194), "## S3\n" + b3},
	},
	{
		// The first heading's text occurs earlier inside "### S1 notes":
		// str.find cuts the intro there, and S1's body starts with the
		// rest of that line.
		name:   "first heading text occurs earlier (str.find quirk)",
		report: "Intro.\n\n### S1 notes\n\nMore.\n\n## S1\n\n" + b1 + "\n\n## S2\n\n" + b2 + "\n\n## S3\n\n" + b3 + "\n\n## End\nbye",
		// all: "Beginning…\nIntro.\n\n#", "## S1\nnotes\n\nMore.\n\n## S1\n\n"+b1,
		// S2, S3, End; [1:-1]: S1', S2, S3; [1:-1]: S2.
		want: []string{"## S2\n" + b2},
	},
	{
		// S2's body mentions "### S3 detail" before the real "## S3": S2 is
		// cut there and S3 starts with " detail…", both still long.
		name: "later heading text occurs in the body before it (str.find quirk)",
		report: "Intro.\n\n## S1\n\n" + b1 + "\n\n## S2\n\n" + b2 + "\n\n### S3 detail\n\n" + b4 +
			"\n\n## S3\n\n" + b3 + "\n\n## S4\n\n" + b4 + "\n\n## End\nbye",
		want: []string{
			"## S2\n" + b2 + "\n\n#",
			"## S3\ndetail\n\n" + b4 + "\n\n## S3\n\n" + b3,
		},
	},
	{
		// Headings keep their "\r"; "\r\n\r\n" holds the "\n\r\n" separator.
		name:   "CRLF line endings",
		report: strings.ReplaceAll(fourSections, "\n", "\r\n"),
		want: []string{
			"## S2\r\n" + b2,
			"## S3\r\n" + b3,
		},
	},
	{
		// Bodies are stripped of Python whitespace, U+001C and U+3000
		// included; a heading keeps its trailing spaces.
		name:   "unicode whitespace around bodies, spaces after a heading",
		report: strings.Replace(fourSections, "## S2\n\n"+b2+"\n\n", "## S2  \n\u3000\x1c"+b2+"\u2029\u00a0\n\n", 1),
		want:   []string{"## S2  \n" + b2, "## S3\n" + b3},
	},
	{
		// The report ends right after its last heading: no last section,
		// so S4 is the last and is dropped.
		name:   "report ends with its last heading",
		report: strings.TrimSuffix(fourSections, "\n[1],https://example.com/a\n"),
		want:   []string{"## S2\n" + b2},
	},
	{
		// A newline after the last heading is text: the empty section
		// "## Reference\n" exists and takes the last place.
		name:   "newline after the last heading",
		report: strings.TrimSuffix(fourSections, "[1],https://example.com/a\n"),
		want:   []string{"## S2\n" + b2, "## S3\n" + b3},
	},
	{
		// "##S2", " ## S2" and "#### S2" are not headings, so they stay in
		// S1's body. all: Beginning, S0, S1, S3, End.
		name: "lines that are not headings",
		report: "Intro.\n\n## S0\n\n" + b2 + "\n\n## S1\n\n" + b1 + "\n##S2\n ## S2\n#### S2\n\n## S3\n\n" + b3 +
			"\n\n## End\nbye",
		want: []string{"## S1\n" + b1 + "\n##S2\n ## S2\n#### S2"},
	},
	{
		// "## " alone is a heading. all: Beginning, S1, "## ", S3, End.
		name:   "a bare heading",
		report: "Intro.\n\n## S1\n\n" + b1 + "\n\n## \n\n" + b2 + "\n\n## S3\n\n" + b3 + "\n\n## End\nbye",
		want:   []string{"## \n" + b2},
	},
	{
		// all: S1, S2, S3; [1:-1]: S2; [1:-1] of one section: none.
		name:   "too few sections after the drops",
		report: "## S1\n\n" + b1 + "\n\n## S2\n\n" + b2 + "\n\n## S3\n\n" + b3,
	},
}

func TestSections(t *testing.T) {
	for _, tc := range sectionsCases {
		t.Run(tc.name, func(t *testing.T) {
			skipped, got := Sections(tc.report)
			if skipped != tc.skipped {
				t.Errorf("skipped = %v, want %v", skipped, tc.skipped)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("sections:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestExportSectionsCases writes the hand-written cases as
// {"id", "topic", "report"} lines to $REPORTEVAL_EXPORT_CASES, the input on
// which the original's split was run to confirm the hand-worked values
// (see testdata/README.md).
func TestExportSectionsCases(t *testing.T) {
	path := os.Getenv("REPORTEVAL_EXPORT_CASES")
	if path == "" {
		t.Skip("set REPORTEVAL_EXPORT_CASES=<file> to export the table cases")
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, tc := range sectionsCases {
		if err := enc.Encode(map[string]string{"id": tc.name, "topic": tc.name, "report": tc.report}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestIsPySpace(t *testing.T) {
	// Python 3's str.isspace is true exactly for these code points.
	want := map[rune]bool{}
	for _, r := range []rune{0x9, 0xa, 0xb, 0xc, 0xd, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680,
		0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a,
		0x2028, 0x2029, 0x202f, 0x205f, 0x3000} {
		want[r] = true
	}
	for r := rune(0); r <= 0x10ffff; r++ {
		if got := isPySpace(r); got != want[r] {
			t.Errorf("isPySpace(%U) = %v, want %v", r, got, want[r])
		}
	}
}

func TestParagraphsUpTo(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       int
	}{
		{"empty", "", 0},
		{"only whitespace", " \n\n\t ", 0},
		{"one", "a\nb", 1},
		{"two", "a\n\nb", 2},
		{"separator with spaces", "a\n  \t\n  b", 2},
		{"newline then spaces is no separator", "a\n  b\n c", 1},
		{"three newlines, one separator", "a\n\n\nb", 2},
		{"CRLF", "a\r\n\r\nb\r\n\r\nc", 3},
		{"capped at the limit", "a\n\nb\n\nc\n\nd\n\ne\n\nf", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := paragraphsUpTo(tc.text, 4); got != tc.want {
				t.Errorf("paragraphsUpTo(%q, 4) = %d, want %d", tc.text, got, tc.want)
			}
		})
	}
}
