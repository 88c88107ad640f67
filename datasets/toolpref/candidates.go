package toolpref

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/toolcall"
	scorer "github.com/benchline/benchline/scorers/bfcl"
)

// CandidatesFile is the optional file of sampled candidate replies at a
// toolpref source, one JSON object a line:
//
//	{"id": "<item id>", "model": "<provider>/<model>", "temperature": 0.7, "response": "<reply text>"}
const CandidatesFile = "candidates.jsonl"

// SyntheticSource is the source name of the candidates the deterministic
// perturbation generator writes (see Perturb).
const SyntheticSource = "synthetic/perturb-v1"

// GroundTruthSource is the source name of the ground-truth candidate.
const GroundTruthSource = "ground truth"

// Candidate is one reply to an item, scored.
type Candidate struct {
	ItemID string
	// Source is the model (or generator) that produced the reply; Kind is
	// "sampled" for model replies, "ground_truth", or the perturbation.
	Source string
	Kind   string
	// Temperature is a sampled reply's sampling temperature, nil when not
	// known (generated replies, sampled ones given without it).
	Temperature *float64
	Response    string
	// File and Line locate a sampled candidate's line (0 for generated ones).
	File string
	Line int
	// Live marks a reply sampled at build time; Sample is its index among
	// its sampler's replies to the item.
	Live   bool
	Sample int

	Score     float64
	ErrorType string // BFCL checker error type, "" when valid
}

