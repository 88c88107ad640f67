package datasetstest

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets"
)

// ItemCase is one BFCL-format item and the verdict every builder that
// reads BFCL items must give it: "" (kept) or the reason it is skipped
// (bfcl.Check's). The cases live in datasets/bfcl/testdata/verdicts.jsonl,
// one a line, read by the bfcl and the toolpref builders' tests alike.
type ItemCase struct {
	Case        string          `json:"case"`
	Category    string          `json:"category"`
	Question    json.RawMessage `json:"question"`
	GroundTruth json.RawMessage `json:"ground_truth"`
	Verdict     string          `json:"verdict"`
}

// ID is the item's id.
func (c ItemCase) ID() string {
	var q struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(c.Question, &q)
	return q.ID
}

// ItemCases reads the cases of path.
func ItemCases(t testing.TB, path string) []ItemCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []ItemCase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var c ItemCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// ItemDir writes a BFCL data folder of one category holding the items of
// cases (all of c.Category), with their possible answers, and returns it.
func ItemDir(t testing.TB, cases ...ItemCase) string {
	t.Helper()
	var q, a strings.Builder
	for _, c := range cases {
		q.Write(c.Question)
		q.WriteByte('\n')
		line, err := json.Marshal(map[string]any{"id": c.ID(), "ground_truth": c.GroundTruth})
		if err != nil {
			t.Fatal(err)
		}
		a.Write(line)
		a.WriteByte('\n')
	}
	name := "BFCL_v4_" + cases[0].Category + ".json"
	return SourceDir(t, "", map[string][]byte{name: []byte(q.String()), "possible_answer/" + name: []byte(a.String())})
}

// Kept returns the first case of category cat that is kept: the item
// beside which ItemDir writes a case, so that a build has something left.
func Kept(t testing.TB, cases []ItemCase, cat string) ItemCase {
	t.Helper()
	for _, c := range cases {
		if c.Category == cat && c.Verdict == "" {
			return c
		}
	}
	t.Fatalf("no kept case of category %s", cat)
	return ItemCase{}
}

// SkipVerdict returns the reason stats give for skipping the item id, or
// "" when they name no such item.
func SkipVerdict(stats map[string]int64, id string) string {
	for k, n := range stats {
		if rest, ok := strings.CutPrefix(k, "skipped_item: "+id+" ("); ok && n == 1 {
			return strings.TrimSuffix(rest, ")")
		}
	}
	return ""
}

// CheckItemVerdicts builds each case of path beside a kept item of its
// category, one subtest a case: an item whose own data is malformed is
// skipped and named in the stats with its verdict, a kept one is written,
// and the build goes on. build builds the BFCL folder dir; id is the id of
// the item a row was written for.
func CheckItemVerdicts[T any](t *testing.T, path string, build func(t *testing.T, dir string) (datasets.Plan, []T, error), id func(row T) string) {
	t.Helper()
	cases := ItemCases(t, path)
	for _, c := range cases {
		t.Run(c.Case, func(t *testing.T) {
			kept := Kept(t, cases, c.Category)
			items := []ItemCase{c}
			if kept.ID() != c.ID() {
				items = append(items, kept)
			}
			plan, rows, err := build(t, ItemDir(t, items...))
			if err != nil {
				t.Fatal(err)
			}
			has := map[string]bool{}
			for _, r := range rows {
				has[id(r)] = true
			}
			if got := SkipVerdict(plan.Stats, c.ID()); got != c.Verdict || has[c.ID()] == (c.Verdict != "") || !has[kept.ID()] {
				t.Fatalf("verdict %q, written %v (stats %v); want %q", got, has[c.ID()], plan.Stats, c.Verdict)
			}
		})
	}
}
