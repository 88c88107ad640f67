// Package ifevalcode builds the IFEvalCode dataset (CSJianYang/IFEvalCode):
// JSON-lines files with the original's fields (english_question,
// chinese_question, programming_language, check_correctness,
// check_instruction), one Parquet part per programming language.
//
// The bundled fixtures (embedded://ifevalcode) are items written for
// benchline in the original's format, not the original's data: three per
// language, each with a reference solution that passes both checks. Their
// readable sources are under testdata/src; fixtures/IFEvalCode.jsonl is
// generated from them (go test ./datasets/ifevalcode -run TestFixtures -update).
package ifevalcode

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/source"
	"github.com/benchline/benchline/schemas"
)

// Name is the dataset name.
const Name = "ifevalcode"

// builderVersion changes whenever the rows written for the same input change.
const builderVersion = "1"

// Embedded is the source URI of the fixtures bundled in the binary.
const Embedded = "embedded://ifevalcode"

// DefaultFile is the original's file name, probed at locations that cannot
// be listed (plain http URLs).
const DefaultFile = "IFEvalCode.jsonl"

//go:embed fixtures
var fixtures embed.FS

// Fixtures returns the bundled fixture files as a source Location.
func Fixtures() source.Location { return datasets.EmbeddedFixtures(fixtures, "fixtures", Embedded) }

// Languages are the original's programming_language values, in the order of
// its results table.
var Languages = []string{"python", "java", "cpp", "csharp", "typescript", "javascript", "php", "shell"}

// Builder builds the ifevalcode dataset.
type Builder struct{}

var _ datasets.Builder = Builder{}

// Name returns the dataset name.
func (Builder) Name() string { return Name }

// ConfigOf makes each programming language (a part's label) a config of the published
// dataset (datasets.Configured).
func (Builder) ConfigOf(label string) string { return label }

// Version returns the builder version.
func (Builder) Version() string { return builderVersion }

// Schema returns the table the builder writes.
func (Builder) Schema() schemas.Table { return schemas.IFEvalCodeItemTable }

// Plan finds the *.jsonl files, stages them, validates every line, and
// plans one part per language present. Every part reads all the files and
// keeps its language's rows.
func (b Builder) Plan(ctx context.Context, env datasets.Env, req datasets.Request) (datasets.Plan, error) {
	loc, err := datasets.Locate(ctx, env, req.Source, Embedded, Fixtures)
	if err != nil {
		return datasets.Plan{}, err
	}
	names, err := discover(ctx, loc)
	if err != nil {
		return datasets.Plan{}, err
	}
	if len(names) == 0 {
		return datasets.Plan{}, &datasets.InputError{File: loc.URI(""), Msg: "no *.jsonl files found (the original's is " + DefaultFile + ")"}
	}
	sources, err := datasets.StageAll(ctx, env, loc, names)
	if err != nil {
		return datasets.Plan{}, err
	}
	// Validate now, before any part is written, so bad input never
	// leaves a partial version behind.
	items, err := readAll(ctx, env, sources)
	if err != nil {
		return datasets.Plan{}, err
	}
	count := map[string]int64{}
	for _, it := range items {
		count[it.ProgrammingLanguage]++
	}
	inputs := datasets.Inputs(sources)
	var parts []datasets.Part
	for _, l := range Languages {
		if count[l] > 0 {
			parts = append(parts, datasets.Part{Index: len(parts), Label: l, Inputs: inputs, Rows: count[l]})
		}
	}
	return datasets.NewPlan(b, sources, nil, parts), nil
}

// PublishedDirs are the folders of the original's repository that hold
// its benchmark files (data/benchmark/*.jsonl), tried in order: a --source
// naming the repository or its data/ folder reads only them.
var PublishedDirs = []string{"data/benchmark/", "benchmark/"}

