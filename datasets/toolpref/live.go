package toolpref

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/bfcl"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/internal/toolcall"
	scorer "github.com/benchline/benchline/scorers/bfcl"
)

// Live sampling. With samplers configured (the "candidates" parameter),
// Plan splits the items into generation units of sample_unit items; each
// unit (one activity) asks every sampler for its replies to every item of
// the unit, with the item's question and its functions as tools, exactly
// as the bfcl task sends them (scorers/bfcl.NewPrompt), and saves them as a
// JSON-lines file staged by its sha256 (datasets.SaveGenerated). Finish adds
// the units' files to the plan's sources, where Build reads them like
// candidates.jsonl, so the rest (scoring, pair selection) is unchanged.

// samplingVersion changes whenever the requests sent, or the way replies
// are stored, change: it is part of the units' labels, so such a change
// samples again instead of reusing stored units.
const samplingVersion = "1"

// defaultUnitItems is the items of one generation unit.
const defaultUnitItems = 100

// SampledPrefix starts the source names of live-sampled replies
// ("sampled/unit-00000.jsonl").
const SampledPrefix = "sampled/"

// IsSampled reports whether a source holds live-sampled replies.
func IsSampled(name string) bool { return strings.HasPrefix(name, SampledPrefix) }

// samplingID identifies the calls a build makes: the item files, the
// samplers, the sample seed and the unit size. Unlike the version id it
// leaves out what only selects pairs (pairs, min_gap, weights, seed,
// synthetic, candidates.jsonl), so builds that differ only in those reuse
// the same sampled units instead of calling the models again.
func samplingID(srcs []catalog.Source, norm map[string]string, unitItems int) string {
	var files []string
	for _, s := range srcs {
		if _, ok := bfcl.CategoryOf(path.Base(s.Name)); ok {
			files = append(files, s.Name+"="+s.SHA256)
		}
	}
	sort.Strings(files)
	h := sha256.New()
	fmt.Fprintf(h, "toolpref samples v%s\ncandidates=%s\nsample_seed=%s\nunit=%d\n", samplingVersion, norm["candidates"], norm["sample_seed"], unitItems)
	for _, f := range files {
		fmt.Fprintf(h, "file=%s\n", f)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// planSampling validates the items and the candidates file and plans the
// generation units: the version id is derived now, before any model call.
func (b Builder) planSampling(ctx context.Context, env datasets.Env, srcs []catalog.Source, norm map[string]string, o Options) (datasets.Plan, error) {
	skipped := map[string]int64{}
	items, left, err := ReadItems(ctx, env, srcs, skipped)
	if err != nil {
		return datasets.Plan{}, err
	}
	byID := map[string]*Item{}
	for id := range left {
		byID[id] = nil
	}
	for _, it := range items {
		byID[it.ID] = it
		if _, err := it.Prompt(); err != nil {
			return datasets.Plan{}, &datasets.InputError{File: it.File, Line: it.Line, Msg: err.Error()}
		}
	}
	for _, s := range srcs {
		if s.Name == CandidatesFile {
			if _, err := ReadCandidates(ctx, env, s, byID); err != nil {
				return datasets.Plan{}, err
			}
		}
	}
	plan := withStats(datasets.NewPlan(b, srcs, norm, nil), skipped)
	if unit := fmt.Sprint(o.UnitItems); unit != runtimeParams["sample_unit"] {
		plan.Runtime = map[string]string{"sample_unit": unit}
	}
	sid := samplingID(srcs, norm, o.UnitItems)
	plan.Generate = datasets.Units(sid, len(items), o.UnitItems)
	return plan, nil
}

// planOptions parses a plan's parameters with its runtime settings.
func planOptions(plan datasets.Plan) (Options, error) {
	o, _, err := ParseParams(plan.AllParams())
	return o, err
}

// Prompt is what the samplers are asked for the item: BFCL's FC-mode
// prompt (the first turn, the functions as tools).
func (it *Item) Prompt() (scorer.Prompt, error) {
	var msgs []openai.ChatCompletionMessage
	if err := json.Unmarshal([]byte(it.MessagesJSON), &msgs); err != nil {
		return scorer.Prompt{}, fmt.Errorf("toolpref: item %s: messages: %w", it.ID, err)
	}
	p, err := scorer.NewPrompt(it.Category, msgs, it.FunctionsJSON)
	if err != nil {
		return p, fmt.Errorf("toolpref: item %s: %w", it.ID, err)
	}
	return p, nil
}

// sampledLine is one line of a unit's output: a candidate reply, or a call
// that gave none (Skipped says why).
type sampledLine struct {
	ID          string  `json:"id"`
	Model       string  `json:"model"`
	Temperature float64 `json:"temperature"`
	Sample      int     `json:"sample"`
	// Response is the reply's decoded calls rendered as Hermes <tool_call>
	// blocks under the item's own function names; the reply's text when it
	// has no decodable call (ParseError says why).
	Response string `json:"response"`
	// Raw is the reply as the model gave it (tool calls as "name(arguments)"
	// lines), when Response is a rendering of it.
	Raw        string `json:"raw,omitempty"`
	ParseError string `json:"parse_error,omitempty"`
	Skipped    string `json:"skipped,omitempty"`
}

// Generate samples unit u: every sampler's replies to every item of the
// unit (see the package's live-sampling notes). A reply that does not
// decode is a candidate scoring 0, with the parser's reason. A call the
// model refused for this request (a model failure: bad request, context
// too long, content filter) is skipped and counted, with its reason in the
// output. Any other error from the gateway (after its retries) stops the
// unit, wrapped with the item and the model; the activity decides whether
// it is retried.
func (b Builder) Generate(ctx context.Context, env datasets.Env, plan datasets.Plan, u datasets.Part, progress func(done int64)) (datasets.Generated, error) {
	o, err := planOptions(plan)
	if err != nil {
		return datasets.Generated{}, err
	}
	if env.Models == nil {
		return datasets.Generated{}, errors.New("toolpref: sampling candidates needs the model gateway, and this worker has none")
	}
	items, _, err := ReadItems(ctx, env, plan.Sources, nil)
	if err != nil {
		return datasets.Generated{}, err
	}
	unit, err := datasets.UnitOf(plan, u, items, "items")
	if err != nil {
		return datasets.Generated{}, err
	}
	prompts := make([]scorer.Prompt, len(unit))
	for i, it := range unit {
		if prompts[i], err = it.Prompt(); err != nil {
			return datasets.Generated{}, err
		}
	}
	if err := writeReferences(ctx, env, o.Samplers, u, unit, prompts); err != nil {
		return datasets.Generated{}, err
	}

	type job struct{ item, sampler, k int }
	var jobs []job
	for i := range unit {
		for s, sp := range o.Samplers {
			for k := range sp.Count {
				jobs = append(jobs, job{i, s, k})
			}
		}
	}
	lines := make([]sampledLine, len(jobs))
	usage := make([]modelapi.Usage, len(jobs))
	err = datasets.EachCall(ctx, len(jobs), progress, func(ctx context.Context, j int) error {
		jb := jobs[j]
		var err error
		lines[j], usage[j], err = sample(ctx, env.Models, unit[jb.item], prompts[jb.item], o.Samplers[jb.sampler], jb.k, o.SampleSeed)
		return err
	})
	if err != nil {
		return datasets.Generated{}, err
	}

	var gen datasets.Generated
	for j, line := range lines {
		if line.Skipped != "" {
			gen.Skipped++
			continue
		}
		gen.Outputs++
		gen.Usage.Add(usage[j])
	}
	name := func(l sampledLine) string { return "a reply to " + l.ID }
	return datasets.SaveLines(ctx, env, plan, u, SampledPrefix, lines, name, gen)
}

// sample asks sampler sp for its k-th reply to an item.
func sample(ctx context.Context, models datasets.Completer, it *Item, p scorer.Prompt, sp Sampler, k int, seed uint64) (sampledLine, modelapi.Usage, error) {
	temp := float32(sp.Temperature)
	reqSeed := requestSeed(seed, k)
	req := modelapi.Request{Model: sp.Model, Messages: p.Messages, Tools: p.Tools,
		Params: modelapi.Params{Temperature: &temp}, Seed: &reqSeed, SampleIndex: k}
	line := sampledLine{ID: it.ID, Model: sp.Model, Temperature: sp.Temperature, Sample: k}
	resp, err := models.Complete(ctx, req)
	if err != nil {
		if errors.Is(err, modelapi.ErrModelFailure) {
			line.Skipped = modelapi.ReasonOf(err)
			return line, modelapi.Usage{}, nil
		}
		return line, modelapi.Usage{}, fmt.Errorf("toolpref: item %s: model %s (temperature %s, sample %d): %w", it.ID, sp.Model, formatTemp(sp.Temperature), k, err)
	}
	calls, text, perr := scorer.ReplyCalls(resp)
	switch {
	case perr != nil:
		line.Response, line.ParseError = text, perr.Error()
	case len(calls) == 0:
		line.Response, line.ParseError = text, "the reply makes no function call"
	default:
		// Tool names were sent with "." as "_": give the calls back the
		// item's function names, as BFCL's FC-mode checking does.
		for i := range calls {
			if name, ok := p.Names[calls[i].Name]; ok {
				calls[i].Name = name
			}
		}
		h, err := toolcall.RenderHermes(calls)
		if err != nil {
			line.Response, line.ParseError = text, err.Error()
			break
		}
		line.Response = h
		if text != h {
			line.Raw = text
		}
	}
	return line, resp.Usage, nil
}

// requestSeed is the seed sent with the k-th sample of every request of a
// build, different for every k, so repeated samples are not the same
// request.
func requestSeed(seed uint64, k int) int {
	return datasets.RequestSeed("toolpref sample seed", seed, uint64(k))
}

// ReferencesKey is where a unit's reference answers for the baseline model
// server are kept (JSON lines of scorers.Reference, like the evaluation
// engine's references/<dataset>/<version>/task-<v>.jsonl).
func ReferencesKey(u datasets.Part) string { return "references/" + Name + "/" + u.Label + ".jsonl" }

// writeReferences writes the reference answers (the ground truth's calls)
// of a unit's items when a sampler is a baseline model, so that
// baseline/reference and baseline/noisy-<p> can answer them at build time,
// before any evaluation wrote references for these items. The baseline
// server reads references/ from the store on a miss.
func writeReferences(ctx context.Context, env datasets.Env, samplers []Sampler, u datasets.Part, unit []*Item, prompts []scorer.Prompt) error {
	baselines := false
	for _, sp := range samplers {
		if p, _, _ := modelapi.ParseModel(sp.Model); p == modelapi.BaselineProvider {
			baselines = true
		}
	}
	if !baselines {
		return nil
	}
	key := ReferencesKey(u)
	if ok, err := blob.Exists(ctx, env.Store, key); err != nil || ok {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i, it := range unit {
		ref, err := prompts[i].Reference(it.ReferenceCalls())
		if err != nil {
			return fmt.Errorf("toolpref: item %s: %w", it.ID, err)
		}
		if err := enc.Encode(ref); err != nil {
			return fmt.Errorf("toolpref: item %s: reference: %w", it.ID, err)
		}
	}
	if err := env.Store.Put(ctx, key, bytes.NewReader(buf.Bytes()), int64(buf.Len())); err != nil {
		return fmt.Errorf("toolpref: write baseline references %s: %w", key, err)
	}
	return nil
}

// ReadSampled parses a staged unit output (see Generate) into candidates.
// Skipped calls give none; a reply that did not decode scores 0 with
// BFCL's decoder-failure error type.
func ReadSampled(ctx context.Context, env datasets.Env, src catalog.Source, items map[string]*Item) ([]Candidate, error) {
	var out []Candidate
	err := EachLine(ctx, env, src, func(line int, raw []byte) error {
		var l sampledLine
		if err := json.Unmarshal(raw, &l); err != nil {
			return &datasets.InputError{File: src.URI, Line: line, Msg: "not a JSON object: " + err.Error()}
		}
		it, ok := items[l.ID]
		if !ok || it == nil {
			return &datasets.InputError{File: src.URI, Line: line, Msg: fmt.Sprintf("sampled reply for %q, which names no item", l.ID)}
		}
		if l.Skipped != "" {
			return nil
		}
		t := l.Temperature
		c := Candidate{ItemID: l.ID, Source: l.Model, Kind: "sampled", Temperature: &t, Response: l.Response,
			File: src.URI, Line: line, Live: true, Sample: l.Sample}
		if l.ParseError != "" {
			c.ErrorType = "ast_decoder:decoder_failed"
		} else {
			c.Score, c.ErrorType, _ = it.Judge(c.Response)
		}
		out = append(out, c)
		return nil
	})
	return out, err
}

// Finish adds every generated unit's output to the plan's sources (its
// version id is unchanged: it was derived from the inputs and parameters
// before sampling), computes the pairs and plans one part.
func (b Builder) Finish(ctx context.Context, env datasets.Env, plan datasets.Plan) (datasets.Plan, error) {
	out := plan
	var err error
	if out.Sources, err = datasets.FinishSources(ctx, env, plan, IsSampled); err != nil {
		return plan, err
	}
	if err := checkSamplers(ctx, env, out); err != nil {
		return plan, err
	}
	rows, err := Build(ctx, env, out.Sources, out.Params)
	if err != nil {
		return plan, err
	}
	if len(rows) == 0 {
		return plan, &datasets.InputError{File: "sources", Msg: "no pair has a score gap of at least min_gap"}
	}
	out.Parts = []datasets.Part{datasets.OnePart("pairs", out.Sources, len(rows))}
	return out, nil
}

// checkSamplers fails a build in which a sampler gave no reply at all: the
// model refused every request (an endpoint that rejects tools or seeds, a
// context too small for every item), which skipping call by call would
// otherwise hide behind a version without that model's candidates.
func checkSamplers(ctx context.Context, env datasets.Env, plan datasets.Plan) error {
	o, err := planOptions(plan)
	if err != nil {
		return err
	}
	type tally struct {
		replies, skipped int
		first            string // the first skip: item and reason
	}
	by := map[string]*tally{}
	for _, sp := range o.Samplers {
		by[sp.Model+"@"+formatTemp(sp.Temperature)] = &tally{}
	}
	for _, s := range plan.Sources {
		if !IsSampled(s.Name) {
			continue
		}
		err := EachLine(ctx, env, s, func(line int, raw []byte) error {
			var l sampledLine
			if err := json.Unmarshal(raw, &l); err != nil {
				return &datasets.InputError{File: s.URI, Line: line, Msg: "not a JSON object: " + err.Error()}
			}
			t := by[l.Model+"@"+formatTemp(l.Temperature)]
			switch {
			case t == nil:
				return &datasets.InputError{File: s.URI, Line: line, Msg: fmt.Sprintf("a reply from %s at temperature %s, which is not a sampler of this build", l.Model, formatTemp(l.Temperature))}
			case l.Skipped == "":
				t.replies++
			default:
				if t.skipped == 0 {
					t.first = fmt.Sprintf("item %s: %s", l.ID, l.Skipped)
				}
				t.skipped++
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for _, sp := range o.Samplers {
		if t := by[sp.Model+"@"+formatTemp(sp.Temperature)]; t.replies == 0 {
			return &datasets.InputError{File: "params", Msg: fmt.Sprintf("candidates: %s at temperature %s answered none of its %d requests (the first refusal: %s)",
				sp.Model, formatTemp(sp.Temperature), t.skipped, t.first)}
		}
	}
	return nil
}
