// Package bfcl builds the Berkeley Function Calling Leaderboard (BFCL v4)
// dataset: question files BFCL_v4_<category>.json and possible answers
// possible_answer/BFCL_v4_<category>.json, one JSON object a line, into one
// Parquet part per category.
package bfcl

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/source"
	"github.com/benchline/benchline/schemas"
)

// Name is the dataset name.
const Name = "bfcl"

// builderVersion changes whenever the rows written for the same input change.
const builderVersion = "1"

// Embedded is the source URI of the fixtures bundled in the binary: a dozen
// items written for benchline in BFCL's format (not BFCL's own data).
const Embedded = "embedded://bfcl"

//go:embed fixtures
var fixtures embed.FS

// Fixtures returns the bundled fixture files as a source Location.
func Fixtures() source.Location { return datasets.EmbeddedFixtures(fixtures, "fixtures", Embedded) }

// Categories are the BFCL v4 single-turn categories, probed by name at
// locations that cannot be listed (plain http URLs).
var Categories = []string{
	"simple_python", "simple_java", "simple_javascript", "multiple", "parallel", "parallel_multiple",
	"live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
	"irrelevance", "live_irrelevance", "live_relevance",
}

// HasGroundTruth reports whether items of a category carry possible answers
// (relevance and irrelevance categories do not).
func HasGroundTruth(category string) bool {
	return !strings.Contains(category, "relevance")
}

// Language returns the language a category's calls are checked in.
func Language(category string) string {
	switch {
	case strings.Contains(category, "javascript"):
		return "javascript"
	case strings.Contains(category, "java"):
		return "java"
	default:
		return "python"
	}
}

// Builder builds the bfcl dataset.
type Builder struct{}

var _ datasets.Builder = Builder{}

func (Builder) Name() string          { return Name }
func (Builder) Version() string       { return builderVersion }
func (Builder) Schema() schemas.Table { return schemas.BFCLItemTable }

// ConfigOf makes each category (a part's label) a config of the published
// dataset (datasets.Configured).
func (Builder) ConfigOf(label string) string { return label }

// Plan finds the category files, stages them, and validates every line.
func (b Builder) Plan(ctx context.Context, env datasets.Env, req datasets.Request) (datasets.Plan, error) {
	loc, err := datasets.Locate(ctx, env, req.Source, Embedded, Fixtures)
	if err != nil {
		return datasets.Plan{}, err
	}
	layout, err := Scan(ctx, loc, nil)
	if err != nil {
		return datasets.Plan{}, err
	}
	if len(layout.Cats) == 0 {
		msg := "no BFCL_v4_<category>.json files found of a category benchline supports"
		if s := datasets.SkipSummary(layout.Stats); s != "" {
			msg += " (" + s + ")"
		}
		return datasets.Plan{}, &datasets.InputError{File: loc.URI(""), Msg: msg}
	}
	var sources []catalog.Source
	var parts []datasets.Part
	for i, cat := range layout.Cats {
		q, err := datasets.Stage(ctx, env, loc, cat.Question)
		if err != nil {
			return datasets.Plan{}, err
		}
		sources = append(sources, q)
		p := datasets.Part{Index: i, Label: cat.Name, Inputs: []string{q.SHA256}}
		if cat.Answer != "" {
			a, err := datasets.Stage(ctx, env, loc, cat.Answer)
			if err != nil {
				return datasets.Plan{}, err
			}
			sources = append(sources, a)
			p.Inputs = append(p.Inputs, a.SHA256)
		}
		// Validate now, before any part is written, so bad input never
		// leaves a partial version behind.
		items, err := readCategory(ctx, env, cat.Name, p.Inputs, sources[len(sources)-len(p.Inputs):])
		if err != nil {
			return datasets.Plan{}, err
		}
		p.Rows = int64(len(items))
		parts = append(parts, p)
	}
	plan := datasets.NewPlan(b, sources, nil, parts)
	if len(layout.Stats) > 0 {
		plan.Stats = layout.Stats
	}
	return plan, nil
}

// WritePart writes one category.
func (b Builder) WritePart(ctx context.Context, env datasets.Env, plan datasets.Plan, p datasets.Part, key string, progress func(int64)) (pq.FileInfo, error) {
	srcs, err := datasets.PartSources(plan, p)
	if err != nil {
		return pq.FileInfo{}, err
	}
	items, err := readCategory(ctx, env, p.Label, p.Inputs, srcs)
	if err != nil {
		return pq.FileInfo{}, err
	}
	return datasets.WriteRows(ctx, env, key, items, map[string]string{
		"benchline.dataset": Name, "benchline.version": plan.Version, "benchline.category": p.Label,
	}, progress)
}

type question struct {
	ID       string            `json:"id"`
	Question []json.RawMessage `json:"question"`
	Function []json.RawMessage `json:"function"`
}

type answer struct {
	ID          string          `json:"id"`
	GroundTruth json.RawMessage `json:"ground_truth"`
}