// discover lists the location's .jsonl files (sorted): those of the first
// of PublishedDirs that holds any, else every .jsonl file below the
// location. Where listing is impossible it probes the original's file
// name, at the top and in PublishedDirs.
func discover(ctx context.Context, loc source.Location) ([]string, error) {
	names, err := loc.List(ctx)
	if errors.Is(err, source.ErrNotListable) {
		probe := []string{DefaultFile}
		for _, d := range PublishedDirs {
			probe = append(probe, d+DefaultFile)
		}
		found, err := source.Probe(ctx, loc, probe)
		if err != nil || len(found) == 0 {
			return found, err
		}
		return found[:1], nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		if strings.HasSuffix(n, ".jsonl") {
			out = append(out, n)
		}
	}
	for _, d := range PublishedDirs {
		var in []string
		for _, n := range out {
			if rest, ok := strings.CutPrefix(n, d); ok && !strings.Contains(rest, "/") {
				in = append(in, n)
			}
		}
		if len(in) > 0 {
			out = in
			break
		}
	}
	sort.Strings(out)
	return out, nil
}

// WritePart writes one language's rows.
func (b Builder) WritePart(ctx context.Context, env datasets.Env, plan datasets.Plan, p datasets.Part, key string, progress func(int64)) (pq.FileInfo, error) {
	srcs, err := datasets.PartSources(plan, p)
	if err != nil {
		return pq.FileInfo{}, err
	}
	all, err := readAll(ctx, env, srcs)
	if err != nil {
		return pq.FileInfo{}, err
	}
	var items []schemas.IFEvalCodeItem
	for _, it := range all {
		if it.ProgrammingLanguage == p.Label {
			items = append(items, it)
		}
	}
	return datasets.WriteRows(ctx, env, key, items, map[string]string{
		"benchline.dataset": Name, "benchline.version": plan.Version, "benchline.language": p.Label,
	}, progress)
}

// line is one source line, with the original's field names. Pointers tell
// a missing field from an empty one.
type line struct {
	ID                  json.RawMessage `json:"id"`
	ProgrammingLanguage *string         `json:"programming_language"`
	EnglishQuestion     *string         `json:"english_question"`
	ChineseQuestion     *string         `json:"chinese_question"`
	CheckCorrectness    *string         `json:"check_correctness"`
	CheckInstruction    *string         `json:"check_instruction"`
	ReferenceSolution   *string         `json:"reference_solution"`
	Constraints         []string        `json:"constraints"`
}

// readAll parses and validates every line of the staged sources, in order.
func readAll(ctx context.Context, env datasets.Env, srcs []catalog.Source) ([]schemas.IFEvalCodeItem, error) {
	var items []schemas.IFEvalCodeItem
	seen := map[string]string{} // id -> file:line
	for _, src := range srcs {
		rc, err := datasets.OpenStaged(ctx, env, src.SHA256)
		if err != nil {
			return nil, err
		}
		items, err = readItems(rc, src.Name, src.URI, seen, items)
		rc.Close()
		if err != nil {
			return nil, err
		}
	}
	return items, nil
}

// ReadItems parses and validates one JSON-lines file in the original's
// format (name is its file name, uri its location for errors and
// provenance). Bad lines are reported as *datasets.InputError.
func ReadItems(r io.Reader, name, uri string) ([]schemas.IFEvalCodeItem, error) {
	return readItems(r, name, uri, map[string]string{}, nil)
}

// FixtureItems returns the bundled fixture items.
func FixtureItems() ([]schemas.IFEvalCodeItem, error) {
	f, err := fixtures.Open("fixtures/" + DefaultFile)
	if err != nil {
		return nil, fmt.Errorf("ifevalcode: %w", err)
	}
	defer f.Close()
	return ReadItems(f, DefaultFile, Embedded+"/"+DefaultFile)
}

