package medrubric

import (
	"errors"
	"fmt"
	"github.com/benchline/benchline/internal/judge"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/benchline/benchline/schemas"
	scorer "github.com/benchline/benchline/scorers/medrubric"
)

// DefaultThreshold is the similarity at or above which two proposed rubrics
// are the same rubric, for Similarity.
const DefaultThreshold = 0.6

// Proposal is one rubric a writer (a model) proposed for a query.
type Proposal struct {
	Writer   string          `json:"writer"`
	Category scorer.Category `json:"category"`
	Text     string          `json:"text"`
	Keywords []string        `json:"keywords,omitempty"`
}

// Similarity is the token-set Jaccard similarity of two rubric texts,
// |A ∩ B| / |A ∪ B|, over normalised tokens: the text is lower-cased; a
// token is a maximal run of letters and digits outside CJK scripts, or a
// bigram of adjacent CJK characters (a lone CJK character is a token by
// itself); everything else separates tokens. Two texts without tokens have
// similarity 0. Examples: "Take with food" and "take it with food!" share
// 3 of 4 tokens (0.75); 多喝水休息 and 多喝水并休息 share 3 of 6 bigrams (0.5).
func Similarity(a, b string) float64 {
	ta, tb := tokenSet(a), tokenSet(b)
	if len(ta) == 0 && len(tb) == 0 {
		return 0
	}
	inter := 0
	for t := range ta {
		if tb[t] {
			inter++
		}
	}
	return float64(inter) / float64(len(ta)+len(tb)-inter)
}

func tokenSet(s string) map[string]bool {
	set := map[string]bool{}
	var word strings.Builder
	var cjk []rune
	flushWord := func() {
		if word.Len() > 0 {
			set[word.String()] = true
			word.Reset()
		}
	}
	flushCJK := func() {
		switch len(cjk) {
		case 0:
		case 1:
			set[string(cjk)] = true
		default:
			for i := 0; i+1 < len(cjk); i++ {
				set[string(cjk[i:i+2])] = true
			}
		}
		cjk = cjk[:0]
	}
	for _, r := range strings.ToLower(s) {
		switch {
		case judge.IsCJK(r):
			flushWord()
			cjk = append(cjk, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			flushCJK()
			word.WriteRune(r)
		default:
			flushWord()
			flushCJK()
		}
	}
	flushWord()
	flushCJK()
	return set
}

// ErrConsensus is wrapped by every error of Consensus's arguments.
var ErrConsensus = errors.New("medrubric: consensus")

// Consensus merges the rubrics several writers proposed for one query (or
// turn) into the rubrics kept: proposals[i] holds writer i's proposals, so
// n = len(proposals) writers, one of whom may have proposed nothing.
//
//  1. Near-duplicates merge: two proposals are the same rubric when sim(a,
//     b) ≥ threshold (sim nil means Similarity), and "the same" is made
//     transitive: groups are the connected components of that relation
//     (single linkage), which do not depend on the order of the input.
//  2. A group is kept when at least k distinct writers proposed it.
//  3. Its category is the one most of its writers chose; a writer with
//     several proposals in the group votes once, for the most severe of
//     them. A tie goes to the more severe category (pitfall, essential,
//     important, highlight): a safety fault outranks credit, and a point
//     some writers deem essential is not demoted by a split.
//  4. Its text and keywords are those of its medoid: the proposal of the
//     group's category with the highest total similarity to the rest of
//     the group; ties go to the shorter text, then the smaller in byte
//     order.
//  5. Its weight is scorer.DefaultWeight of its category, ProposedBy the
//     sorted writers, and the kept rubrics are ordered essential,
//     important, highlight, pitfall, then by more writers, then by text,
//     and numbered r1, r2, … in that order.
//
// Every proposal of writer i must name the same non-empty Writer, names
// differ between writers, texts are not blank and categories known; k must
// lie in 1..n and threshold in (0, 1].
func Consensus(proposals [][]Proposal, k int, sim func(a, b string) float64, threshold float64) ([]schemas.MedRubric, error) {
	n := len(proposals)
	if n == 0 {
		return nil, fmt.Errorf("%w: no writers", ErrConsensus)
	}
	if k < 1 || k > n {
		return nil, fmt.Errorf("%w: k = %d, want 1..%d (the number of writers)", ErrConsensus, k, n)
	}
	if !(threshold > 0 && threshold <= 1) {
		return nil, fmt.Errorf("%w: threshold %v outside (0, 1]", ErrConsensus, threshold)
	}
	if sim == nil {
		sim = Similarity
	}
	all, err := flatten(proposals)
	if err != nil {
		return nil, err
	}
	// 1. Connected components by union-find over every pair.
	groups, simm := components(all, sim, threshold)
	var out []keptRubric
	for _, members := range groups {
		if r, ok := resolve(proposals, all, simm, members, k); ok {
			out = append(out, r)
		}
	}
	return number(out), nil
}

// writerProp is one proposal with the index of its writer.
type writerProp struct {
	writer int
	Proposal
}

// keptRubric is a group's rubric with its number of supporting writers.
type keptRubric struct {
	r       schemas.MedRubric
	writers int
}

// flatten checks every writer's proposals (one writer name each, distinct
// names, text, a known category) and lists them all.
func flatten(proposals [][]Proposal) ([]writerProp, error) {
	var all []writerProp
	names := map[string]int{}
	for i, ps := range proposals {
		for j, p := range ps {
			if strings.TrimSpace(p.Writer) == "" {
				return nil, fmt.Errorf("%w: writer %d, proposal %d: no writer name", ErrConsensus, i, j)
			}
			if p.Writer != ps[0].Writer {
				return nil, fmt.Errorf("%w: writer %d: proposals name %q and %q", ErrConsensus, i, ps[0].Writer, p.Writer)
			}
			if strings.TrimSpace(p.Text) == "" {
				return nil, fmt.Errorf("%w: writer %s, proposal %d: empty text", ErrConsensus, p.Writer, j)
			}
			if _, err := scorer.ParseCategory(string(p.Category)); err != nil {
				return nil, fmt.Errorf("%w: writer %s, proposal %d: %w", ErrConsensus, p.Writer, j, err)
			}
			all = append(all, writerProp{i, p})
		}
		if len(ps) > 0 {
			if prev, dup := names[ps[0].Writer]; dup {
				return nil, fmt.Errorf("%w: writers %d and %d are both called %q", ErrConsensus, prev, i, ps[0].Writer)
			}
			names[ps[0].Writer] = i
		}
	}
	return all, nil
}

// components groups the proposals whose similarity reaches threshold,
// transitively (union-find over every pair), and returns the groups and
// the similarity matrix.
func components(all []writerProp, sim func(a, b string) float64, threshold float64) (map[int][]int, [][]float64) {
	parent := make([]int, len(all))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		if parent[i] != i {
			parent[i] = find(parent[i])
		}
		return parent[i]
	}
	simm := make([][]float64, len(all))
	for a := range all {
		simm[a] = make([]float64, len(all))
	}
	for a := range all {
		for b := a + 1; b < len(all); b++ {
			s := sim(all[a].Text, all[b].Text)
			simm[a][b], simm[b][a] = s, s
			if s >= threshold {
				parent[find(a)] = find(b)
			}
		}
	}
	groups := map[int][]int{}
	for a := range all {
		groups[find(a)] = append(groups[find(a)], a)
	}
	return groups, simm
}

