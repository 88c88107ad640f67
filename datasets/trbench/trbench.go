// Package trbench builds TRBench-style pairwise critique tasks for
// function-calling reward models: each row is one (chosen, rejected) pair of
// replies to a BFCL-format item, with the GenRM critique prompt in both
// answer orders (see schemas.TRBenchPair). Pairs come from one of:
//
//   - BFCL-format items with a ground truth plus recorded failing outputs
//     (responses.jsonl at the source, one {"id", "model", "response"} a
//     line): chosen is the ground truth rendered as <tool_call> blocks,
//     rejected the failing output, whose BFCL checker error type becomes
//     reject_response_reward_message. An output the checker accepts is bad
//     input.
//   - a toolpref dataset version in the store (param toolpref=<version> or
//     "latest"): its chosen and rejected replies and scores.
package trbench

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/toolpref"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/source"
	"github.com/benchline/benchline/schemas"
	judge "github.com/benchline/benchline/scorers/trbench"
)

// Name is the dataset name.
const Name = "trbench"

// builderVersion changes whenever the rows written for the same input change.
// 2: reference_response. 3: BFCL items bfcl.Check leaves out are skipped
// and counted (with their responses) instead of failing the build or
// paired.
const builderVersion = "3"

// Embedded is the source URI of the bundled fixtures: BFCL-format items and
// failing outputs written for benchline (not TRBench's or BFCL's data).
const Embedded = "embedded://trbench"

// ResponsesFile holds the failing outputs at a BFCL-format source.
const ResponsesFile = "responses.jsonl"

//go:embed fixtures
var fixtures embed.FS

// Fixtures returns the bundled fixture files as a source Location.
func Fixtures() source.Location { return datasets.EmbeddedFixtures(fixtures, "fixtures", Embedded) }

// Builder builds the trbench dataset.
type Builder struct{}

var _ datasets.Builder = Builder{}

func (Builder) Name() string          { return Name }
func (Builder) Version() string       { return builderVersion }
func (Builder) Schema() schemas.Table { return schemas.TRBenchPairTable }

// Plan stages (or pins) the inputs, builds every row to validate them, and
// plans one part.
func (b Builder) Plan(ctx context.Context, env datasets.Env, req datasets.Request) (datasets.Plan, error) {
	var srcs []catalog.Source
	var params map[string]string
	var skipped map[string]int64
	for k := range req.Params {
		if k != "toolpref" {
			return datasets.Plan{}, &datasets.InputError{File: "params", Msg: fmt.Sprintf("unknown parameter %q (have toolpref)", k)}
		}
	}
	if ref, ok := req.Params["toolpref"]; ok {
		if req.Source != "" {
			return datasets.Plan{}, &datasets.InputError{File: "params", Msg: "give either a source or toolpref=<version>, not both"}
		}
		m, err := catalog.Resolve(ctx, env.Store, toolpref.Name+"@"+ref)
		if err != nil {
			return datasets.Plan{}, &datasets.InputError{File: "params", Msg: fmt.Sprintf("toolpref=%s: %v", ref, err)}
		}
		if m.Schema != schemas.ToolPrefPairTable {
			return datasets.Plan{}, &datasets.InputError{File: "params", Msg: fmt.Sprintf("toolpref@%s has schema %s v%d, want %s v%d", m.Version, m.Schema.Name, m.Schema.Version, schemas.ToolPrefPairTable.Name, schemas.ToolPrefPairTable.Version)}
		}
		params = map[string]string{"toolpref": m.Version} // pinned
		for _, f := range m.Files {
			key := catalog.Dir(m.Name, m.Version) + f.Path
			srcs = append(srcs, catalog.Source{Name: "toolpref/" + f.Path, URI: "store:" + key, SHA256: f.SHA256, Bytes: f.Bytes})
		}
	} else {
		loc, err := datasets.Locate(ctx, env, req.Source, Embedded, Fixtures)
		if err != nil {
			return datasets.Plan{}, err
		}
		if srcs, skipped, err = toolpref.StageItems(ctx, env, loc, ResponsesFile); err != nil {
			return datasets.Plan{}, err
		}
		if !hasSource(srcs, ResponsesFile) {
			return datasets.Plan{}, &datasets.InputError{File: loc.URI(ResponsesFile), Msg: "missing: a BFCL-format source needs the failing outputs to pair with the ground truth"}
		}
	}
	if skipped == nil {
		skipped = map[string]int64{}
	}
	rows, err := build(ctx, env, srcs, params, skipped)
	if err != nil {
		return datasets.Plan{}, err
	}
	if len(rows) == 0 {
		return datasets.Plan{}, &datasets.InputError{File: "sources", Msg: "no pairs"}
	}
	plan := datasets.NewPlan(b, srcs, params, []datasets.Part{datasets.OnePart("pairs", srcs, len(rows))})
	if len(skipped) > 0 {
		plan.Stats = skipped
	}
	return plan, nil
}

