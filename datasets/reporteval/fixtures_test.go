package reporteval_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/benchline/benchline/datasets/reporteval"
	"github.com/benchline/benchline/internal/golden"
	scorer "github.com/benchline/benchline/scorers/reporteval"
)

var update = flag.Bool("update", false, "regenerate fixtures/topics.jsonl and fixtures/reports.jsonl from testdata/src")

// srcReport is one readable fixture source, testdata/src/<slug>.md: a
// "category:" and a "topic:" line, a "---" line, then the report.
type srcReport struct {
	Slug, Category, Topic, Report string
}

func readSources(t *testing.T) []srcReport {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "src", "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/src/*.md (%v)", err)
	}
	var out []srcReport
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		head, report, ok := strings.Cut(string(b), "\n---\n")
		if !ok {
			t.Fatalf("%s: no --- line after the header", f)
		}
		r := srcReport{Slug: strings.TrimSuffix(filepath.Base(f), ".md"), Report: strings.TrimRight(report, "\n")}
		for line := range strings.Lines(head) {
			k, v, _ := strings.Cut(strings.TrimSpace(line), ": ")
			switch k {
			case "category":
				r.Category = v
			case "topic":
				r.Topic = v
			default:
				t.Fatalf("%s: unknown header line %q", f, line)
			}
		}
		if r.Category == "" || r.Topic == "" {
			t.Fatalf("%s: needs category and topic lines", f)
		}
		out = append(out, r)
	}
	return out
}

// generate renders the sources as the original's two files.
func generate(t *testing.T) (topics, reports []byte) {
	t.Helper()
	var tb, rb bytes.Buffer
	te, re := json.NewEncoder(&tb), json.NewEncoder(&rb)
	te.SetEscapeHTML(false)
	re.SetEscapeHTML(false)
	for _, s := range readSources(t) {
		if err := te.Encode(map[string]string{"category_str": s.Category, "topic": s.Topic}); err != nil {
			t.Fatal(err)
		}
		if err := re.Encode(map[string]string{"topic": s.Topic, "report": s.Report}); err != nil {
			t.Fatal(err)
		}
	}
	return tb.Bytes(), rb.Bytes()
}

// TestFixturesUpToDate checks that the embedded topics and reports are
// generated from testdata/src (run with -update to regenerate them).
func TestFixturesUpToDate(t *testing.T) {
	topics, reports := generate(t)
	for name, want := range map[string][]byte{"topics.jsonl": topics, "reports.jsonl": reports} {
		path := filepath.Join("fixtures", name)
		golden.Check(t, path, string(want), *update, "stale: run go test ./datasets/reporteval -run TestFixturesUpToDate -update")
	}
}

// originalCategories are the 12 categories of the original's topics file
// (../shared/docs/benchmarks.md).
var originalCategories = []string{"Science & Technology", "Economy & Business", "Health & Medicine", "Education",
	"Art, Music & Literature", "Politics & Society", "History & Culture", "Entertainment & Fashion",
	"Sports & Fitness", "Other", "Environment & Nature", "Lifestyle"}

// repetitive are the fixture reports written with two sections restating
// the same content, for a redundancy judge to find.
var repetitive = []string{"marathon-training", "urban-heat"}

var (
	citeRE    = regexp.MustCompile(`\[([0-9]+)\]`)
	headingRE = regexp.MustCompile(`(?m)^## .*$`)
)

// bodySections splits a report at its "## " headings: each section is the
// heading line and the text up to the next heading.
func bodySections(report string) []string {
	locs := headingRE.FindAllStringIndex(report, -1)
	var out []string
	for i, l := range locs {
		end := len(report)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		out = append(out, strings.TrimSpace(report[l[0]:end]))
	}
	return out
}

