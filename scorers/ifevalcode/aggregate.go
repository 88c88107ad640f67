package ifevalcode

import (
	"sort"
	"strconv"

	"github.com/benchline/benchline/internal/sandbox/lang"
)

// Record is one scored response, for aggregation.
type Record struct {
	Language         string // programming_language
	QuestionLanguage string // "en" or "zh": which question the model answered
	Correct          bool
	Instruction      bool
}

// Tally counts the responses of one group.
type Tally struct {
	N           int `json:"n"`
	Correct     int `json:"correct"`
	Instruction int `json:"instruction"`
}

// Corr is the Corr. metric: the share of correct responses × 100, rounded
// to one decimal as the original's round(x*100, 1). 0 when N is 0.
func (t Tally) Corr() float64 { return pct(t.Correct, t.N) }

// Instr is the Instr. metric, rounded likewise.
func (t Tally) Instr() float64 { return pct(t.Instruction, t.N) }

// pct rounds 100*k/n to one decimal the way Python's round() does: the
// exact binary value, ties to even (strconv's shortest correct rounding).
func pct(k, n int) float64 {
	if n == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(strconv.FormatFloat(float64(k)/float64(n)*100, 'f', 1, 64), 64)
	return v
}

// Report holds the tallies per language (and "all") and per question
// language: Report["python"]["en"]. The original reports
// {en,zh}_if_correct and {en,zh}_if_instruction for each language and all.
type Report map[string]map[string]Tally

// Aggregate tallies records per language, per question language, and
// over all languages under "all".
func Aggregate(rs []Record) Report {
	rep := Report{}
	add := func(l, q string, r Record) {
		if rep[l] == nil {
			rep[l] = map[string]Tally{}
		}
		t := rep[l][q]
		t.N++
		if r.Correct {
			t.Correct++
		}
		if r.Instruction {
			t.Instruction++
		}
		rep[l][q] = t
	}
	for _, r := range rs {
		add(r.Language, r.QuestionLanguage, r)
		add("all", r.QuestionLanguage, r)
	}
	return rep
}

// Languages returns the report's languages in the original's table order
// (python, java, cpp, csharp, typescript, javascript, php, shell), then any
// others sorted, then "all".
func (rep Report) Languages() []string {
	var out []string
	for _, l := range lang.Languages() {
		if _, ok := rep[string(l)]; ok {
			out = append(out, string(l))
		}
	}
	var other []string
	for l := range rep {
		if l != "all" && lang.MainFile(lang.Language(l)) == "" {
			other = append(other, l)
		}
	}
	sort.Strings(other)
	out = append(out, other...)
	if _, ok := rep["all"]; ok {
		out = append(out, "all")
	}
	return out
}

// Metrics returns the original's flat result for one language (or "all"):
// en_if_correct, en_if_instruction, zh_if_correct, zh_if_instruction.
func (rep Report) Metrics(language string) map[string]float64 {
	m := map[string]float64{}
	for _, q := range []string{"en", "zh"} {
		t := rep[language][q]
		m[q+"_if_correct"] = t.Corr()
		m[q+"_if_instruction"] = t.Instr()
	}
	return m
}