func hasSource(srcs []catalog.Source, name string) bool {
	for _, s := range srcs {
		if s.Name == name {
			return true
		}
	}
	return false
}

// Build computes the rows from the plan's sources.
func Build(ctx context.Context, env datasets.Env, srcs []catalog.Source, params map[string]string) ([]schemas.TRBenchPair, error) {
	return build(ctx, env, srcs, params, nil)
}

// build is Build, counting the BFCL items it leaves out in skipped (when
// not nil; see toolpref.ReadItems).
func build(ctx context.Context, env datasets.Env, srcs []catalog.Source, params map[string]string, skipped map[string]int64) ([]schemas.TRBenchPair, error) {
	var rows []schemas.TRBenchPair
	var err error
	if v, ok := params["toolpref"]; ok {
		rows, err = fromToolPref(ctx, env, srcs, v)
	} else {
		rows, err = fromFailing(ctx, env, srcs, skipped)
	}
	if err != nil {
		return nil, err
	}
	for i := range rows {
		rows[i].UUID = int64(i)
	}
	return rows, nil
}

// newPair fills the shared fields and the critique prompts of both orders.
func newPair(messagesJSON, toolsJSON, chosen, rejected string) (schemas.TRBenchPair, error) {
	var msgs []judge.Message
	if err := json.Unmarshal([]byte(messagesJSON), &msgs); err != nil {
		return schemas.TRBenchPair{}, fmt.Errorf("messages: %v", err)
	}
	sys, err := judge.SystemWithTools(toolsJSON)
	if err != nil {
		return schemas.TRBenchPair{}, err
	}
	chat := append([]judge.Message{{Role: "system", Content: sys}}, msgs...)
	b, _ := json.Marshal(chat)
	return schemas.TRBenchPair{
		ChatHistoryJSON: string(b), ToolsJSON: toolsJSON, ChosenResponse: chosen, RejectResponse: rejected,
		PromptOrder1: judge.CritiquePrompt(chat, chosen, rejected), GroundTruthOrder1: "1",
		PromptOrder2: judge.CritiquePrompt(chat, rejected, chosen), GroundTruthOrder2: "2",
	}, nil
}