func readItems(r io.Reader, name, uri string, seen map[string]string, items []schemas.IFEvalCodeItem) ([]schemas.IFEvalCodeItem, error) {
	stem := strings.TrimSuffix(path.Base(name), ".jsonl")
	err := datasets.EachLine(r, uri, func(n int, raw []byte) error {
		it, perr := parseLine(raw, uri, stem, n)
		if perr != nil {
			return perr
		}
		if prev, dup := seen[it.ID]; dup {
			return &datasets.InputError{File: uri, Line: n, Msg: fmt.Sprintf("duplicate id %s (first at %s)", it.ID, prev)}
		}
		seen[it.ID] = fmt.Sprintf("%s:%d", uri, n)
		items = append(items, it)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return items, nil
}

func parseLine(raw []byte, uri, stem string, n int) (schemas.IFEvalCodeItem, error) {
	bad := func(format string, args ...any) (schemas.IFEvalCodeItem, error) {
		return schemas.IFEvalCodeItem{}, &datasets.InputError{File: uri, Line: n, Msg: fmt.Sprintf(format, args...)}
	}
	var l line
	if err := json.Unmarshal(raw, &l); err != nil {
		return bad("not a JSON object: %v", err)
	}
	id, err := itemID(l.ID)
	if err != nil {
		return bad("%v", err)
	}
	if id == "" {
		id = fmt.Sprintf("%s-%d", stem, n)
	}
	for _, f := range []struct {
		name string
		v    *string
	}{
		{"programming_language", l.ProgrammingLanguage},
		{"english_question", l.EnglishQuestion},
		{"chinese_question", l.ChineseQuestion},
		{"check_correctness", l.CheckCorrectness},
		{"check_instruction", l.CheckInstruction},
	} {
		if f.v == nil {
			return bad("item %s: missing %q", id, f.name)
		}
		if strings.TrimSpace(*f.v) == "" {
			return bad("item %s: %q is empty", id, f.name)
		}
	}
	pl := *l.ProgrammingLanguage
	known := false
	for _, k := range Languages {
		known = known || k == pl
	}
	if !known {
		return bad("item %s: unknown programming_language %q (want one of %s)", id, pl, strings.Join(Languages, ", "))
	}
	if !strings.Contains(*l.CheckInstruction, "def check_instruction") {
		return bad("item %s: check_instruction does not define check_instruction(response)", id)
	}
	it := schemas.IFEvalCodeItem{
		ID: id, ProgrammingLanguage: pl,
		EnglishQuestion: *l.EnglishQuestion, ChineseQuestion: *l.ChineseQuestion,
		CheckCorrectness: *l.CheckCorrectness, CheckInstruction: *l.CheckInstruction,
		ReferenceSolution: l.ReferenceSolution,
		SourceFile:        uri, SourceLine: int32(n),
	}
	if l.Constraints != nil {
		b, _ := json.Marshal(l.Constraints)
		s := string(b)
		it.ConstraintsJSON = &s
	}
	return it, nil
}

// itemID returns the text of a string or integer id ("" when absent/null).
func itemID(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if strings.TrimSpace(s) == "" {
			return "", errors.New(`"id" is an empty string`)
		}
		return s, nil
	}
	var num json.Number
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&num); err == nil && !strings.ContainsAny(num.String(), ".eE") {
		return num.String(), nil
	}
	return "", fmt.Errorf(`"id" must be a string or an integer, got %s`, raw)
}

// Card renders the dataset card.
func (Builder) Card(m catalog.Manifest) string {
	return datasets.RenderCard(datasets.CardText{
		PrettyName: "IFEvalCode (benchline build)",
		Description: "IFEvalCode items (controlled code generation: correctness and instruction following), one row per item, " +
			"one data file per programming language, built by benchline. Columns: id, programming_language, " +
			"english_question, chinese_question, check_correctness (test harness in the target language), " +
			"check_instruction (Python check_instruction(response)), reference_solution (a reply passing both checks; " +
			"null when the source has none), constraints_json, source_file, source_line.\n\n" +
			"The prompt is a question plus the original's fixed suffix; see docs/benchmarks/ifevalcode.md. " +
			"Score replies with `benchline score ifevalcode` (both checks run in the sandbox).\n\n",
		Provenance: "\nIFEvalCode is from CSJianYang/IFEvalCode (arXiv 2507.22462). The bundled demo fixtures " +
			"(embedded://ifevalcode) are written for benchline in the original's format; they are not the original's items.\n",
	}, m)
}
