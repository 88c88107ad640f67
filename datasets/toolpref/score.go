package toolpref

import (
	"math"
	"slices"

	"github.com/benchline/benchline/internal/toolcall"
	scorer "github.com/benchline/benchline/scorers/bfcl"
)

// The weights of the partial-credit call score (see CallScore).
const (
	weightName     = 0.2
	weightRequired = 0.2
	weightValues   = 0.6
)

// CallScore is the partial credit of one output call c against one
// expected call a (fn describes a's function; nil if the item lacks it):
//
//	0                                     if c.Name != a.Name
//	0.2 + 0.2*R + 0.6*V                   otherwise, where
//	R = required parameters of fn present in c / required parameters (1 if none)
//	V = correct parameters / (parameters of a + parameters of c not in a)
//
// A parameter of a is correct if c gives a value BFCL's AST checker accepts
// for it alone (its type and value rules, per the item's language), or if c
// omits it and "" is among its acceptable values. Parameters c passes that a
// does not list are wrong (they enlarge the denominator).
func CallScore(lang scorer.Language, fn *scorer.Function, a scorer.Answer, c scorer.Call) float64 {
	if c.Name != a.Name {
		return 0
	}
	r := 1.0
	if fn != nil && len(fn.Required) > 0 {
		have := 0
		for _, p := range fn.Required {
			if c.Args.Has(p) {
				have++
			}
		}
		r = float64(have) / float64(len(fn.Required))
	}
	total, correct := len(a.Params), 0
	for _, p := range a.Params {
		v, has := c.Args.Get(p.Name)
		if !has {
			if omittable(p.Acceptable) {
				correct++
			}
			continue
		}
		if ValueOK(lang, fn, a.Name, p, v) {
			correct++
		}
	}
	for _, k := range c.Args.Keys() {
		if !slices.ContainsFunc(a.Params, func(p scorer.AnswerParam) bool { return p.Name == k }) {
			total++
		}
	}
	v := 1.0
	if total > 0 {
		v = float64(correct) / float64(total)
	}
	return weightName + weightRequired*r + weightValues*v
}

// ValueOK reports whether BFCL's AST checker accepts value for parameter p
// of function name, checked alone: the item's function description is cut
// down to that one parameter and the checker run on a one-argument call.
func ValueOK(lang scorer.Language, fn *scorer.Function, name string, p scorer.AnswerParam, value any) bool {
	if fn == nil {
		return false
	}
	schema, ok := fn.Params[p.Name]
	if !ok {
		return false
	}
	one := scorer.Function{Name: name, Params: map[string]scorer.Param{p.Name: schema}}
	args := toolcall.NewObject(1)
	args.Set(p.Name, value)
	r := scorer.Checker{}.Check(lang, "simple", []scorer.Function{one}, []scorer.Call{{Name: name, Args: args}},
		[]scorer.Answer{{Name: name, Params: []scorer.AnswerParam{p}}})
	return r.Valid
}

func omittable(acc []any) bool {
	return slices.ContainsFunc(acc, func(v any) bool { s, ok := v.(string); return ok && s == "" })
}

// Score is the partial-credit score in [0, 1] of output calls against the
// item's ground truth: expected and output calls are matched greedily by
// the highest CallScore first (each used once), and
//
//	score = sum of matched CallScores / max(expected calls, output calls)
//
// so a missing call counts 0 and every extra call enlarges the
// denominator. No output call scores 0. Scores are rounded to 4 decimals.
func (it *Item) Score(calls []scorer.Call) float64 {
	if len(calls) == 0 || len(it.Answers) == 0 {
		return 0
	}
	type cell struct {
		a, c int
		s    float64
	}
	cells := make([]cell, 0, len(it.Answers)*len(calls))
	for i, a := range it.Answers {
		fn := findFunc(it.Funcs, a.Name)
		for j, c := range calls {
			cells = append(cells, cell{i, j, CallScore(it.Lang, fn, a, c)})
		}
	}
	// Highest first; ties in (answer, call) order, so the result is stable.
	slices.SortStableFunc(cells, func(x, y cell) int {
		switch {
		case x.s > y.s:
			return -1
		case x.s < y.s:
			return 1
		}
		return 0
	})
	usedA, usedC := make([]bool, len(it.Answers)), make([]bool, len(calls))
	sum := 0.0
	for _, x := range cells {
		if usedA[x.a] || usedC[x.c] {
			continue
		}
		usedA[x.a], usedC[x.c] = true, true
		sum += x.s
	}
	s := sum / float64(max(len(it.Answers), len(calls)))
	return math.Round(s*1e4) / 1e4
}

// Judge scores a reply text: its decoded calls' Score and BFCL's verdict
// (the checker's error type, "" when valid; "ast_decoder:decoder_failed"
// when the text holds no decodable call).
func (it *Item) Judge(text string) (score float64, errorType string, calls int) {
	cs, _, err := toolcall.Parse(text)
	if err != nil || len(cs) == 0 {
		return 0, "ast_decoder:decoder_failed", 0
	}
	r := scorer.Checker{}.Check(it.Lang, it.Category, it.Funcs, cs, it.Answers)
	return it.Score(cs), r.ErrorType, len(cs)
}

// ReferenceCalls are the calls a correct reply makes (BFCL's first
// acceptable values; see scorers/bfcl.ReferenceCalls).
func (it *Item) ReferenceCalls() []scorer.Call {
	return scorer.ReferenceCalls(it.Lang, it.Funcs, it.Answers)
}

// GroundTruthText renders ReferenceCalls as Hermes <tool_call> blocks.
func (it *Item) GroundTruthText() (string, error) {
	return toolcall.RenderHermes(it.ReferenceCalls())
}

// Complexity buckets an item by its ground truth: the number of expected
// calls and of arguments a correct reply passes.
//
//	simple    1 call and at most 2 arguments
//	complex   3 or more calls, or 6 or more arguments
//	moderate  everything else
func (it *Item) Complexity() (bucket string, calls, args int) {
	ref := it.ReferenceCalls()
	for _, c := range ref {
		args += c.Args.Len()
	}
	calls = len(ref)
	switch {
	case calls >= 3 || args >= 6:
		bucket = "complex"
	case calls == 1 && args <= 2:
		bucket = "simple"
	default:
		bucket = "moderate"
	}
	return bucket, calls, args
}