func fromFailing(ctx context.Context, env datasets.Env, srcs []catalog.Source, skipped map[string]int64) ([]schemas.TRBenchPair, error) {
	items, left, err := toolpref.ReadItems(ctx, env, srcs, skipped)
	if err != nil {
		return nil, err
	}
	byID := map[string]*toolpref.Item{}
	for id := range left {
		byID[id] = nil // its responses are left out with it
	}
	for _, it := range items {
		byID[it.ID] = it
	}
	var rows []schemas.TRBenchPair
	seen := map[string]int{}
	for _, s := range srcs {
		if s.Name != ResponsesFile {
			continue
		}
		err := toolpref.EachLine(ctx, env, s, func(line int, raw []byte) error {
			var r struct {
				ID       string  `json:"id"`
				Model    string  `json:"model"`
				Response *string `json:"response"`
			}
			if err := json.Unmarshal(raw, &r); err != nil {
				return &datasets.InputError{File: s.URI, Line: line, Msg: "not a JSON object: " + err.Error()}
			}
			it, ok := byID[r.ID]
			switch {
			case r.ID == "":
				return &datasets.InputError{File: s.URI, Line: line, Msg: `missing "id"`}
			case !ok:
				return &datasets.InputError{File: s.URI, Line: line, Msg: fmt.Sprintf("response id %q names no item with a ground truth", r.ID)}
			case strings.TrimSpace(r.Model) == "":
				return &datasets.InputError{File: s.URI, Line: line, Msg: fmt.Sprintf(`response for %s: missing "model"`, r.ID)}
			case r.Response == nil:
				return &datasets.InputError{File: s.URI, Line: line, Msg: fmt.Sprintf(`response for %s: missing "response"`, r.ID)}
			case it == nil:
				return nil
			}
			_, errType, _ := it.Judge(*r.Response)
			if errType == "" {
				return &datasets.InputError{File: s.URI, Line: line, Msg: fmt.Sprintf("response for %s passes the BFCL checker; a pair needs a failing output", r.ID)}
			}
			gt, err := it.GroundTruthText()
			if err != nil {
				return fmt.Errorf("trbench: item %s: %w", it.ID, err)
			}
			p, err := newPair(it.MessagesJSON, it.FunctionsJSON, gt, *r.Response)
			if err != nil {
				return &datasets.InputError{File: it.File, Line: it.Line, Msg: err.Error()}
			}
			seen[r.ID]++
			p.PairID = fmt.Sprintf("%s/%d", r.ID, seen[r.ID])
			p.RawID, p.TaskSource, p.ErrorType = it.ID, it.Category, errType
			p.ChosenResponseFrom, p.ChosenReward, p.ChosenRewardMsg = "ground truth", 1, "ground truth"
			p.ReferenceResponse = gt
			p.RejectResponseFrom, p.RejectReward, p.RejectRewardMsg = r.Model, 0, errType
			p.PairSource, p.SourceFile, p.SourceLine = "bfcl_failing", s.URI, int32(line)
			rows = append(rows, p)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return rows, nil
}

func fromToolPref(ctx context.Context, env datasets.Env, srcs []catalog.Source, version string) ([]schemas.TRBenchPair, error) {
	var rows []schemas.TRBenchPair
	for _, s := range srcs {
		key := strings.TrimPrefix(s.URI, "store:")
		prs, err := pq.ReadAll[schemas.ToolPrefPair](ctx, env.Store, key)
		if err != nil {
			return nil, fmt.Errorf("trbench: read toolpref@%s %s: %w", version, s.Name, err)
		}
		for _, r := range prs {
			p, err := newPair(r.MessagesJSON, r.ToolsJSON, r.Chosen, r.Rejected)
			if err == nil {
				p.ReferenceResponse, err = referenceText(r)
			}
			if err != nil {
				return nil, &datasets.InputError{File: s.URI, Msg: fmt.Sprintf("pair %s: %v", r.PairID, err)}
			}
			p.PairID, p.RawID, p.TaskSource, p.ErrorType = r.PairID, r.ItemID, r.Category, r.RejectedError
			p.ChosenResponseFrom, p.ChosenReward, p.ChosenRewardMsg = r.ChosenSource, r.ChosenScore, msgOr(r.ChosenError, "valid")
			p.RejectResponseFrom, p.RejectReward, p.RejectRewardMsg = r.RejectedSource, r.RejectedScore, msgOr(r.RejectedError, "valid")
			p.PairSource = "toolpref@" + version
			rows = append(rows, p)
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].PairID < rows[j].PairID })
	return rows, nil
}

// referenceText renders a toolpref pair's ground truth as the correct
// reply, the way the failing-output pairs render their chosen reply.
func referenceText(r schemas.ToolPrefPair) (string, error) {
	line, err := json.Marshal(map[string]any{"id": r.ItemID, "question": []json.RawMessage{json.RawMessage(r.MessagesJSON)},
		"function": json.RawMessage(r.ToolsJSON)})
	if err != nil {
		return "", fmt.Errorf("item %s: %v", r.ItemID, err)
	}
	it, err := toolpref.NewItem(r.Category, string(line), r.GroundTruthJSON)
	if err != nil {
		return "", err
	}
	return it.GroundTruthText()
}

func msgOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// WritePart rebuilds the rows and writes them.
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
		PrettyName: "TRBench-style function-calling reward-model pairs (benchline build)",
		Description: "Pairwise critique tasks for function-calling reward models in the manner of TRBench-BFCL (ToolRM): " +
			"a conversation with tools, a chosen and a rejected reply, and a GenRM critique prompt in both answer orders " +
			"(prompt_order1 with the chosen reply first, ground truth \"1\"; prompt_order2 swapped, \"2\"), " +
			"and reference_response, the item's ground truth rendered as a reply (for the baseline reward models). " +
			"TRBench holds every pair twice; benchline keeps both orders in one row so shards never split a pair. " +
			"The critique prompt wording is benchline's own. Score with `benchline eval --dataset trbench --model <judge>`: " +
			"metrics w_avg (both orders right), acc_order1, acc_order2, avg; categories are task sources. " +
			"A scalar reward model (`--model` one of a provider's reward_models) scores chosen and rejected once per pair " +
			"and is right iff chosen > rejected (ties wrong); the four metrics are then equal.\n\n",
	}, m)
}
