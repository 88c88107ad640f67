// Package mcq builds the multiple-choice questions dataset from a JSON
// lines file of questions (questions.jsonl).
package mcq

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/source"
	"github.com/benchline/benchline/schemas"
	scorer "github.com/benchline/benchline/scorers/mcq"
)

//go:embed fixtures
var fixtures embed.FS

// Embedded is the source of the bundled fixtures; File the questions file.
const (
	Embedded = "embedded://mcq"
	File     = "questions.jsonl"
)

// Builder builds the dataset in one part.
type Builder struct{}

func (Builder) Name() string          { return "mcq" }
func (Builder) Version() string       { return "1" }
func (Builder) Schema() schemas.Table { return scorer.ItemTable }

// Plan stages the questions file and validates every line.
func (b Builder) Plan(ctx context.Context, env datasets.Env, req datasets.Request) (datasets.Plan, error) {
	for k := range req.Params {
		return datasets.Plan{}, &datasets.InputError{File: "params", Msg: fmt.Sprintf("unknown parameter %q (mcq has none)", k)}
	}
	loc, err := datasets.Locate(ctx, env, req.Source, Embedded, func() source.Location {
		return datasets.EmbeddedFixtures(fixtures, "fixtures", Embedded)
	})
	if err != nil {
		return datasets.Plan{}, err
	}
	src, err := datasets.Stage(ctx, env, loc, File)
	if err != nil {
		return datasets.Plan{}, err
	}
	items, err := read(ctx, env, src)
	if err != nil {
		return datasets.Plan{}, err
	}
	if len(items) == 0 {
		return datasets.Plan{}, &datasets.InputError{File: src.URI, Msg: "no questions"}
	}
	srcs := []catalog.Source{src}
	return datasets.NewPlan(b, srcs, nil, []datasets.Part{datasets.OnePart("questions", srcs, len(items))}), nil
}

// WritePart reads the staged file again and writes every question.
func (Builder) WritePart(ctx context.Context, env datasets.Env, plan datasets.Plan, p datasets.Part, key string, progress func(int64)) (pq.FileInfo, error) {
	items, err := read(ctx, env, plan.Sources[0])
	if err != nil {
		return pq.FileInfo{}, err
	}
	return datasets.WriteRows(ctx, env, key, items, nil, progress)
}

func (Builder) Card(m catalog.Manifest) string {
	return datasets.RenderCard(datasets.CardText{PrettyName: "Multiple-choice questions",
		Description: "Questions with lettered choices, scored by the letter of the answer."}, m)
}

// read reads and validates the questions of a staged file.
func read(ctx context.Context, env datasets.Env, src catalog.Source) ([]scorer.Item, error) {
	var items []scorer.Item
	seen := map[string]int{}
	err := datasets.EachStagedLine(ctx, env, src.SHA256, src.URI, func(line int, raw []byte) error {
		bad := func(msg string) error { return &datasets.InputError{File: src.URI, Line: line, Msg: msg} }
		var it scorer.Item
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&it); err != nil {
			return bad("not a question object {id, question, choices, answer}: " + err.Error())
		}
		switch {
		case it.ID == "" || it.Question == "":
			return bad(`missing "id" or "question"`)
		case len(it.Choices) < 2 || len(it.Choices) > 26:
			return bad(fmt.Sprintf("%d choices: want 2 to 26", len(it.Choices)))
		case len(it.Answer) != 1 || it.Answer[0] < 'A' || int(it.Answer[0]-'A') >= len(it.Choices):
			return bad(fmt.Sprintf("answer %q: want the letter of one of the %d choices", it.Answer, len(it.Choices)))
		}
		if prev, dup := seen[it.ID]; dup {
			return bad(fmt.Sprintf("id %q repeats line %d", it.ID, prev))
		}
		seen[it.ID] = line
		items = append(items, it)
		return nil
	})
	return items, err
}
