package medrubric

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/benchline/benchline/schemas"
	scorer "github.com/benchline/benchline/scorers/medrubric"
)

func TestSimilarity(t *testing.T) {
	tests := []struct {
		a, b string
		want float64
	}{
		// {take, with, food} vs {take, it, with, food}: 3/4.
		{"Take with food", "take it with food!", 0.75},
		// Identical after lower-casing and dropping punctuation.
		{"Advise urgent review.", "advise URGENT review", 1},
		// {a, b, c, d} vs {a, b, c, e}: 3/5, exactly the default threshold.
		{"a b c d", "a b c e", 0.6},
		{"chest pain", "ankle sprain", 0},
		// Bigrams 多喝 喝水 水休 休息 vs 多喝 喝水 水并 并休 休息: 3 shared of 6.
		{"多喝水休息", "多喝水并休息", 0.5},
		// A lone CJK character is a token: {药, aspirin} vs {药}: 1/2.
		{"药 aspirin", "药", 0.5},
		// Mixed: {服用, 5mg} vs {服用, 10mg}: 1/3.
		{"服用5mg", "服用10mg", 1.0 / 3},
		{"", "", 0},
		{"...", "!!!", 0},
	}
	for _, tc := range tests {
		t.Run(tc.a+"~"+tc.b, func(t *testing.T) {
			if got := Similarity(tc.a, tc.b); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("Similarity(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
			}
			if got := Similarity(tc.b, tc.a); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("Similarity is not symmetric for %q, %q", tc.a, tc.b)
			}
		})
	}
}

func p(writer string, c scorer.Category, text string, kw ...string) Proposal {
	return Proposal{Writer: writer, Category: c, Text: text, Keywords: kw}
}

// panel is three writers' proposals for a chest-pain query.
func panel() [][]Proposal {
	return [][]Proposal{
		{
			p("gpt", scorer.Essential, "Advise urgent medical review for chest pain", "urgent"),
			p("gpt", scorer.Pitfall, "Recommends waiting at home", "wait at home"),
			p("gpt", scorer.Highlight, "Mentions chewing aspirin while waiting for the ambulance", "aspirin"),
		},
		{
			p("qwen", scorer.Essential, "advise urgent medical review for chest pain.", "review"),
			p("qwen", scorer.Important, "Asks about the duration of symptoms", "duration"),
			p("qwen", scorer.Pitfall, "recommends waiting at home until morning", "until morning"),
		},
		{
			p("deepseek", scorer.Important, "Advise urgent medical review for chest pain", "urgent"),
			p("deepseek", scorer.Important, "Asks about duration of the symptoms", "how long"),
		},
	}
}

