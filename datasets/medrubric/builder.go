package medrubric

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/source"
	"github.com/benchline/benchline/schemas"
)

// builderVersion changes whenever the rows written for the same input
// change.
const builderVersion = "1"

// Source layout. A source (a directory, an http(s) or s3:// URL, or
// embedded://medrubric) holds rubric files: every top-level *.jsonl file
// but EvidenceFile. A location that cannot be listed (a plain http(s)
// URL) names them in IndexFile, one name a line. EvidenceFile, optional,
// holds evidence passages that rubric writers are given (see Generator).
const (
	IndexFile    = "index.txt"
	EvidenceFile = "evidence.jsonl"
)

// Builder builds the medrubric dataset: from hand-written rubric files, or,
// with the "writers" parameter, from rubrics proposed by writer models at
// build time and merged by Consensus (see generate.go).
type Builder struct{}

var _ datasets.Generator = Builder{}

func (Builder) Name() string          { return Name }
func (Builder) Version() string       { return builderVersion }
func (Builder) Schema() schemas.Table { return schemas.MedRubricItemTable }

// IsRubricFile reports whether a source file is a rubric file: a top-level
// *.jsonl other than EvidenceFile.
func IsRubricFile(name string) bool {
	return !strings.Contains(name, "/") && path.Ext(name) == ".jsonl" && name != EvidenceFile
}

// rubricFiles names the rubric files at loc, sorted: listed, or read from
// IndexFile where loc cannot be listed.
func rubricFiles(ctx context.Context, loc source.Location) ([]string, error) {
	names, err := loc.List(ctx)
	if errors.Is(err, source.ErrNotListable) {
		names, err = readIndex(ctx, loc)
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		if IsRubricFile(n) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return nil, &datasets.InputError{File: loc.URI(""), Msg: "no rubric files (*.jsonl) found"}
	}
	return out, nil
}

// readIndex reads IndexFile: one file name a line; blank lines and lines
// starting with # are skipped.
func readIndex(ctx context.Context, loc source.Location) ([]string, error) {
	rc, err := loc.Open(ctx, IndexFile)
	if errors.Is(err, source.ErrNotFound) {
		return nil, &datasets.InputError{File: loc.URI(IndexFile), Msg: "this source cannot be listed, so it needs an index.txt naming its rubric files, one a line"}
	}
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	var names []string
	sc := bufio.NewScanner(rc)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !IsRubricFile(line) {
			return nil, &datasets.InputError{File: loc.URI(IndexFile), Line: n, Msg: fmt.Sprintf("%q is not a top-level *.jsonl rubric file", line)}
		}
		names = append(names, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("medrubric: read %s: %w", loc.URI(IndexFile), err)
	}
	return names, nil
}

// stage stages the rubric files at loc, and EvidenceFile when withEvidence
// and it exists.
func stage(ctx context.Context, env datasets.Env, loc source.Location, withEvidence bool) ([]catalog.Source, error) {
	names, err := rubricFiles(ctx, loc)
	if err != nil {
		return nil, err
	}
	srcs, err := datasets.StageAll(ctx, env, loc, names)
	if err != nil {
		return nil, err
	}
	if withEvidence {
		s, err := datasets.Stage(ctx, env, loc, EvidenceFile)
		switch {
		case errors.Is(err, source.ErrNotFound):
		case err != nil:
			return nil, err
		default:
			srcs = append(srcs, s)
		}
	}
	return srcs, nil
}

// readStaged parses the staged rubric files among srcs, in order, with one
// Parser (ids unique across files). Generated rubric files read with
// rubrics optional (the queries writers propose rubrics for).
func readStaged(ctx context.Context, env datasets.Env, srcs []catalog.Source, p *Parser) ([]schemas.MedRubricItem, error) {
	var items []schemas.MedRubricItem
	for _, s := range srcs {
		if !IsRubricFile(s.Name) {
			continue
		}
		rc, err := datasets.OpenStaged(ctx, env, s.SHA256)
		if err != nil {
			return nil, err
		}
		got, err := p.Parse(rc, s.URI)
		rc.Close()
		if err != nil {
			return nil, err
		}
		items = append(items, got...)
	}
	return items, nil
}

