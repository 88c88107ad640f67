// Package toolpref builds ToolPref-style preference pairs over function
// calls: for BFCL-format items with a ground truth it gathers candidate
// replies (sampled live from models at build time, read from
// candidates.jsonl, and made by a deterministic generator that perturbs the
// ground truth the way models fail), scores each with a rule-based partial
// credit in [0, 1] (see Item.Score), and picks (chosen, rejected) pairs by
// balanced multi-dimensional sampling over the rejected reply's source,
// preference intensity (score gap) and task complexity (see Select).
//
// Live sampling (the "candidates" parameter, see ParseSamplers) makes the
// builder a datasets.Generator: the build's Generate units ask the models
// through the gateway (see live.go), and Finish plans the pairs from what
// they wrote.
package toolpref

import (
	"context"
	"embed"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/source"
	"github.com/benchline/benchline/schemas"
)

// Name is the dataset name.
const Name = "toolpref"

// builderVersion changes whenever the rows written for the same input change.
// 3: items bfcl.Check leaves out (e.g. a ground truth calling a function
// the item does not define, or a "function" that is one object, not a
// list) are skipped and counted instead of failing the build or paired.
const builderVersion = "3"

// Embedded is the source URI of the bundled fixtures: a few BFCL-format
// items and sampled candidates written for benchline (not BFCL's data).
const Embedded = "embedded://toolpref"

//go:embed fixtures
var fixtures embed.FS

// Fixtures returns the bundled fixture files as a source Location.
func Fixtures() source.Location { return datasets.EmbeddedFixtures(fixtures, "fixtures", Embedded) }

// Params are the build parameters, with their defaults.
var defaultParams = map[string]string{
	"synthetic":          "true", // add the perturbation generator's candidates
	"pairs":              "0",    // pairs to select; 0: one per item that has an eligible pair
	"per_item":           "2",    // at most this many pairs per item (0: no limit)
	"min_gap":            "0.1",  // a pair needs chosen_score - rejected_score >= min_gap
	"seed":               "0",
	"source_weights":     "",  // e.g. "synthetic/perturb-v1=1,openai/gpt-4o=2"; empty: uniform
	"intensity_weights":  "",  // over low, medium, high
	"complexity_weights": "",  // over simple, moderate, complex
	"candidates":         "",  // live samplers, MODEL@TEMPERATURE[xCOUNT],... (see ParseSamplers); empty: none
	"sample_seed":        "0", // seed of the sampled requests; another seed samples again
}

// runtimeParams are parameters that do not change the content, so are kept
// out of the version id (in Plan.Runtime), with their defaults.
var runtimeParams = map[string]string{
	"sample_unit": fmt.Sprint(defaultUnitItems), // items per generation unit (one activity)
}

// Options are the parsed build parameters.
type Options struct {
	Synthetic bool
	Pairs     int
	PerItem   int
	MinGap    float64
	Seed      uint64
	Targets   Targets
	// Samplers are the live candidate samplers, sorted; SampleSeed seeds
	// their requests; UnitItems is the items per generation unit.
	Samplers   []Sampler
	SampleSeed uint64
	UnitItems  int
}

// ParseParams validates params and fills defaults; the normalized map is
// what the version id is derived from (runtime parameters are left out of
// it; see Options.UnitItems).
func ParseParams(params map[string]string) (Options, map[string]string, error) {
	norm := map[string]string{}
	for k, v := range defaultParams {
		norm[k] = v
	}
	runtime := map[string]string{}
	for k, v := range runtimeParams {
		runtime[k] = v
	}
	for k, v := range params {
		if _, ok := runtimeParams[k]; ok {
			runtime[k] = strings.TrimSpace(v)
			continue
		}
		if _, ok := defaultParams[k]; !ok {
			return Options{}, nil, &datasets.InputError{File: "params", Msg: fmt.Sprintf("unknown parameter %q (have %s)", k, paramNames())}
		}
		norm[k] = strings.TrimSpace(v)
	}
	var o Options
	var err error
	bad := func(k string, e error) error {
		v, ok := norm[k]
		if !ok {
			v = runtime[k]
		}
		return &datasets.InputError{File: "params", Msg: fmt.Sprintf("%s=%q: %v", k, v, e)}
	}
	if o.Synthetic, err = strconv.ParseBool(norm["synthetic"]); err != nil {
		return o, nil, bad("synthetic", err)
	}
	if o.Pairs, err = strconv.Atoi(norm["pairs"]); err != nil || o.Pairs < 0 {
		return o, nil, bad("pairs", fmt.Errorf("want a non-negative integer"))
	}
	if o.PerItem, err = strconv.Atoi(norm["per_item"]); err != nil || o.PerItem < 0 {
		return o, nil, bad("per_item", fmt.Errorf("want a non-negative integer"))
	}
	if o.MinGap, err = strconv.ParseFloat(norm["min_gap"], 64); err != nil || o.MinGap <= 0 || o.MinGap > 1 {
		return o, nil, bad("min_gap", fmt.Errorf("want a number in (0, 1]"))
	}
	if o.Seed, err = strconv.ParseUint(norm["seed"], 10, 64); err != nil {
		return o, nil, bad("seed", err)
	}
	for d, k := range []string{"source_weights", "intensity_weights", "complexity_weights"} {
		if o.Targets[d], err = ParseWeights(norm[k]); err != nil {
			return o, nil, bad(k, err)
		}
	}
	if o.Samplers, err = ParseSamplers(norm["candidates"]); err != nil {
		return o, nil, bad("candidates", err)
	}
	norm["candidates"] = FormatSamplers(o.Samplers)
	if o.SampleSeed, err = strconv.ParseUint(norm["sample_seed"], 10, 64); err != nil {
		return o, nil, bad("sample_seed", fmt.Errorf("want a non-negative integer"))
	}
	norm["sample_seed"] = strconv.FormatUint(o.SampleSeed, 10)
	if o.UnitItems, err = strconv.Atoi(runtime["sample_unit"]); err != nil || o.UnitItems < 1 {
		return o, nil, bad("sample_unit", fmt.Errorf("want a positive integer"))
	}
	return o, norm, nil
}

