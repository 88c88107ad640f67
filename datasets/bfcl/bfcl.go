// Package bfcl builds the Berkeley Function Calling Leaderboard (BFCL v4)
// dataset: question files BFCL_v4_<category>.json and possible answers
// possible_answer/BFCL_v4_<category>.json, one JSON object a line, into one
// Parquet part per category. An item the scorer could not evaluate is
// skipped and counted by reason (Check); a file that is bad as a whole
// fails the build naming the file and the line.
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
// 2: items Check leaves out (e.g. a ground truth calling a function the
// item does not define) are skipped and counted instead of written.
const builderVersion = "2"

// Embedded is the source URI of the fixtures bundled in the binary: a dozen
// items written for benchline in BFCL's format (not BFCL's own data).
const Embedded = "embedded://bfcl"

//go:embed fixtures
var fixtures embed.FS

// Fixtures returns the bundled fixture files as a source Location.
func Fixtures() source.Location { return datasets.EmbeddedFixtures(fixtures, "fixtures", Embedded) }

// Categories are the BFCL v4 single-turn categories, the ones benchline
// builds.
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
	for _, cat := range layout.Cats {
		q, err := datasets.Stage(ctx, env, loc, cat.Question)
		if err != nil {
			return datasets.Plan{}, err
		}
		sources = append(sources, q)
		p := datasets.Part{Index: len(parts), Label: cat.Name, Inputs: []string{q.SHA256}}
		if cat.Answer != "" {
			a, err := datasets.Stage(ctx, env, loc, cat.Answer)
			if err != nil {
				return datasets.Plan{}, err
			}
			sources = append(sources, a)
			p.Inputs = append(p.Inputs, a.SHA256)
		}
		// Validate now, before any part is written, so bad input never
		// leaves a partial version behind. Items Check leaves out are
		// counted in the plan's Stats.
		items, err := readCategory(ctx, env, cat.Name, p.Inputs, sources[len(sources)-len(p.Inputs):], layout.Stats)
		if err != nil {
			return datasets.Plan{}, err
		}
		if len(items) == 0 {
			continue // every item skipped: no empty part
		}
		p.Rows = int64(len(items))
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return datasets.Plan{}, &datasets.InputError{File: loc.URI(""), Msg: "no item to build (" + datasets.SkipSummary(layout.Stats) + ")"}
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
	items, err := readCategory(ctx, env, p.Label, p.Inputs, srcs, map[string]int64{})
	if err != nil {
		return pq.FileInfo{}, err
	}
	if int64(len(items)) != p.Rows {
		return pq.FileInfo{}, fmt.Errorf("bfcl: part %s: read %d items, plan says %d", p.Label, len(items), p.Rows)
	}
	return datasets.WriteRows(ctx, env, key, items, map[string]string{
		"benchline.dataset": Name, "benchline.version": plan.Version, "benchline.category": p.Label,
	}, progress)
}

type answer struct {
	ID          string          `json:"id"`
	GroundTruth json.RawMessage `json:"ground_truth"`
}

// readCategory parses and cross-checks one category's staged files. inputs
// are sha256s (question first, then answers); srcs give their URIs for
// errors. Items Check leaves out are not returned but counted in skipped
// (datasets.SkipItem); what is wrong with a file as a whole is an
// *datasets.InputError naming the file and the line.
func readCategory(ctx context.Context, env datasets.Env, cat string, inputs []string, srcs []catalog.Source, skipped map[string]int64) ([]schemas.BFCLItem, error) {
	if len(srcs) != len(inputs) {
		return nil, fmt.Errorf("bfcl: part %s: plan names %d inputs but %d sources", cat, len(inputs), len(srcs))
	}
	type line struct {
		Raw
		n int
	}
	var lines []line
	index := map[string]int{}
	qURI := srcs[0].URI
	err := datasets.EachStagedLine(ctx, env, inputs[0], qURI, func(n int, raw []byte) error {
		var q Raw
		if err := json.Unmarshal(raw, &q); err != nil {
			return &datasets.InputError{File: qURI, Line: n, Msg: "not a JSON object: " + err.Error()}
		}
		if q.ID == "" {
			return &datasets.InputError{File: qURI, Line: n, Msg: `missing "id"`}
		}
		if prev, dup := index[q.ID]; dup {
			return &datasets.InputError{File: qURI, Line: n, Msg: fmt.Sprintf("duplicate id %s (first at line %d)", q.ID, lines[prev].n)}
		}
		index[q.ID] = len(lines)
		lines = append(lines, line{q, n})
		return nil
	})
	if err != nil {
		return nil, err
	}
	aURI := ""
	if len(inputs) > 1 {
		aURI = srcs[1].URI
		seen := map[string]int{}
		err = datasets.EachStagedLine(ctx, env, inputs[1], aURI, func(n int, raw []byte) error {
			var a answer
			if err := json.Unmarshal(raw, &a); err != nil {
				return &datasets.InputError{File: aURI, Line: n, Msg: "not a JSON object: " + err.Error()}
			}
			i, ok := index[a.ID]
			if !ok {
				return &datasets.InputError{File: aURI, Line: n, Msg: fmt.Sprintf("answer id %q has no question in %s", a.ID, qURI)}
			}
			if prev, dup := seen[a.ID]; dup {
				return &datasets.InputError{File: aURI, Line: n, Msg: fmt.Sprintf("duplicate answer id %s (first at line %d)", a.ID, prev)}
			}
			seen[a.ID] = n
			lines[i].GroundTruth = a.GroundTruth
			if lines[i].GroundTruth == nil {
				lines[i].GroundTruth = json.RawMessage("null") // present, and malformed
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	items := make([]schemas.BFCLItem, 0, len(lines))
	for _, l := range lines {
		if l.GroundTruth == nil && HasGroundTruth(cat) {
			where := aURI
			if where == "" {
				where = "its possible-answer file"
			}
			return nil, &datasets.InputError{File: qURI, Line: l.n, Msg: fmt.Sprintf("item %s has no possible answer in %s", l.ID, where)}
		}
		it, defect := Check(l.Raw)
		if defect != nil {
			defect.Skip(skipped, cat)
			continue
		}
		turns, _ := json.Marshal(l.Question)
		funcs, _ := json.Marshal(l.Function)
		row := schemas.BFCLItem{
			ID: l.ID, Category: cat, Language: Language(cat),
			TurnsJSON: string(turns), FunctionsJSON: string(funcs),
			NumTurns: int32(len(it.Turns)), NumFunctions: int32(len(it.Funcs)),
			SourceFile: qURI, SourceLine: int32(l.n),
		}
		if l.GroundTruth != nil {
			s := string(l.GroundTruth)
			row.GroundTruthJSON = &s
		}
		items = append(items, row)
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