// TestFixtureReports checks the rules the fixture reports follow: the
// original's style (a title, at least 6 "## " sections, most of them at
// least 200 characters and free of "https", sentences citing [n], a
// "## References" list of "[n],URL" lines that scorers/reporteval.References
// reads), every reference a page under fixtures/sources that is served,
// and at least 2 candidate sections for redundancy pairs.
func TestFixtureReports(t *testing.T) {
	srcs := readSources(t)
	if len(srcs) < 8 || len(srcs) > 10 {
		t.Errorf("%d fixture topics, want 8 to 10", len(srcs))
	}
	cats := map[string]bool{}
	for _, s := range srcs {
		if !slices.Contains(originalCategories, s.Category) {
			t.Errorf("%s: category %q is not one of the original's", s.Slug, s.Category)
		}
		cats[s.Category] = true
	}
	if len(cats) < 5 {
		t.Errorf("%d categories, want at least 5", len(cats))
	}
	for _, s := range srcs {
		t.Run(s.Slug, func(t *testing.T) {
			r := s.Report
			if !strings.HasPrefix(r, "# ") {
				t.Error("no title line")
			}
			secs := bodySections(r)
			if len(secs) < 7 || !strings.HasPrefix(secs[len(secs)-1], "## References\n") {
				t.Fatalf("%d sections, want at least 6 and then ## References", len(secs))
			}
			body, refList := secs[:len(secs)-1], secs[len(secs)-1]
			long := 0
			for _, sec := range body {
				if utf8.RuneCountInString(sec) >= 200 && !strings.Contains(sec, "https") {
					long++
				}
			}
			if long*5 < len(body)*4 {
				t.Errorf("only %d of %d sections have 200 characters and no https", long, len(body))
			}

			text := r[:strings.Index(r, "## References")]
			cited := map[int]int{}
			for _, m := range citeRE.FindAllStringSubmatch(text, -1) {
				n, _ := strconv.Atoi(m[1])
				cited[n]++
			}
			refs := scorer.References(r)
			if len(refs) == 0 || len(refs) != strings.Count(refList, "\n") {
				t.Errorf("References reads %d entries from %q", len(refs), refList)
			}
			for n, u := range refs {
				if want := fmt.Sprintf("http://%s/%s/%d", reporteval.SourcesHost, s.Slug, n); u != want {
					t.Errorf("[%d] = %s, want %s", n, u, want)
				}
				if cited[n] == 0 {
					t.Errorf("[%d] is listed but never cited", n)
				}
				if _, err := os.Stat(filepath.Join("fixtures", "sources", s.Slug, fmt.Sprintf("%d.md", n))); err != nil {
					t.Errorf("[%d] has no source page: %v", n, err)
				}
			}
			for n := range cited {
				if _, ok := refs[n]; !ok {
					t.Errorf("[%d] is cited but not listed", n)
				}
			}
			pages, _ := filepath.Glob(filepath.Join("fixtures", "sources", s.Slug, "*.md"))
			if len(pages) != len(refs) {
				t.Errorf("%d source pages for %d references", len(pages), len(refs))
			}

			skipped, cands := scorer.Sections(r)
			if skipped || len(cands) < 2 {
				t.Errorf("Sections: skipped=%v, %d candidate sections; want at least 2", skipped, len(cands))
			}
		})
	}
}

// TestFixtureRedundancy checks that the repetitive reports restate content
// between two of their candidate sections (the ones redundancy pairs are
// drawn from) and the other reports do not.
func TestFixtureRedundancy(t *testing.T) {
	for _, s := range readSources(t) {
		t.Run(s.Slug, func(t *testing.T) {
			_, cands := scorer.Sections(s.Report)
			best, pair := 0.0, [2]int{}
			for _, p := range scorer.Pairs(len(cands), 0, 1) {
				if o := scorer.WordOverlap(cands[p[0]], cands[p[1]]); o > best {
					best, pair = o, [2]int{p[0], p[1]}
				}
			}
			t.Logf("%d candidate sections; the most similar, %v, overlap %.2f", len(cands), pair, best)
			if slices.Contains(repetitive, s.Slug) {
				if best < 0.3 {
					t.Errorf("written to repeat itself, but the closest candidate sections overlap only %.2f", best)
				}
			} else if best > 0.2 {
				t.Errorf("candidate sections %v overlap %.2f; only the repetitive reports may repeat", pair, best)
			}
		})
	}
}

// contradiction is one line of testdata/contradicted.jsonl: a cited
// sentence of report slug deliberately contradicted by its source [ref].
type contradiction struct {
	Slug       string `json:"slug"`
	Ref        int    `json:"ref"`
	ReportSays string `json:"report_says"`
	SourceSays string `json:"source_says"`
}

// TestFixtureContradictions checks the deliberately contradicted claims
// of testdata/contradicted.jsonl: each is in a sentence citing its source,
// the source says otherwise and not what the report says, and they are a
// few of the cited sentences (the rest are written to be supported).
func TestFixtureContradictions(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "contradicted.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	reports := map[string]string{}
	citing := 0
	sentenceRE := regexp.MustCompile(`[^.!?]*\[[0-9]+\][^.!?]*[.!?]`)
	for _, s := range readSources(t) {
		text, _, _ := strings.Cut(s.Report, "## References") // URLs hold dots
		reports[s.Slug] = text
		citing += len(sentenceRE.FindAllString(text, -1))
	}
	var cs []contradiction
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c contradiction
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	if len(cs) < 2 || len(cs)*8 > citing {
		t.Errorf("%d contradicted claims among %d cited sentences; want a few (at least 2, at most an eighth)", len(cs), citing)
	}
	for _, c := range cs {
		t.Run(fmt.Sprintf("%s[%d]", c.Slug, c.Ref), func(t *testing.T) {
			found := false
			for _, sent := range sentenceRE.FindAllString(reports[c.Slug], -1) {
				found = found || (strings.Contains(sent, c.ReportSays) && strings.Contains(sent, fmt.Sprintf("[%d]", c.Ref)))
			}
			if !found {
				t.Errorf("no sentence of %s says %q and cites [%d]", c.Slug, c.ReportSays, c.Ref)
			}
			page, err := os.ReadFile(filepath.Join("fixtures", "sources", c.Slug, fmt.Sprintf("%d.md", c.Ref)))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(page), c.SourceSays) || strings.Contains(string(page), c.ReportSays) {
				t.Errorf("source %s/%d should say %q and not %q", c.Slug, c.Ref, c.SourceSays, c.ReportSays)
			}
		})
	}
}