func TestConsensus(t *testing.T) {
	// Groups at threshold 0.6 (Similarity):
	//   chest pain: gpt, qwen (essential) and deepseek (important), all 1.0
	//     alike: 3 writers; essential 2 votes to 1. Medoid: all sums equal
	//     (2.0), so the shorter text, gpt's and deepseek's (no final "."),
	//     tied again on text, then keywords: equal ("urgent").
	//   waiting at home: gpt {recommends, waiting, at, home} and qwen (+
	//     until, morning): 4/6 = 0.67 ≥ 0.6: 2 writers, pitfall. Medoid
	//     sums tie (0.67 each): the shorter, gpt's.
	//   duration: qwen and deepseek, same token set: 2 writers, important;
	//     equal length 35 and 35, so the smaller text in byte order
	//     ("Asks about duration…" < "Asks about the…").
	//   aspirin: gpt alone: 1 writer < k = 2, dropped.
	got, err := Consensus(panel(), 2, nil, DefaultThreshold)
	if err != nil {
		t.Fatal(err)
	}
	want := []schemas.MedRubric{
		{ID: "r1", Category: "essential", Weight: 3, Text: "Advise urgent medical review for chest pain",
			Keywords: []string{"urgent"}, ProposedBy: []string{"deepseek", "gpt", "qwen"}},
		{ID: "r2", Category: "important", Weight: 2, Text: "Asks about duration of the symptoms",
			Keywords: []string{"how long"}, ProposedBy: []string{"deepseek", "qwen"}},
		{ID: "r3", Category: "pitfall", Weight: 3, Text: "Recommends waiting at home",
			Keywords: []string{"wait at home"}, ProposedBy: []string{"gpt", "qwen"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Consensus =\n%+v\nwant\n%+v", got, want)
	}

	// k = 1 keeps the aspirin highlight too, after the important rubric.
	got, err = Consensus(panel(), 1, nil, DefaultThreshold)
	if err != nil || len(got) != 4 || got[2].Category != "highlight" || got[2].ID != "r3" || got[3].ID != "r4" {
		t.Errorf("k = 1: %+v, %v", got, err)
	}
	// k = 3 keeps only the rubric all three proposed.
	got, err = Consensus(panel(), 3, nil, DefaultThreshold)
	if err != nil || len(got) != 1 || got[0].Text != want[0].Text {
		t.Errorf("k = 3: %+v, %v", got, err)
	}
	// A threshold above 0.67 splits the two "waiting" proposals: each has
	// one writer, so neither is kept at k = 2.
	got, err = Consensus(panel(), 2, nil, 0.7)
	if err != nil || len(got) != 2 {
		t.Errorf("threshold 0.7: %+v, %v", got, err)
	}
}

func TestConsensusIgnoresOrder(t *testing.T) {
	want, err := Consensus(panel(), 2, nil, DefaultThreshold)
	if err != nil {
		t.Fatal(err)
	}
	// Reverse the writers, and each writer's proposals.
	in := panel()
	for a, b := 0, len(in)-1; a < b; a, b = a+1, b-1 {
		in[a], in[b] = in[b], in[a]
	}
	for _, ps := range in {
		for a, b := 0, len(ps)-1; a < b; a, b = a+1, b-1 {
			ps[a], ps[b] = ps[b], ps[a]
		}
	}
	got, err := Consensus(in, 2, nil, DefaultThreshold)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("reordered input: %+v, %v\nwant %+v", got, err, want)
	}
}

func TestConsensusCategoryVotes(t *testing.T) {
	const text = "Check kidney function before starting"
	tests := []struct {
		name  string
		cats  []scorer.Category
		want  string
		extra []Proposal // added to writer 0
	}{
		{"majority", []scorer.Category{scorer.Important, scorer.Important, scorer.Essential}, "important", nil},
		// A 1–1 tie goes to the more severe category.
		{"tie to the more severe", []scorer.Category{scorer.Important, scorer.Essential}, "essential", nil},
		{"pitfall outranks essential", []scorer.Category{scorer.Pitfall, scorer.Essential}, "pitfall", nil},
		{"highlight tie", []scorer.Category{scorer.Highlight, scorer.Important}, "important", nil},
		// Writer 0 proposes the rubric twice (highlight and essential): one
		// vote, its most severe, essential; with writer 1's highlight that
		// is a 1–1 tie, so essential.
		{"one vote per writer", []scorer.Category{scorer.Highlight, scorer.Highlight}, "essential",
			[]Proposal{p("w0", scorer.Essential, text+".")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var in [][]Proposal
			for i, c := range tc.cats {
				in = append(in, []Proposal{p("w"+string(rune('0'+i)), c, text)})
			}
			in[0] = append(in[0], tc.extra...)
			got, err := Consensus(in, len(tc.cats), nil, DefaultThreshold)
			if err != nil || len(got) != 1 || got[0].Category != tc.want {
				t.Fatalf("Consensus = %+v, %v; want one %s rubric", got, err, tc.want)
			}
			if w := scorer.DefaultWeight(scorer.Category(tc.want)); got[0].Weight != w {
				t.Errorf("weight %v, want the category default %v", got[0].Weight, w)
			}
		})
	}
}

// TestConsensusSingleLinkage shows that "the same rubric" is transitive: A
// ~ B and B ~ C put A and C in one group although A and C are not alike.
func TestConsensusSingleLinkage(t *testing.T) {
	sim := func(a, b string) float64 {
		if a > b {
			a, b = b, a
		}
		if (a == "A" && b == "B") || (a == "B" && b == "C") {
			return 1
		}
		return 0
	}
	in := [][]Proposal{
		{p("w1", scorer.Essential, "A")},
		{p("w2", scorer.Essential, "B")},
		{p("w3", scorer.Essential, "C")},
	}
	got, err := Consensus(in, 3, sim, 0.5)
	// Medoid: B is alike to both (sum 2), A and C to one each.
	if err != nil || len(got) != 1 || got[0].Text != "B" || len(got[0].ProposedBy) != 3 {
		t.Errorf("Consensus = %+v, %v", got, err)
	}
}

func TestConsensusErrors(t *testing.T) {
	ok := [][]Proposal{{p("a", scorer.Essential, "x")}, {p("b", scorer.Essential, "x")}}
	tests := []struct {
		name      string
		in        [][]Proposal
		k         int
		threshold float64
	}{
		{"no writers", nil, 1, 0.6},
		{"k zero", ok, 0, 0.6},
		{"k above n", ok, 3, 0.6},
		{"threshold zero", ok, 1, 0},
		{"threshold above one", ok, 1, 1.5},
		{"no writer name", [][]Proposal{{p("", scorer.Essential, "x")}}, 1, 0.6},
		{"two names for one writer", [][]Proposal{{p("a", scorer.Essential, "x"), p("b", scorer.Essential, "y")}}, 1, 0.6},
		{"one name for two writers", [][]Proposal{{p("a", scorer.Essential, "x")}, {p("a", scorer.Essential, "y")}}, 1, 0.6},
		{"empty text", [][]Proposal{{p("a", scorer.Essential, " ")}}, 1, 0.6},
		{"unknown category", [][]Proposal{{p("a", "bonus", "x")}}, 1, 0.6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Consensus(tc.in, tc.k, nil, tc.threshold); !errors.Is(err, ErrConsensus) {
				t.Errorf("Consensus error = %v, want ErrConsensus", err)
			}
		})
	}
	// A writer with no proposals still counts in n.
	got, err := Consensus([][]Proposal{{p("a", scorer.Essential, "x")}, nil}, 2, nil, 0.6)
	if err != nil || len(got) != 0 {
		t.Errorf("silent writer: %+v, %v", got, err)
	}
}