func paramNames() string {
	var names []string
	for k := range defaultParams {
		names = append(names, k)
	}
	for k := range runtimeParams {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// Builder builds the toolpref dataset.
type Builder struct{}

var _ datasets.Generator = Builder{}

func (Builder) Name() string          { return Name }
func (Builder) Version() string       { return builderVersion }
func (Builder) Schema() schemas.Table { return schemas.ToolPrefPairTable }

// Plan stages the items and candidates, scores and selects the pairs (so
// bad input fails before anything is written) and plans one part. With live
// samplers it validates the items and candidates and plans the generation
// units instead (see planSampling); Finish then plans the part.
func (b Builder) Plan(ctx context.Context, env datasets.Env, req datasets.Request) (datasets.Plan, error) {
	o, norm, err := ParseParams(req.Params)
	if err != nil {
		return datasets.Plan{}, err
	}
	loc, err := datasets.Locate(ctx, env, req.Source, Embedded, Fixtures)
	if err != nil {
		return datasets.Plan{}, err
	}
	srcs, skipped, err := StageItems(ctx, env, loc, CandidatesFile)
	if err != nil {
		return datasets.Plan{}, err
	}
	if len(o.Samplers) > 0 {
		plan, err := b.planSampling(ctx, env, srcs, norm, o)
		return withStats(plan, skipped), err
	}
	rows, err := build(ctx, env, srcs, norm, skipped)
	if err != nil {
		return datasets.Plan{}, err
	}
	if len(rows) == 0 {
		return datasets.Plan{}, &datasets.InputError{File: loc.URI(""), Msg: "no pair has a score gap of at least min_gap"}
	}
	return withStats(datasets.NewPlan(b, srcs, norm, []datasets.Part{datasets.OnePart("pairs", srcs, len(rows))}), skipped), nil
}

// withStats adds the counts of what the build skipped to plan's Stats.
func withStats(plan datasets.Plan, skipped map[string]int64) datasets.Plan {
	for k, v := range skipped {
		if plan.Stats == nil {
			plan.Stats = map[string]int64{}
		}
		plan.Stats[k] += v
	}
	return plan
}

// Build computes the pairs from staged sources; the same sources and
// params always give the same rows in the same order.
func Build(ctx context.Context, env datasets.Env, srcs []catalog.Source, params map[string]string) ([]schemas.ToolPrefPair, error) {
	return build(ctx, env, srcs, params, nil)
}

// build is Build, counting the items it leaves out in skipped (when not
// nil; see ReadItems).
func build(ctx context.Context, env datasets.Env, srcs []catalog.Source, params map[string]string, skipped map[string]int64) ([]schemas.ToolPrefPair, error) {
	o, _, err := ParseParams(params)
	if err != nil {
		return nil, err
	}
	items, left, err := ReadItems(ctx, env, srcs, skipped)
	if err != nil {
		return nil, err
	}
	byID := map[string]*Item{}
	for id := range left {
		byID[id] = nil // its candidates are left out with it
	}
	order := map[string]int{}
	for i, it := range items {
		byID[it.ID], order[it.ID] = it, i
	}
	cands := map[string][]Candidate{}
	for _, it := range items {
		if o.Synthetic {
			cs, err := Perturb(it)
			if err != nil {
				return nil, err
			}
			cands[it.ID] = cs
		}
	}
	for _, s := range srcs {
		var cs []Candidate
		switch {
		case s.Name == CandidatesFile:
			cs, err = ReadCandidates(ctx, env, s, byID)
		case IsSampled(s.Name):
			cs, err = ReadSampled(ctx, env, s, byID)
		default:
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			cands[c.ItemID] = append(cands[c.ItemID], c)
		}
	}
	type ref struct {
		item               *Item
		chosen, rejected   Candidate
		complexity         string
		calls, args        int
		chosenID, rejectID string
	}
	var pool []Pair
	var refs []ref
	withPair := map[string]bool{}
	for _, it := range items {
		cx, calls, args := it.Complexity()
		cs := cands[it.ID]
		for i, c := range cs {
			for j, r := range cs {
				if i == j || c.Score-r.Score < o.MinGap-1e-9 {
					continue
				}
				gap := c.Score - r.Score
				refs = append(refs, ref{it, c, r, cx, calls, args, label(c), label(r)})
				pool = append(pool, Pair{ItemID: it.ID, Dims: [3]string{r.Source, Intensity(gap), cx}, Ref: len(refs) - 1})
				withPair[it.ID] = true
			}
		}
	}
	n := o.Pairs
	if n == 0 {
		n = len(withPair)
	}
	picked := Select(pool, o.Targets, n, o.PerItem, o.Seed)
	rows := make([]schemas.ToolPrefPair, 0, len(picked))
	for _, i := range picked {
		r := refs[pool[i].Ref.(int)]
		gap := r.chosen.Score - r.rejected.Score
		rows = append(rows, schemas.ToolPrefPair{
			PairID: r.item.ID + "/" + r.chosenID + "/" + r.rejectID, ItemID: r.item.ID, Category: r.item.Category,
			MessagesJSON: r.item.MessagesJSON, ToolsJSON: r.item.FunctionsJSON, GroundTruthJSON: r.item.GroundTruthJSON,
			Chosen: r.chosen.Response, ChosenScore: r.chosen.Score, ChosenSource: r.chosen.Source, ChosenError: r.chosen.ErrorType,
			ChosenTemperature: r.chosen.Temperature,
			Rejected:          r.rejected.Response, RejectedScore: r.rejected.Score, RejectedSource: r.rejected.Source,
			RejectedKind: r.rejected.Kind, RejectedError: r.rejected.ErrorType, RejectedTemperature: r.rejected.Temperature,
			Source: r.rejected.Source, Gap: roundGap(gap), Intensity: Intensity(gap), Complexity: r.complexity,
			NumCalls: int32(r.calls), NumArgs: int32(r.args),
		})
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if oi, oj := order[rows[i].ItemID], order[rows[j].ItemID]; oi != oj {
			return oi < oj
		}
		return rows[i].PairID < rows[j].PairID
	})
	return rows, nil
}

func roundGap(g float64) float64 { return float64(int64(g*1e4+0.5)) / 1e4 }

// label names a candidate within its item.
func label(c Candidate) string {
	switch {
	case c.Live:
		return fmt.Sprintf("%s@t%s#%d", c.Source, formatTemp(*c.Temperature), c.Sample)
	case c.Kind == "sampled":
		return fmt.Sprintf("%s@%d", c.Source, c.Line)
	case c.Kind == "ground_truth":
		return "ground_truth"
	}
	return "synthetic:" + c.Kind
}

// WritePart recomputes the pairs from the staged sources and writes them.
func (b Builder) WritePart(ctx context.Context, env datasets.Env, plan datasets.Plan, p datasets.Part, key string, progress func(int64)) (pq.FileInfo, error) {
	rows, err := Build(ctx, env, plan.Sources, plan.Params)
	if err != nil {
		return pq.FileInfo{}, err
	}
	return datasets.WriteComputedPart(ctx, env, plan, p, key, rows, progress)
}

// Card renders the dataset card.
func (Builder) Card(m catalog.Manifest) string {
	return datasets.RenderCard(datasets.CardText{
		License:    "apache-2.0",
		PrettyName: "ToolPref-style function-calling preference pairs (benchline build)",
		Description: "Preference pairs over replies to BFCL-format function-calling items, built by benchline in the manner of " +
			"ToolPref-Pairwise (ToolRM): candidates are scored by a rule-based partial credit in [0, 1] (function name, " +
			"required arguments, argument values per BFCL's acceptable values, extra calls penalized) and pairs are picked by " +
			"balanced sampling over the rejected reply's source, the score gap and the task complexity. The scoring rule " +
			"is benchline's own (ToolPref's formula is not published). See docs/benchmarks/function-calling.md.\n\n" +
			"Candidates come from the models in the `candidates` parameter, sampled at build time (their replies are the " +
			"sources `sampled/unit-*.jsonl`; models named `baseline/...` are deterministic baselines, not LLMs), from a " +
			"`candidates.jsonl` source, and from the ground truth and its synthetic perturbations (`synthetic`). Each " +
			"row names the source and sampling temperature of both replies.\n\n",
	}, m)
}
