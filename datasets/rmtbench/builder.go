package rmtbench

import (
	"context"
	"errors"
	"fmt"
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

// Builder builds the rmtbench dataset from a source's CharactersFile and
// DialoguesFile: one row per dialogue, in the dialogues file's order.
type Builder struct{}

var _ datasets.Builder = Builder{}

func (Builder) Name() string          { return Name }
func (Builder) Version() string       { return builderVersion }
func (Builder) Schema() schemas.Table { return schemas.RMTBenchDialogueTable }

// Plan stages the two files, validates every line and plans one part. The
// builder takes no parameters.
func (b Builder) Plan(ctx context.Context, env datasets.Env, req datasets.Request) (datasets.Plan, error) {
	if len(req.Params) > 0 {
		names := make([]string, 0, len(req.Params))
		for k := range req.Params {
			names = append(names, k)
		}
		sort.Strings(names)
		return datasets.Plan{}, &datasets.InputError{File: "params", Msg: "rmtbench takes no parameters, got " + strings.Join(names, ", ")}
	}
	loc, err := datasets.Locate(ctx, env, req.Source, Embedded, Fixtures)
	if err != nil {
		return datasets.Plan{}, err
	}
	var srcs []catalog.Source
	for _, name := range []string{CharactersFile, DialoguesFile} {
		s, err := datasets.Stage(ctx, env, loc, name)
		if errors.Is(err, source.ErrNotFound) {
			return datasets.Plan{}, &datasets.InputError{File: loc.URI(name), Msg: fmt.Sprintf("missing: a source holds %s and %s", CharactersFile, DialoguesFile)}
		}
		if err != nil {
			return datasets.Plan{}, err
		}
		srcs = append(srcs, s)
	}
	rows, err := Build(ctx, env, srcs)
	if err != nil {
		return datasets.Plan{}, err
	}
	return datasets.NewPlan(b, srcs, nil, []datasets.Part{datasets.OnePart("dialogues", srcs, len(rows))}), nil
}

// Build parses the staged sources (characters first, then dialogues) into
// rows.
func Build(ctx context.Context, env datasets.Env, srcs []catalog.Source) ([]schemas.RMTBenchDialogue, error) {
	if len(srcs) != 2 {
		return nil, fmt.Errorf("rmtbench: %d sources, want %s and %s", len(srcs), CharactersFile, DialoguesFile)
	}
	rc, err := datasets.OpenStaged(ctx, env, srcs[0].SHA256)
	if err != nil {
		return nil, err
	}
	chars, err := ReadCharacters(rc, srcs[0].URI)
	rc.Close()
	if err != nil {
		return nil, err
	}
	rc, err = datasets.OpenStaged(ctx, env, srcs[1].SHA256)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return ReadDialogues(rc, srcs[1].URI, chars)
}

// WritePart recomputes the rows from the staged sources and writes them.
func (b Builder) WritePart(ctx context.Context, env datasets.Env, plan datasets.Plan, p datasets.Part, key string, progress func(int64)) (pq.FileInfo, error) {
	rows, err := Build(ctx, env, plan.Sources)
	if err != nil {
		return pq.FileInfo{}, err
	}
	return datasets.WriteComputedPart(ctx, env, plan, p, key, rows, progress)
}

// Card renders the dataset card.
func (Builder) Card(m catalog.Manifest) string {
	return datasets.RenderCard(datasets.CardText{
		License:    "apache-2.0",
		PrettyName: "RMTBench-style role-play dialogues (benchline build)",
		Description: "User-centric role-play dialogues in the manner of RMTBench, in English and Chinese: a character " +
			"(custom, with a detailed background, or abstract, with a few traits), the user's explicit motivation, and " +
			"either fixed user turns replayed in order or a simulated user that writes each turn from the motivation " +
			"and the history, up to `max_turns` or until it replies `[END]`. One row per dialogue; `character_json` is " +
			"the persona, `dialogue_json` the topics, preferences, unsafe phrases, dimensions and fixed turns (with " +
			"in-character reference replies). Evaluate with `benchline eval --dataset rmtbench --model <model> --judge " +
			"judge=<judge>[,<judge>...] [--judge user=<simulated user>]`; the scoring is in docs/benchmarks/rmtbench.md.",
		Provenance: "The bundled fixtures (embedded://rmtbench) were written for benchline; they are not RMTBench's " +
			"data (the Hugging Face dataset xiangh/RMTBENCH is gated and was not used).",
	}, m)
}
