package medrubric

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/schemas"
	scorer "github.com/benchline/benchline/scorers/medrubric"
)

// Generation. With writers (the "writers" parameter), Plan reads the
// source's items as queries (their own rubrics, if any, are only what
// baseline writers answer from: see WriterOracle) and splits them into
// units of unit_items items; each unit (one activity) asks every writer,
// once per turn, to propose rubrics (WriterMessages, with the item's
// evidence passages when the source has EvidenceFile), and saves the
// replies as a JSON-lines file staged by its sha256. Finish adds the
// units' files to the plan's sources; Build then merges each turn's
// proposals with Consensus (k of n writers, threshold), numbers the kept
// rubrics r1, r2, … across the item's turns, and leaves out items with a
// turn that kept no essential rubric. The writers, k, seed, threshold and
// evidence are part of the version id; a rebuild with the same parameters
// reuses the version without calling any model.

// generationVersion changes whenever the requests sent, or the way replies
// are stored, change: it is part of the units' labels.
const generationVersion = "1"

// defaultUnitItems is the items of one generation unit.
const defaultUnitItems = 8

// GeneratedPrefix starts the source names of the writers' replies
// ("generated/unit-00000.jsonl").
const GeneratedPrefix = "generated/"

// IsGenerated reports whether a source holds writers' replies.
func IsGenerated(name string) bool { return strings.HasPrefix(name, GeneratedPrefix) }

// writerTemperature is the sampling temperature of writer calls: some
// diversity between writers' proposals is what consensus is for.
const writerTemperature = 0.7