// ReadCandidates parses a staged candidates file. Every candidate must name
// an item of items; its reply is scored against it. An id items maps to
// nil is an item the build left out (ReadItems): its candidates are left
// out with it.
func ReadCandidates(ctx context.Context, env datasets.Env, src catalog.Source, items map[string]*Item) ([]Candidate, error) {
	var out []Candidate
	err := EachLine(ctx, env, src, func(line int, raw []byte) error {
		var c struct {
			ID          string   `json:"id"`
			Model       string   `json:"model"`
			Temperature *float64 `json:"temperature"`
			Response    *string  `json:"response"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return &datasets.InputError{File: src.URI, Line: line, Msg: "not a JSON object: " + err.Error()}
		}
		switch {
		case c.ID == "":
			return &datasets.InputError{File: src.URI, Line: line, Msg: `missing "id"`}
		case strings.TrimSpace(c.Model) == "":
			return &datasets.InputError{File: src.URI, Line: line, Msg: fmt.Sprintf(`candidate for %s: missing "model"`, c.ID)}
		case c.Response == nil:
			return &datasets.InputError{File: src.URI, Line: line, Msg: fmt.Sprintf(`candidate for %s: missing "response"`, c.ID)}
		case c.Model == GroundTruthSource || c.Model == SyntheticSource:
			return &datasets.InputError{File: src.URI, Line: line, Msg: fmt.Sprintf("candidate for %s: model name %q is reserved", c.ID, c.Model)}
		}
		it, ok := items[c.ID]
		if !ok {
			return &datasets.InputError{File: src.URI, Line: line, Msg: fmt.Sprintf("candidate id %q names no item with a ground truth", c.ID)}
		}
		if it == nil {
			return nil
		}
		cand := Candidate{ItemID: c.ID, Source: c.Model, Kind: "sampled", Response: *c.Response, File: src.URI, Line: line}
		cand.Temperature = c.Temperature
		cand.Score, cand.ErrorType, _ = it.Judge(cand.Response)
		out = append(out, cand)
		return nil
	})
	return out, err
}

// The perturbations Perturb applies, the ways models typically fail.
const (
	KindWrongValue    = "wrong_value"    // one argument gets a wrong value
	KindMissingArg    = "missing_arg"    // a required argument is dropped
	KindExtraCall     = "extra_call"     // an extra call is appended
	KindWrongFunction = "wrong_function" // the first call names another function
	KindMissingCall   = "missing_call"   // the last call is dropped (multi-call items)
)

// Perturb generates the deterministic candidates of an item: the ground
// truth (Kind "ground_truth", source GroundTruthSource) and one candidate
// per applicable perturbation (source SyntheticSource). Perturbations that
// do not apply (no argument to drop, one call only) or that still score 1
// (the wrong value happens to be acceptable) are left out.
func Perturb(it *Item) ([]Candidate, error) {
	ref := it.ReferenceCalls()
	gt, err := toolcall.RenderHermes(ref)
	if err != nil {
		return nil, fmt.Errorf("toolpref: item %s: render ground truth: %w", it.ID, err)
	}
	out := []Candidate{{ItemID: it.ID, Source: GroundTruthSource, Kind: "ground_truth", Response: gt}}
	add := func(kind string, calls []scorer.Call) error {
		if calls == nil {
			return nil
		}
		text, err := toolcall.RenderHermes(calls)
		if err != nil {
			return fmt.Errorf("toolpref: item %s: render %s: %w", it.ID, kind, err)
		}
		c := Candidate{ItemID: it.ID, Source: SyntheticSource, Kind: kind, Response: text}
		c.Score, c.ErrorType, _ = it.Judge(text)
		if c.Score < 1 {
			out = append(out, c)
		}
		return nil
	}
	out[0].Score, out[0].ErrorType, _ = it.Judge(gt)

	// wrong_value: the first argument (in call order) that can be altered.
	var wrong []scorer.Call
	for i, c := range ref {
		for _, k := range c.Args.Keys() {
			v, _ := c.Args.Get(k)
			if nv, ok := alter(v); ok {
				wrong = cloneCalls(ref)
				wrong[i].Args = withArg(c.Args, k, nv)
				break
			}
		}
		if wrong != nil {
			break
		}
	}
	if err := add(KindWrongValue, wrong); err != nil {
		return nil, err
	}

	// missing_arg: drop the first required argument of the first call that has one.
	var missing []scorer.Call
	for i, c := range ref {
		fn := findFunc(it.Funcs, c.Name)
		if fn == nil {
			continue
		}
		for _, p := range fn.Required {
			if c.Args.Has(p) {
				missing = cloneCalls(ref)
				missing[i].Args = withoutArg(c.Args, p)
				break
			}
		}
		if missing != nil {
			break
		}
	}
	if err := add(KindMissingArg, missing); err != nil {
		return nil, err
	}

	// extra_call: repeat the last call with its first alterable argument changed.
	last := ref[len(ref)-1]
	extra := scorer.Call{Name: last.Name, Args: last.Args}
	for _, k := range last.Args.Keys() {
		v, _ := last.Args.Get(k)
		if nv, ok := alter(v); ok {
			extra.Args = withArg(last.Args, k, nv)
			break
		}
	}
	if err := add(KindExtraCall, append(cloneCalls(ref), extra)); err != nil {
		return nil, err
	}

	// wrong_function: another of the item's functions, else a near-miss name.
	other := ""
	for _, f := range it.Funcs {
		if f.Name != ref[0].Name {
			other = f.Name
			break
		}
	}
	if other == "" {
		if strings.Contains(ref[0].Name, ".") {
			other = strings.ReplaceAll(ref[0].Name, ".", "_")
		} else {
			other = ref[0].Name + "_v2"
		}
	}
	wf := cloneCalls(ref)
	wf[0].Name = other
	if err := add(KindWrongFunction, wf); err != nil {
		return nil, err
	}

	if len(ref) > 1 {
		if err := add(KindMissingCall, cloneCalls(ref)[:len(ref)-1]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// alter returns a plausible wrong value of the same type.
func alter(v any) (any, bool) {
	switch x := v.(type) {
	case bool:
		return !x, true
	case int64:
		return x + 1, true
	case float64:
		return x*2 + 1, true
	case string:
		if x == "" {
			return "unknown", true
		}
		if x == "true" || x == "false" { // Java/JavaScript booleans are source strings
			return map[string]string{"true": "false", "false": "true"}[x], true
		}
		return x + "_alt", true
	case []any:
		if len(x) > 1 {
			return x[:len(x)-1], true
		}
	}
	return nil, false
}

func cloneCalls(calls []scorer.Call) []scorer.Call {
	return append([]scorer.Call(nil), calls...)
}

func withArg(o *toolcall.Object, key string, v any) *toolcall.Object {
	out := toolcall.NewObject(o.Len())
	for i := 0; i < o.Len(); i++ {
		k, val := o.At(i)
		if k == key {
			val = v
		}
		out.Set(k, val)
	}
	return out
}

func withoutArg(o *toolcall.Object, key string) *toolcall.Object {
	out := toolcall.NewObject(o.Len())
	for i := 0; i < o.Len(); i++ {
		if k, val := o.At(i); k != key {
			out.Set(k, val)
		}
	}
	return out
}
