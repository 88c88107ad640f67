package omnicloze

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
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
// embedded://omnicloze) holds CaptionsFile, the reference captions a
// writer turns into items, and hand-written item files: every other
// top-level *.jsonl. A location that cannot be listed (a plain http(s)
// URL) is probed for CaptionsFile and ItemsFile (source.Probe: when neither
// exists, the error says what the location answered).
const (
	CaptionsFile = "captions.jsonl"
	ItemsFile    = "items.jsonl"
)

// Builder builds the omnicloze dataset: from hand-written item files, or,
// with the "writer" parameter, also from items a writer model writes from
// the reference captions at build time (see generate.go).
type Builder struct{}

var _ datasets.Generator = Builder{}

func (Builder) Name() string          { return Name }
func (Builder) Version() string       { return builderVersion }
func (Builder) Schema() schemas.Table { return schemas.OmniClozeItemTable }

// IsItemFile reports whether a source file holds hand-written items: a
// top-level *.jsonl other than CaptionsFile.
func IsItemFile(name string) bool {
	return !strings.Contains(name, "/") && path.Ext(name) == ".jsonl" && name != CaptionsFile
}

// stage stages the item files at loc, sorted, and CaptionsFile when
// captions; each must exist when it is needed.
func stage(ctx context.Context, env datasets.Env, loc source.Location, captions bool) ([]catalog.Source, error) {
	names, err := loc.List(ctx)
	if errors.Is(err, source.ErrNotListable) {
		names, err = source.Probe(ctx, loc, []string{CaptionsFile, ItemsFile})
	}
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	names = slices.DeleteFunc(names, func(n string) bool { return !(IsItemFile(n) || captions && n == CaptionsFile) })
	srcs, err := datasets.StageAll(ctx, env, loc, names)
	if err != nil {
		return nil, err
	}
	switch {
	case captions && !slices.Contains(names, CaptionsFile):
		return nil, &datasets.InputError{File: loc.URI(CaptionsFile), Msg: "a build with a writer needs the reference captions, and this source has none"}
	case !captions && !slices.ContainsFunc(names, IsItemFile):
		return nil, &datasets.InputError{File: loc.URI(""), Msg: fmt.Sprintf("no item files (*.jsonl but %s) found; to write items from %s, give --param writer=MODEL", CaptionsFile, CaptionsFile)}
	}
	return srcs, nil
}

// readStaged parses the staged captions and item files among srcs with
// one Parser (ids unique across files).
func readStaged(ctx context.Context, env datasets.Env, srcs []catalog.Source) ([]Caption, []schemas.OmniClozeItem, error) {
	var p Parser
	var captions []Caption
	var items []schemas.OmniClozeItem
	for _, s := range srcs {
		if s.Name != CaptionsFile && !IsItemFile(s.Name) {
			continue
		}
		rc, err := datasets.OpenStaged(ctx, env, s.SHA256)
		if err != nil {
			return nil, nil, err
		}
		if s.Name == CaptionsFile {
			var got []Caption
			got, err = p.ParseCaptions(rc, s.URI)
			captions = append(captions, got...)
		} else {
			var got []schemas.OmniClozeItem
			got, err = p.ParseItems(rc, s.URI)
			items = append(items, got...)
		}
		rc.Close()
		if err != nil {
			return nil, nil, err
		}
	}
	return captions, items, nil
}

// Plan stages and validates the sources and plans one part of the
// hand-written items. With a writer (see ParseParams) it plans the
// generation units instead; Finish then plans the part.
func (b Builder) Plan(ctx context.Context, env datasets.Env, req datasets.Request) (datasets.Plan, error) {
	o, norm, err := ParseParams(req.Params)
	if err != nil {
		return datasets.Plan{}, err
	}
	loc, err := datasets.Locate(ctx, env, req.Source, Embedded, Fixtures)
	if err != nil {
		return datasets.Plan{}, err
	}
	srcs, err := stage(ctx, env, loc, o.Generate())
	if err != nil {
		return datasets.Plan{}, err
	}
	captions, items, err := readStaged(ctx, env, srcs)
	if err != nil {
		return datasets.Plan{}, err
	}
	if o.Generate() {
		if len(captions) == 0 {
			return datasets.Plan{}, &datasets.InputError{File: loc.URI(CaptionsFile), Msg: "no captions"}
		}
		return b.planGeneration(srcs, captions, norm, o), nil
	}
	plan := datasets.NewPlan(b, srcs, norm, []datasets.Part{datasets.OnePart("items", srcs, len(items))})
	plan.Stats = BuildStats{HandWritten: len(items)}.Map()
	return plan, nil
}