// Plan stages and validates the rubric files and plans one part. With
// writers (see ParseParams) it plans the generation units instead; Finish
// then plans the part.
func (b Builder) Plan(ctx context.Context, env datasets.Env, req datasets.Request) (datasets.Plan, error) {
	o, norm, err := ParseParams(req.Params)
	if err != nil {
		return datasets.Plan{}, err
	}
	loc, err := datasets.Locate(ctx, env, req.Source, Embedded, Fixtures)
	if err != nil {
		return datasets.Plan{}, err
	}
	srcs, err := stage(ctx, env, loc, o.Generate() && o.Evidence)
	if err != nil {
		return datasets.Plan{}, err
	}
	if o.Generate() {
		return b.planGeneration(ctx, env, srcs, norm, o)
	}
	items, err := readStaged(ctx, env, srcs, &Parser{})
	if err != nil {
		return datasets.Plan{}, err
	}
	return datasets.NewPlan(b, srcs, norm, []datasets.Part{datasets.OnePart("items", srcs, len(items))}), nil
}

// Build computes the rows of a plan from its staged sources: the rubric
// files' items, or with writers the items with their generated rubrics.
func Build(ctx context.Context, env datasets.Env, plan datasets.Plan) ([]schemas.MedRubricItem, error) {
	o, _, err := ParseParams(plan.Params)
	if err != nil {
		return nil, err
	}
	if o.Generate() {
		rows, _, err := buildGenerated(ctx, env, plan.Sources, o)
		return rows, err
	}
	return readStaged(ctx, env, plan.Sources, &Parser{})
}

// WritePart recomputes the rows from the staged sources and writes them.
func (b Builder) WritePart(ctx context.Context, env datasets.Env, plan datasets.Plan, p datasets.Part, key string, progress func(int64)) (pq.FileInfo, error) {
	rows, err := Build(ctx, env, plan)
	if err != nil {
		return pq.FileInfo{}, err
	}
	return datasets.WriteComputedPart(ctx, env, plan, p, key, rows, progress)
}

// Card renders the dataset card.
func (Builder) Card(m catalog.Manifest) string {
	how := "The rubrics are the hand-written ones of the source's rubric files."
	if m.Params["writers"] != "" {
		how = "The rubrics were proposed at build time by the writer models of the `writers` parameter (models named " +
			"`baseline/...` are deterministic baselines that answer from the source's own rubrics, perturbed per writer, " +
			"not LLMs), each asked once per turn with the `seed` parameter, merged by token-set Jaccard similarity " +
			"(`threshold`) and kept when at least `k` writers proposed them; a rubric's `proposed_by` lists its writers " +
			"and its category is its writers' majority. The writers' replies are the sources `generated/unit-*.jsonl`. " +
			"Items whose turns kept no essential rubric are left out."
	}
	return datasets.RenderCard(datasets.CardText{
		License:    "apache-2.0",
		PrettyName: "QuarkMedBench-style medical rubric items (benchline build)",
		Description: "Medical queries and multi-turn sessions with rubrics in four categories (essential, important, " +
			"highlight, pitfall), each with a weight, in the manner of QuarkMedBench. One row per query or session; " +
			"`turns_json` holds each turn's question, reference answer and rubrics. " + how + " Evaluate with " +
			"`benchline eval --dataset medrubric --model <model> --judge judge=<judge>[,<judge>...]`; the scoring " +
			"(weights, circuit breaker, length-limited and asymmetric sets) is in docs/benchmarks/medrubric.md.\n\n",
		Provenance: "The bundled fixtures (embedded://medrubric) were written for benchline and follow common public " +
			"guidance; they are not QuarkMedBench's data, which is unreleased.",
	}, m)
}