// generationID identifies the calls a build makes: the query files and
// evidence, the writers, the seed, the evidence switch and the unit size
// (not k or threshold, which only merge: builds that differ in those reuse
// the units).
func generationID(srcs []catalog.Source, norm map[string]string, unitItems int) string {
	h := sha256.New()
	fmt.Fprintf(h, "medrubric generation v%s %s\nwriters=%s\nseed=%s\nevidence=%s\nunit=%d\n",
		generationVersion, WriterPromptVersion, norm["writers"], norm["seed"], norm["evidence"], unitItems)
	for _, s := range srcs {
		if !IsGenerated(s.Name) {
			fmt.Fprintf(h, "file=%s=%s\n", s.Name, s.SHA256)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// planGeneration validates the queries and evidence and plans the units:
// the version id is derived now, before any model call.
func (b Builder) planGeneration(ctx context.Context, env datasets.Env, srcs []catalog.Source, norm map[string]string, o Options) (datasets.Plan, error) {
	items, err := readStaged(ctx, env, srcs, &Parser{RubricsOptional: true})
	if err != nil {
		return datasets.Plan{}, err
	}
	if _, err := readEvidence(ctx, env, srcs, items); err != nil {
		return datasets.Plan{}, err
	}
	return datasets.PlanUnits(b, srcs, norm, generationID(srcs, norm, o.UnitItems), len(items), o.UnitItems, defaultUnitItems), nil
}

// planOptions parses a plan's parameters with its runtime settings.
func planOptions(plan datasets.Plan) (Options, error) {
	o, _, err := ParseParams(plan.AllParams())
	return o, err
}

// evidenceLine is one line of EvidenceFile.
type evidenceLine struct {
	ID       string   `json:"id"`
	Passages []string `json:"passages"`
}

// readEvidence reads EvidenceFile among srcs (none when absent): the
// passages by item id. A line naming no item, or a blank passage, is bad
// input.
func readEvidence(ctx context.Context, env datasets.Env, srcs []catalog.Source, items []schemas.MedRubricItem) (map[string][]string, error) {
	ids := map[string]bool{}
	for _, it := range items {
		ids[it.ID] = true
	}
	out := map[string][]string{}
	for _, s := range srcs {
		if s.Name != EvidenceFile {
			continue
		}
		err := datasets.EachStagedLine(ctx, env, s.SHA256, s.URI, func(n int, raw []byte) error {
			var l evidenceLine
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&l); err != nil {
				return &datasets.InputError{File: s.URI, Line: n, Msg: "not an evidence line: " + err.Error()}
			}
			if !ids[l.ID] {
				return &datasets.InputError{File: s.URI, Line: n, Msg: fmt.Sprintf("evidence for %q, which names no item", l.ID)}
			}
			for i, p := range l.Passages {
				if strings.TrimSpace(p) == "" {
					return &datasets.InputError{File: s.URI, Line: n, Msg: fmt.Sprintf("passage %d is empty", i+1)}
				}
			}
			out[l.ID] = append(out[l.ID], l.Passages...)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// writtenLine is one line of a unit's output: a writer's reply for one
// turn of one item.
type writtenLine struct {
	ID     string `json:"id"`
	Turn   int    `json:"turn"`
	Writer string `json:"writer"`
	// Proposals are the parsed rubrics; none when the reply did not parse
	// (Verdict.Error says why) or the call was refused (Skipped).
	Proposals []Proposal `json:"proposals"`
	// Verdict is the call's audit record: prompt version, raw reply,
	// parsed reply or parse error, attempts.
	Verdict judge.Verdict `json:"verdict"`
	Skipped string        `json:"skipped,omitempty"`
}

// Generate asks every writer for its rubrics for every turn of unit u's
// items and saves the replies. A reply that does not parse (after one
// retry) gives no proposals and is recorded; a call refused for its
// request (bad request, context too long) is skipped and counted; any
// other gateway error stops the unit, wrapped with the item and the
// writer.
func (b Builder) Generate(ctx context.Context, env datasets.Env, plan datasets.Plan, u datasets.Part, progress func(done int64)) (datasets.Generated, error) {
	o, err := planOptions(plan)
	if err != nil {
		return datasets.Generated{}, err
	}
	if env.Models == nil {
		return datasets.Generated{}, errors.New("medrubric: writing rubrics needs the model gateway, and this worker has none")
	}
	items, err := readStaged(ctx, env, plan.Sources, &Parser{RubricsOptional: true})
	if err != nil {
		return datasets.Generated{}, err
	}
	evidence, err := readEvidence(ctx, env, plan.Sources, items)
	if err != nil {
		return datasets.Generated{}, err
	}
	unit, err := datasets.UnitOf(plan, u, items, "items")
	if err != nil {
		return datasets.Generated{}, err
	}
	type job struct {
		item   schemas.MedRubricItem
		turns  []schemas.MedRubricTurn
		turn   int // 0-based
		writer string
	}
	var jobs []job
	for _, it := range unit {
		turns, err := Turns(it)
		if err != nil {
			return datasets.Generated{}, err
		}
		for ti := range turns {
			for _, w := range o.Writers {
				jobs = append(jobs, job{it, turns, ti, w})
			}
		}
	}
	call := func(ctx context.Context, i int) (writtenLine, error) {
		jb := jobs[i]
		return write(ctx, env.Models, jb.item.ID, jb.turns, jb.turn, jb.writer, evidence[jb.item.ID], o)
	}
	count := func(l writtenLine, gen *datasets.Generated) {
		gen.Usage.Merge(l.Verdict.Usage)
		if l.Skipped != "" {
			gen.Skipped++
			return
		}
		gen.Outputs += int64(len(l.Proposals))
	}
	name := func(l writtenLine) string { return l.Writer + "'s rubrics for " + l.ID }
	return datasets.WriteUnit(ctx, env, plan, u, GeneratedPrefix, len(jobs), progress, call, count, name)
}

// write asks one writer for its rubrics for turn ti of an item.
func write(ctx context.Context, models datasets.Completer, id string, turns []schemas.MedRubricTurn, ti int, writer string, evidence []string, o Options) (writtenLine, error) {
	temp := float32(writerTemperature)
	seed := datasets.RequestSeed("medrubric writer seed", o.Seed)
	req := judge.Request{
		Judge: writer, PromptVersion: WriterPromptVersion, Schema: WriterSchema,
		Messages: WriterMessages(turns[:ti], turns[ti].User, evidence),
		Params:   modelapi.Params{Temperature: &temp}, Seed: &seed,
		Oracle: WriterOracle(id, ti+1, writer, o.Seed, turns[ti].Rubrics),
	}
	line := writtenLine{ID: id, Turn: ti + 1, Writer: writer}
	var reply WriterReply
	v, err := judge.Ask(ctx, models, req, &reply)
	line.Verdict = v
	switch {
	case err != nil && errors.Is(err, modelapi.ErrModelFailure):
		line.Skipped = modelapi.ReasonOf(err)
		return line, nil
	case err != nil:
		return line, fmt.Errorf("medrubric: item %s turn %d: writer %s: %w", id, ti+1, writer, err)
	case !v.Failed():
		line.Proposals = reply.Proposals(writer)
	}
	return line, nil
}

// Finish adds every unit's replies to the plan's sources (the version id
// is unchanged: it was derived before any call), merges the rubrics and
// plans one part. A writer that gave no usable reply at all, or a build
// that keeps no item, is bad input.
func (b Builder) Finish(ctx context.Context, env datasets.Env, plan datasets.Plan) (datasets.Plan, error) {
	o, err := planOptions(plan)
	if err != nil {
		return plan, err
	}
	out := plan
	if out.Sources, err = datasets.FinishSources(ctx, env, plan, IsGenerated); err != nil {
		return plan, err
	}
	rows, st, err := buildGenerated(ctx, env, out.Sources, o)
	if err != nil {
		return plan, err
	}
	for _, w := range o.Writers {
		if st.Replies[w] == 0 {
			return plan, &datasets.InputError{File: "params", Msg: fmt.Sprintf("writers: %s gave no usable reply to any of its %d requests (the first failure: %s)", w, st.Asked[w], st.FirstFailure[w])}
		}
	}
	if len(rows) == 0 {
		return plan, &datasets.InputError{File: "sources", Msg: fmt.Sprintf("no item kept an essential rubric in every turn (k=%d of %d writers)", o.K, len(o.Writers))}
	}
	out.Parts = []datasets.Part{datasets.OnePart("items", out.Sources, len(rows))}
	return out, nil
}

// GenerationStats count what the writers gave.
type GenerationStats struct {
	// Asked and Replies count each writer's requests and parsed replies;
	// FirstFailure is its first unusable reply's reason.
	Asked, Replies map[string]int
	FirstFailure   map[string]string
	// Dropped lists the items left out: a turn kept no essential rubric.
	Dropped []string
}

// buildGenerated merges the writers' proposals of every item's turns (see
// the package's generation notes).
func buildGenerated(ctx context.Context, env datasets.Env, srcs []catalog.Source, o Options) ([]schemas.MedRubricItem, GenerationStats, error) {
	st := GenerationStats{Asked: map[string]int{}, Replies: map[string]int{}, FirstFailure: map[string]string{}}
	items, err := readStaged(ctx, env, srcs, &Parser{RubricsOptional: true})
	if err != nil {
		return nil, st, err
	}
	writer := map[string]int{}
	for i, w := range o.Writers {
		writer[w] = i
	}
	type key struct {
		id   string
		turn int
	}
	props := map[key][][]Proposal{}
	for _, s := range srcs {
		if !IsGenerated(s.Name) {
			continue
		}
		err := datasets.EachStagedLine(ctx, env, s.SHA256, s.URI, func(n int, raw []byte) error {
			var l writtenLine
			if err := json.Unmarshal(raw, &l); err != nil {
				return &datasets.InputError{File: s.URI, Line: n, Msg: "not a JSON object: " + err.Error()}
			}
			wi, ok := writer[l.Writer]
			if !ok {
				return &datasets.InputError{File: s.URI, Line: n, Msg: fmt.Sprintf("rubrics from %s, which is not a writer of this build", l.Writer)}
			}
			st.Asked[l.Writer]++
			switch {
			case l.Skipped != "":
				if st.FirstFailure[l.Writer] == "" {
					st.FirstFailure[l.Writer] = fmt.Sprintf("item %s turn %d: %s", l.ID, l.Turn, l.Skipped)
				}
				return nil
			case l.Verdict.Failed():
				if st.FirstFailure[l.Writer] == "" {
					st.FirstFailure[l.Writer] = fmt.Sprintf("item %s turn %d: %s", l.ID, l.Turn, l.Verdict.Error)
				}
				return nil
			}
			st.Replies[l.Writer]++
			k := key{l.ID, l.Turn}
			if props[k] == nil {
				props[k] = make([][]Proposal, len(o.Writers))
			}
			props[k][wi] = append(props[k][wi], l.Proposals...)
			return nil
		})
		if err != nil {
			return nil, st, err
		}
	}
	var rows []schemas.MedRubricItem
	for _, it := range items {
		turns, err := Turns(it)
		if err != nil {
			return nil, st, err
		}
		kept, next := true, 1
		for ti := range turns {
			p := props[key{it.ID, ti + 1}]
			if p == nil {
				p = make([][]Proposal, len(o.Writers))
			}
			rubrics, err := Consensus(p, o.K, nil, o.Threshold)
			if err != nil {
				return nil, st, fmt.Errorf("medrubric: item %s turn %d: %w", it.ID, ti+1, err)
			}
			if !hasEssential(rubrics) {
				kept = false
				break
			}
			for i := range rubrics {
				rubrics[i].ID = fmt.Sprintf("r%d", next)
				next++
			}
			turns[ti].Rubrics = rubrics
		}
		if !kept {
			st.Dropped = append(st.Dropped, it.ID)
			continue
		}
		row, err := newItem(it.ID, it.Domain, it.Language, turns)
		if err != nil {
			return nil, st, fmt.Errorf("medrubric: item %s: %w", it.ID, err)
		}
		row.SourceFile, row.SourceLine = it.SourceFile, it.SourceLine
		rows = append(rows, row)
	}
	sort.Strings(st.Dropped)
	return rows, st, nil
}

func hasEssential(rubrics []schemas.MedRubric) bool {
	for _, r := range rubrics {
		if r.Category == string(scorer.Essential) {
			return true
		}
	}
	return false
}