// Build computes the rows of a plan from its staged sources: the
// hand-written items, and with a writer the kept generated ones.
func Build(ctx context.Context, env datasets.Env, plan datasets.Plan) ([]schemas.OmniClozeItem, error) {
	o, err := planOptions(plan)
	if err != nil {
		return nil, err
	}
	if o.Generate() {
		rows, _, err := buildGenerated(ctx, env, plan.Sources, o)
		return rows, err
	}
	_, items, err := readStaged(ctx, env, plan.Sources)
	return items, err
}

// WritePart recomputes the rows from the staged sources and writes them.
func (b Builder) WritePart(ctx context.Context, env datasets.Env, plan datasets.Plan, p datasets.Part, key string, progress func(int64)) (pq.FileInfo, error) {
	rows, err := Build(ctx, env, plan)
	if err != nil {
		return pq.FileInfo{}, err
	}
	return datasets.WriteComputedPart(ctx, env, plan, p, key, rows, progress)
}

// Card renders the dataset card, with the validation's counts.
func (Builder) Card(m catalog.Manifest) string {
	how := "The items are the hand-written ones of the source's item files."
	if w := m.Params["writer"]; w != "" {
		how = fmt.Sprintf("Besides the source's hand-written items, the writer model %s wrote one item per reference caption "+
			"(asked for %s blanks of %s distractors each, seed %s; a model named `baseline/...` is a deterministic cloze maker, "+
			"not an LLM). Its replies are the sources `generated/unit-*.jsonl`.", "`"+w+"`", m.Params["blanks"], m.Params["distractors"], m.Params["seed"])
	}
	var v strings.Builder
	v.WriteString("\n\n## Validation\n\nEvery item was validated before it was kept: a lexical checker (an option is chosen when it occurs in the " +
		"text it reads) filling the blanks from the reference caption must choose every answer, and from an empty caption (the passage " +
		"alone) must choose Not Given everywhere. Hand-written items that fail stop the build; generated ones are rejected and counted.\n\n")
	fmt.Fprintf(&v, "| count | items |\n|---|---:|\n| hand-written | %d |\n", m.Stats[StatHandWritten])
	if m.Params["writer"] != "" {
		fmt.Fprintf(&v, "| captions given to the writer | %d |\n| written and kept | %d |\n", m.Stats[StatCaptions], m.Stats[StatKept])
		for _, r := range RejectReasons {
			fmt.Fprintf(&v, "| rejected: %s | %d |\n", r, m.Stats[StatRejectedPrefix+r])
		}
	}
	return datasets.RenderCard(datasets.CardText{
		License:    "apache-2.0",
		PrettyName: "Omni-Cloze-style caption evaluation items (benchline build)",
		Description: "Cloze passages about audio, visual and audio-visual clips in the manner of Omni-Cloze: each blank has its right " +
			"option and distractors, and every judge is offered \"Not Given\" besides. One row per item; the media are referenced by " +
			"`media_uri` and `media_sha256`, never copied. " + how + " Evaluate a captioner with `benchline eval --dataset omnicloze " +
			"--model <model> --judge judge=<judge>[,<judge>...]`; the scoring is in docs/benchmarks/omnicloze.md." + v.String(),
		Provenance: "The bundled fixtures (embedded://omnicloze) were written for benchline; they are not Omni-Cloze's data. Their media " +
			"do not exist: the URIs are under the reserved .invalid domain and the sha256 values are placeholders (see the docs).",
	}, m)
}
