package bfcl

import (
	"bufio"
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"
)

// goldenPath holds the reference checker's verdicts on the generated
// conformance cases (see testdata/README.md for how it was produced).
const goldenPath = "testdata/reference_expected.jsonl"

type golden struct {
	ID         string `json:"id"`
	Corruption string `json:"corruption"`
	Valid      bool   `json:"valid"`
	ErrorType  string `json:"error_type"`
}

func loadGolden(t *testing.T) map[[2]string]golden {
	t.Helper()
	f, err := os.Open(goldenPath)
	if err != nil {
		t.Fatalf("open golden file: %v", err)
	}
	defer f.Close()
	out := map[[2]string]golden{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var g golden
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			t.Fatalf("golden line %q: %v", sc.Text(), err)
		}
		out[[2]string{g.ID, g.Corruption}] = g
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// referenceErrorType maps the golden file's spelling of a reference
// exception ("exception:KeyError") to ours ("checker_error:KeyError").
func referenceErrorType(s string) string {
	if rest, found := strings.CutPrefix(s, "exception:"); found {
		return "checker_error:" + rest
	}
	return s
}

// allCases loads the BFCL data and generates every conformance case.
func allCases(tb testing.TB) []confCase {
	items := loadAll(tb)
	var cases []confCase
	for i := range items {
		cases = append(cases, generateCases(&items[i])...)
	}
	return cases
}

// TestConformance scores every generated case (ground truth and
// corruptions of every item of every AST and relevance category, all three
// languages) through the full ScoreLines path and compares validity and
// error type with the reference checker's verdicts. With
// BFCL_EXPORT_CASES=<file> it also writes the cases as JSON lines, the
// input the reference harness was run on.
func TestConformance(t *testing.T) {
	cases := allCases(t)
	if path := os.Getenv("BFCL_EXPORT_CASES"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(f)
		for _, c := range cases {
			b, err := caseLine(c)
			if err != nil {
				t.Fatal(err)
			}
			w.Write(b)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		t.Logf("wrote %d cases to %s", len(cases), path)
	}
	want := loadGolden(t)
	if len(want) != len(cases) {
		t.Errorf("golden file has %d cases, generator produced %d: regenerate %s", len(want), len(cases), goldenPath)
	}

	type tally struct{ n, validAgree, typeAgree int }
	perCorruption := map[string]*tally{}
	var total tally
	gtRejected := map[string][]string{}
	for _, c := range cases {
		line, err := caseLine(c)
		if err != nil {
			t.Fatal(err)
		}
		_, got, err := scoreLine(line)
		if err != nil {
			t.Fatalf("%s/%s: %v", c.Item.ID, c.Corruption, err)
		}
		checker := Checker{UnderscoreToDot: c.UnderscoreToDot}
		direct := checker.Check(c.Item.Lang, c.Item.Category, c.Item.Funcs, c.Output, c.Item.Answers)
		if direct.Valid != got.Valid || direct.ErrorType != got.ErrorType {
			t.Errorf("%s/%s: Check=%v/%q but ScoreLines=%v/%q", c.Item.ID, c.Corruption, direct.Valid, direct.ErrorType, got.Valid, got.ErrorType)
		}
		if generic := checker.Check(c.Item.Lang, c.Item.Category, unprepared(c.Item.Funcs), c.Output, c.Item.Answers); generic != direct {
			t.Errorf("%s/%s: prepared functions %v/%q (%s), hand-built %v/%q (%s)", c.Item.ID, c.Corruption,
				direct.Valid, direct.ErrorType, direct.Detail(), generic.Valid, generic.ErrorType, generic.Detail())
		}
		g, found := want[[2]string{c.Item.ID, c.Corruption}]
		if !found {
			t.Errorf("%s/%s: not in golden file", c.Item.ID, c.Corruption)
			continue
		}
		tl := perCorruption[c.Corruption]
		if tl == nil {
			tl = &tally{}
			perCorruption[c.Corruption] = tl
		}
		tl.n++
		total.n++
		if got.Valid == g.Valid {
			tl.validAgree++
			total.validAgree++
		} else {
			t.Errorf("%s/%s: valid=%v (%s), reference valid=%v (%s)", c.Item.ID, c.Corruption, got.Valid, got.ErrorType, g.Valid, g.ErrorType)
		}
		if got.ErrorType == referenceErrorType(g.ErrorType) {
			tl.typeAgree++
			total.typeAgree++
		} else {
			t.Errorf("%s/%s: error_type=%q, reference %q (errors: %v)", c.Item.ID, c.Corruption, got.ErrorType, g.ErrorType, got.Detail())
		}
		if c.Corruption == "ground_truth" && !g.Valid {
			gtRejected[c.Item.Category] = append(gtRejected[c.Item.Category], c.Item.ID+" ("+g.ErrorType+")")
		}
	}
	names := make([]string, 0, len(perCorruption))
	for k := range perCorruption {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		tl := perCorruption[k]
		t.Logf("%-28s cases=%5d validity agreement=%5d error-type agreement=%5d", k, tl.n, tl.validAgree, tl.typeAgree)
	}
	t.Logf("TOTAL cases=%d validity agreement=%d (%.2f%%) error-type agreement=%d (%.2f%%)",
		total.n, total.validAgree, 100*float64(total.validAgree)/float64(max(total.n, 1)),
		total.typeAgree, 100*float64(total.typeAgree)/float64(max(total.n, 1)))
	for cat, ids := range gtRejected {
		t.Logf("ground truth rejected by the reference itself in %s (%d): %s", cat, len(ids), strings.Join(ids, ", "))
	}
}

// unprepared copies functions without what FunctionsFromValue precomputes
// (the schema-ordered parameters and the underscore_to_dot name), as if
// built by hand, so that the checker takes its generic paths.
func unprepared(funcs []Function) []Function {
	uf := make([]Function, len(funcs))
	for i, f := range funcs {
		uf[i] = Function{Name: f.Name, Params: f.Params, Required: f.Required}
	}
	return uf
}

// TestGroundTruthValid checks part (a) of conformance on its own: the
// ground truth of every item, rendered as a correct model's decoded output,
// is valid in every AST category and language. The only exceptions are the
// items listed in knownUnreachableGroundTruth, whose ground truth the
// reference checker itself rejects (verified by the golden file).
func TestGroundTruthValid(t *testing.T) {
	items := loadAll(t)
	want := loadGolden(t)
	perCat := map[string][2]int{}
	for i := range items {
		it := &items[i]
		kind := CategoryKind(it.Category)
		if kind == KindRelevance || kind == KindIrrelevance {
			continue
		}
		r := Check(it.Lang, it.Category, it.Funcs, groundTruthCalls(it), it.Answers)
		pc := perCat[it.Category]
		pc[0]++
		if r.Valid {
			pc[1]++
		} else if g := want[[2]string{it.ID, "ground_truth"}]; g.Valid || g.ID == "" {
			t.Errorf("%s: ground truth rejected (%s: %v) but the reference accepts it", it.ID, r.ErrorType, r.Detail())
		}
		perCat[it.Category] = pc
	}
	for _, c := range astCategories {
		t.Logf("%-24s ground truth valid %d/%d", c, perCat[c][1], perCat[c][0])
	}
}