// readCategory parses and cross-checks one category's staged files. inputs
// are sha256s (question first, then answers); srcs give their URIs for errors.
func readCategory(ctx context.Context, env datasets.Env, cat string, inputs []string, srcs []catalog.Source) ([]schemas.BFCLItem, error) {
	if len(srcs) != len(inputs) {
		return nil, fmt.Errorf("bfcl: part %s: plan names %d inputs but %d sources", cat, len(inputs), len(srcs))
	}
	var items []schemas.BFCLItem
	index := map[string]int{}
	qURI := srcs[0].URI
	err := datasets.EachStagedLine(ctx, env, inputs[0], qURI, func(line int, raw []byte) error {
		var q question
		if err := json.Unmarshal(raw, &q); err != nil {
			return &datasets.InputError{File: qURI, Line: line, Msg: "not a JSON object: " + err.Error()}
		}
		switch {
		case q.ID == "":
			return &datasets.InputError{File: qURI, Line: line, Msg: `missing "id"`}
		case len(q.Question) == 0:
			return &datasets.InputError{File: qURI, Line: line, Msg: fmt.Sprintf(`item %s: "question" must be a non-empty list of turns`, q.ID)}
		case q.Function == nil:
			return &datasets.InputError{File: qURI, Line: line, Msg: fmt.Sprintf(`item %s: missing "function"`, q.ID)}
		}
		if prev, dup := index[q.ID]; dup {
			return &datasets.InputError{File: qURI, Line: line, Msg: fmt.Sprintf("duplicate id %s (first at line %d)", q.ID, items[prev].SourceLine)}
		}
		for t, turn := range q.Question {
			var msgs []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			}
			if err := json.Unmarshal(turn, &msgs); err != nil {
				return &datasets.InputError{File: qURI, Line: line, Msg: fmt.Sprintf("item %s: turn %d is not a list of {role, content} messages: %v", q.ID, t, err)}
			}
		}
		turns, _ := json.Marshal(q.Question)
		funcs, _ := json.Marshal(q.Function)
		index[q.ID] = len(items)
		items = append(items, schemas.BFCLItem{
			ID: q.ID, Category: cat, Language: Language(cat),
			TurnsJSON: string(turns), FunctionsJSON: string(funcs),
			NumTurns: int32(len(q.Question)), NumFunctions: int32(len(q.Function)),
			SourceFile: qURI, SourceLine: int32(line),
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(inputs) < 2 {
		return items, nil
	}
	aURI := srcs[1].URI
	seen := map[string]int{}
	err = datasets.EachStagedLine(ctx, env, inputs[1], aURI, func(line int, raw []byte) error {
		var a answer
		if err := json.Unmarshal(raw, &a); err != nil {
			return &datasets.InputError{File: aURI, Line: line, Msg: "not a JSON object: " + err.Error()}
		}
		i, ok := index[a.ID]
		if !ok {
			return &datasets.InputError{File: aURI, Line: line, Msg: fmt.Sprintf("answer id %q has no question in %s", a.ID, qURI)}
		}
		if prev, dup := seen[a.ID]; dup {
			return &datasets.InputError{File: aURI, Line: line, Msg: fmt.Sprintf("duplicate answer id %s (first at line %d)", a.ID, prev)}
		}
		seen[a.ID] = line
		var gt []map[string]map[string]json.RawMessage
		if err := json.Unmarshal(a.GroundTruth, &gt); err != nil || len(gt) == 0 {
			return &datasets.InputError{File: aURI, Line: line, Msg: fmt.Sprintf(`answer %s: "ground_truth" must be a non-empty list of {function: {param: [values]}}`, a.ID)}
		}
		s := string(a.GroundTruth)
		items[i].GroundTruthJSON = &s
		return nil
	})
	if err != nil {
		return nil, err
	}
	if HasGroundTruth(cat) {
		for _, it := range items {
			if it.GroundTruthJSON == nil {
				return nil, &datasets.InputError{File: qURI, Line: int(it.SourceLine), Msg: fmt.Sprintf("item %s has no possible answer in %s", it.ID, aURI)}
			}
		}
	}
	return items, nil
}

// Card renders the dataset card.
func (Builder) Card(m catalog.Manifest) string {
	return datasets.RenderCard(datasets.CardText{
		License:    "apache-2.0",
		PrettyName: "BFCL v4 (benchline build)",
		Description: "Berkeley Function Calling Leaderboard v4 items (single-turn AST and relevance categories), one row per item, " +
			"built by benchline. Columns: id, category, language, turns_json, functions_json, ground_truth_json (null for " +
			"relevance/irrelevance), num_turns, num_functions, source_file, source_line.\n\n",
		Provenance: "\nBFCL data is Apache-2.0, from ShishirPatil/gorilla (berkeley-function-call-leaderboard). The bundled " +
			"demo fixtures (embedded://bfcl) are written for benchline in BFCL's format.\n",
	}, m)
}
