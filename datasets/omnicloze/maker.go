package omnicloze

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"regexp"
	"sort"
	"strings"

	scorer "github.com/benchline/benchline/scorers/omnicloze"
)

// The baseline writers' oracle: a deterministic cloze maker. Baseline
// models answer from the oracle a request carries (baseline/judge
// verbatim, judge-noisy-<p> with booleans flipped, judge-yes with every
// boolean true, judge-malformed-<p> broken); for a writer request the
// generator attaches what MakeCloze writes, so the generation path runs
// offline, and a noisy writer's flipped "correct" flags give items the
// validation rejects. Real writers never receive it. The maker:
//
//   - reads the caption's words (runs of ASCII letters and digits);
//   - a content word is all letters, at least 4 long, not a stop word,
//     written in lower case (a capital would set the answer apart from
//     its distractors), and occurs once in the caption (so blanking it
//     leaves no copy in the passage);
//   - distractors for a word are content words of the other captions of
//     the same domain whose crude stem (a trailing -ing, -ed, -es, -s or
//     -ly removed) is not the stem of any word of this caption, preferring
//     those with the same ending (-ing, -ed, -ly, -s or none) so that
//     every option fits the sentence alike;
//   - it blanks up to `blanks` content words that have enough
//     distractors, never two adjacent words, chosen in an order drawn
//     from a hash of (item, seed, word), and numbers them in passage
//     order; each blank's options are the word and its distractors in an
//     order drawn the same way, the word marked correct.

var wordRE = regexp.MustCompile(`[A-Za-z0-9]+`)

var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`about above across after again against along also among another around away back
		because been before behind being below beneath beside between both came come comes could down during each
		either every from front further have having here into itself just last least less like made make many more
		most much near next once only onto other over own quite rather same several since some still such than that
		their them then there these they this those though three through throughout toward towards under until upon
		very were what when where whether which while whose will with within without would your first second third
		four five half there's itself`) {
		stopWords[w] = true
	}
}

// token is a word of a caption at byte offsets [start, end).
type token struct {
	word       string // lower case
	start, end int
}

func tokens(text string) []token {
	var out []token
	for _, loc := range wordRE.FindAllStringIndex(text, -1) {
		out = append(out, token{word: strings.ToLower(text[loc[0]:loc[1]]), start: loc[0], end: loc[1]})
	}
	return out
}

func isContent(w string) bool {
	if len(w) < 4 || stopWords[w] {
		return false
	}
	for _, r := range w {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}

// stem removes one common English ending, keeping at least 3 letters.
func stem(w string) string {
	for _, suf := range []string{"ing", "ed", "es", "s", "ly"} {
		if s, ok := strings.CutSuffix(w, suf); ok && len(s) >= 3 {
			return s
		}
	}
	return w
}

// ending is the class of a word's ending, for distractors that fit alike.
func ending(w string) string {
	for _, suf := range []string{"ing", "ed", "ly"} {
		if strings.HasSuffix(w, suf) {
			return suf
		}
	}
	if strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
		return "s"
	}
	return ""
}

// rank maps parts to a uint64 drawn from their hash.
func rank(parts ...any) uint64 {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%v\x00", p)
	}
	return binary.BigEndian.Uint64(h.Sum(nil)[:8])
}

// MakeCloze is the cloze maker's reply for caption c (see above), given
// the other captions of its domain; ok is false when no word of the
// caption can be blanked.
func MakeCloze(c Caption, others []Caption, blanks, distractors int, seed uint64) (reply WriterReply, ok bool) {
	toks := tokens(c.Text)
	count := map[string]int{}
	stems := map[string]bool{}
	for _, t := range toks {
		count[t.word]++
		stems[stem(t.word)] = true
	}
	// The distractor vocabulary, by ending, in a stable order.
	vocab := map[string][]string{}
	seen := map[string]bool{}
	for _, o := range others {
		for _, t := range tokens(o.Text) {
			if isContent(t.word) && !stems[stem(t.word)] && !seen[t.word] {
				seen[t.word] = true
				vocab[ending(t.word)] = append(vocab[ending(t.word)], t.word)
			}
		}
	}
	pick := func(answer string) []string {
		pool := append([]string(nil), vocab[ending(answer)]...)
		sort.Slice(pool, func(i, j int) bool {
			return rank("distractor", c.ID, seed, answer, pool[i]) < rank("distractor", c.ID, seed, answer, pool[j])
		})
		var out []string
		used := map[string]bool{}
		for _, w := range pool {
			if len(out) == distractors {
				break
			}
			if !used[stem(w)] {
				used[stem(w)] = true
				out = append(out, w)
			}
		}
		return out
	}
	var cands []int // token indexes
	for i, t := range toks {
		if isContent(t.word) && count[t.word] == 1 && c.Text[t.start:t.end] == t.word {
			cands = append(cands, i)
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		return rank("blank", c.ID, seed, toks[cands[i]].word) < rank("blank", c.ID, seed, toks[cands[j]].word)
	})
	type chosen struct {
		tok  int
		opts []string
	}
	var picks []chosen
	taken := map[int]bool{}
	for _, i := range cands {
		if len(picks) == blanks {
			break
		}
		if taken[i-1] || taken[i+1] {
			continue
		}
		d := pick(toks[i].word)
		if len(d) < distractors {
			continue
		}
		taken[i] = true
		picks = append(picks, chosen{tok: i, opts: d})
	}
	if len(picks) == 0 {
		return WriterReply{}, false
	}
	sort.Slice(picks, func(i, j int) bool { return picks[i].tok < picks[j].tok })
	var b strings.Builder
	last := 0
	for k, p := range picks {
		t := toks[p.tok]
		b.WriteString(c.Text[last:t.start])
		b.WriteString(scorer.Marker(k + 1))
		last = t.end
		answer := c.Text[t.start:t.end]
		opts := []WrittenOption{{Text: answer, Correct: true}}
		for _, d := range p.opts {
			opts = append(opts, WrittenOption{Text: d})
		}
		sort.Slice(opts, func(i, j int) bool {
			return rank("order", c.ID, seed, k, opts[i].Text) < rank("order", c.ID, seed, k, opts[j].Text)
		})
		reply.Blanks = append(reply.Blanks, WrittenBlank{Blank: k + 1, Options: opts})
	}
	b.WriteString(c.Text[last:])
	reply.Passage = b.String()
	return reply, true
}
