package toolpref

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/bfcl"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/source"
	scorer "github.com/benchline/benchline/scorers/bfcl"
)

// Item is one BFCL-format item with a ground truth, decoded for scoring
// candidate replies.
type Item struct {
	ID       string
	Category string
	Lang     scorer.Language
	// MessagesJSON is the item's first turn (a JSON list of {role, content}).
	MessagesJSON string
	// FunctionsJSON is BFCL's "function" list; GroundTruthJSON its
	// possible answer's "ground_truth".
	FunctionsJSON   string
	GroundTruthJSON string
	Funcs           []scorer.Function
	Answers         []scorer.Answer
	// File and Line locate the question line (provenance and errors).
	File string
	Line int
}

// Pairable reports whether items of a BFCL category can be turned into
// pairs: single-turn categories checked by the AST checker (simple,
// multiple, parallel and their live variants). Relevance, irrelevance and
// multi-turn files are ignored.
func Pairable(category string) bool {
	if strings.Contains(category, "multi_turn") || !bfcl.HasGroundTruth(category) {
		return false
	}
	k := scorer.CategoryKind(category)
	return k == scorer.KindSimple || k == scorer.KindMultiple || k == scorer.KindParallel
}

// StageItems reads the BFCL data folder at loc (bfcl.Scan), stages the
// question and possible-answer files of its pairable categories, and
// stages every file of extra that exists (e.g. "candidates.jsonl").
// Question files come first, sorted, each followed by its answers. It
// returns the counts of what it left out (a plan's Stats): categories
// benchline does not support, files that are not categories, and
// categories that cannot be paired.
func StageItems(ctx context.Context, env datasets.Env, loc source.Location, extra ...string) ([]catalog.Source, map[string]int64, error) {
	layout, err := bfcl.Scan(ctx, loc, func(cat string) (bool, string) {
		if Pairable(cat) {
			return true, ""
		}
		return false, "no possible answers to pair on"
	})
	if err != nil {
		return nil, nil, err
	}
	var out []catalog.Source
	for _, c := range layout.Cats {
		q, err := datasets.Stage(ctx, env, loc, c.Question)
		if err != nil {
			return nil, nil, err
		}
		a, err := datasets.Stage(ctx, env, loc, c.Answer)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, q, a)
	}
	if len(out) == 0 {
		msg := "no BFCL_v4_<category>.json files of a single-turn AST category found"
		if s := datasets.SkipSummary(layout.Stats); s != "" {
			msg += " (" + s + ")"
		}
		return nil, nil, &datasets.InputError{File: loc.URI(""), Msg: msg}
	}
	for _, name := range extra {
		s, err := datasets.Stage(ctx, env, loc, name)
		if errors.Is(err, source.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		out = append(out, s)
	}
	return out, layout.Stats, nil
}