// resolve is one group's rubric: kept when at least k distinct writers
// support it (2); its category is the writers' vote, each voting their
// most severe (3); its text the medoid among that category's proposals (4).
func resolve(proposals [][]Proposal, all []writerProp, simm [][]float64, members []int, k int) (keptRubric, bool) {
	vote := map[int]scorer.Category{}
	for _, m := range members {
		w, c := all[m].writer, all[m].Category
		if c.Severity() > vote[w].Severity() {
			vote[w] = c
		}
	}
	if len(vote) < k {
		return keptRubric{}, false
	}
	counts := map[scorer.Category]int{}
	for _, c := range vote {
		counts[c]++
	}
	var cat scorer.Category
	for c, v := range counts {
		if v > counts[cat] || (v == counts[cat] && c.Severity() > cat.Severity()) {
			cat = c
		}
	}
	best, bestSum := -1, -1.0
	for _, m := range members {
		if all[m].Category != cat {
			continue
		}
		sum := 0.0
		for _, o := range members {
			if o != m {
				sum += simm[m][o]
			}
		}
		// Sums within 1e-9 are equal: the order of the additions
		// follows the input and must not decide.
		if best < 0 || sum > bestSum+1e-9 || (sum >= bestSum-1e-9 && textBefore(all[m].Proposal, all[best].Proposal)) {
			best, bestSum = m, sum
		}
	}
	writers := make([]string, 0, len(vote))
	for w := range vote {
		writers = append(writers, proposals[w][0].Writer)
	}
	sort.Strings(writers)
	return keptRubric{schemas.MedRubric{
		Category: string(cat), Weight: scorer.DefaultWeight(cat), Text: all[best].Text,
		Keywords: all[best].Keywords, ProposedBy: writers,
	}, len(vote)}, true
}

// number orders the kept rubrics (5: by category, then support, text and
// keywords) and numbers them r1, r2, ...
func number(out []keptRubric) []schemas.MedRubric {
	rank := map[string]int{string(scorer.Essential): 0, string(scorer.Important): 1, string(scorer.Highlight): 2, string(scorer.Pitfall): 3}
	sort.Slice(out, func(a, b int) bool {
		ra, rb := out[a].r, out[b].r
		switch {
		case rank[ra.Category] != rank[rb.Category]:
			return rank[ra.Category] < rank[rb.Category]
		case out[a].writers != out[b].writers:
			return out[a].writers > out[b].writers
		case ra.Text != rb.Text:
			return ra.Text < rb.Text
		}
		return strings.Join(ra.Keywords, "\x00") < strings.Join(rb.Keywords, "\x00")
	})
	rubrics := make([]schemas.MedRubric, len(out))
	for i, o := range out {
		o.r.ID = fmt.Sprintf("r%d", i+1)
		rubrics[i] = o.r
	}
	return rubrics
}

// textBefore orders proposals for the medoid tie-break: shorter text (in
// characters), then smaller text, then smaller keywords.
func textBefore(a, b Proposal) bool {
	la, lb := utf8.RuneCountInString(a.Text), utf8.RuneCountInString(b.Text)
	switch {
	case la != lb:
		return la < lb
	case a.Text != b.Text:
		return a.Text < b.Text
	}
	return strings.Join(a.Keywords, "\x00") < strings.Join(b.Keywords, "\x00")
}