// ReadItems parses the staged question and possible-answer files among
// srcs (other sources are skipped) and returns the items in file order.
// Items bfcl.Check leaves out (the same rule the bfcl builder applies) are
// not returned but counted in skipped (datasets.SkipItem) when skipped is
// not nil; their ids are in the returned set, so candidates naming them
// are left out with them. What is wrong with a file as a whole is an
// *datasets.InputError naming the file and the line.
func ReadItems(ctx context.Context, env datasets.Env, srcs []catalog.Source, skipped map[string]int64) ([]*Item, map[string]bool, error) {
	byName := map[string]catalog.Source{}
	for _, s := range srcs {
		byName[s.Name] = s
	}
	var items []*Item
	left := map[string]bool{}
	type where struct {
		file string
		line int
	}
	seen := map[string]where{}
	for _, s := range srcs {
		cat, isQ := bfcl.CategoryOf(s.Name)
		if !isQ {
			continue
		}
		ans, ok := byName["possible_answer/"+s.Name]
		if !ok {
			ans, ok = byName["possible_answer/BFCL_v4_"+cat+".json"]
		}
		if !ok {
			return nil, nil, &datasets.InputError{File: s.URI, Msg: "no possible-answer file staged for this category"}
		}
		type line struct {
			bfcl.Raw
			n int
		}
		var lines []*line
		index := map[string]*line{}
		err := EachLine(ctx, env, s, func(n int, raw []byte) error {
			var q bfcl.Raw
			if err := json.Unmarshal(raw, &q); err != nil {
				return &datasets.InputError{File: s.URI, Line: n, Msg: "not a JSON object: " + err.Error()}
			}
			if q.ID == "" {
				return &datasets.InputError{File: s.URI, Line: n, Msg: `missing "id"`}
			}
			if prev, dup := seen[q.ID]; dup {
				return &datasets.InputError{File: s.URI, Line: n, Msg: fmt.Sprintf("duplicate id %s (first at %s:%d)", q.ID, prev.file, prev.line)}
			}
			seen[q.ID] = where{s.URI, n}
			l := &line{q, n}
			index[q.ID] = l
			lines = append(lines, l)
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
		err = EachLine(ctx, env, ans, func(n int, raw []byte) error {
			var a struct {
				ID          string          `json:"id"`
				GroundTruth json.RawMessage `json:"ground_truth"`
			}
			if err := json.Unmarshal(raw, &a); err != nil {
				return &datasets.InputError{File: ans.URI, Line: n, Msg: "not a JSON object: " + err.Error()}
			}
			l, ok := index[a.ID]
			if !ok {
				return &datasets.InputError{File: ans.URI, Line: n, Msg: fmt.Sprintf("answer id %q has no question in %s", a.ID, s.URI)}
			}
			if l.GroundTruth != nil {
				return &datasets.InputError{File: ans.URI, Line: n, Msg: fmt.Sprintf("duplicate answer id %s", a.ID)}
			}
			l.GroundTruth = a.GroundTruth
			if l.GroundTruth == nil {
				l.GroundTruth = json.RawMessage("null") // present, and malformed
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
		for _, l := range lines {
			if l.GroundTruth == nil {
				return nil, nil, &datasets.InputError{File: s.URI, Line: l.n, Msg: fmt.Sprintf("item %s has no possible answer in %s", l.ID, ans.URI)}
			}
			checked, defect := bfcl.Check(l.Raw)
			if defect != nil {
				left[l.ID] = true
				if skipped != nil {
					defect.Skip(skipped, cat)
				}
				continue
			}
			items = append(items, newItem(l.Raw, cat, checked, s.URI, l.n))
		}
	}
	return items, left, nil
}

// newItem makes the Item of one that bfcl.Check kept.
func newItem(r bfcl.Raw, cat string, c bfcl.Item, file string, line int) *Item {
	turn, _ := json.Marshal(c.Turns[0])
	return &Item{ID: r.ID, Category: cat, Lang: scorer.LanguageForCategory(cat), MessagesJSON: string(turn),
		FunctionsJSON: string(r.Function), GroundTruthJSON: string(r.GroundTruth), Funcs: c.Funcs, Answers: c.Answers,
		File: file, Line: line}
}

// NewItem decodes one item from a BFCL question line and its possible
// answer's "ground_truth" (JSON), e.g. for tests and single-item tools. An
// item bfcl.Check leaves out is an error (its *bfcl.Defect).
func NewItem(category, questionLine, groundTruth string) (*Item, error) {
	var r bfcl.Raw
	if err := json.Unmarshal([]byte(questionLine), &r); err != nil {
		return nil, fmt.Errorf("toolpref: not a JSON object: %w", err)
	}
	if r.ID == "" {
		return nil, errors.New(`toolpref: missing "id"`)
	}
	r.GroundTruth = json.RawMessage(groundTruth)
	c, defect := bfcl.Check(r)
	if defect != nil {
		return nil, defect
	}
	return newItem(r, category, c, "", 0), nil
}

// EachLine calls fn for every non-blank line of a staged source.
func EachLine(ctx context.Context, env datasets.Env, s catalog.Source, fn func(line int, raw []byte) error) error {
	return datasets.EachStagedLine(ctx, env, s.SHA256, s.URI, fn)
}

func findFunc(funcs []scorer.Function, name string) *scorer.Function {
	for i := range funcs {
		if funcs[i].Name == name {
			return &funcs[i]
		}
	}
	return nil
}
