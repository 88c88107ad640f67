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
	"github.com/benchline/benchline/internal/toolcall"
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
func ReadItems(ctx context.Context, env datasets.Env, srcs []catalog.Source) ([]*Item, error) {
	byName := map[string]catalog.Source{}
	for _, s := range srcs {
		byName[s.Name] = s
	}
	var items []*Item
	seen := map[string]*Item{}
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
			return nil, &datasets.InputError{File: s.URI, Msg: "no possible-answer file staged for this category"}
		}
		index := map[string]*Item{}
		err := EachLine(ctx, env, s, func(line int, raw []byte) error {
			it, err := parseQuestion(raw, cat)
			if err != nil {
				return &datasets.InputError{File: s.URI, Line: line, Msg: err.Error()}
			}
			if prev, dup := seen[it.ID]; dup {
				return &datasets.InputError{File: s.URI, Line: line, Msg: fmt.Sprintf("duplicate id %s (first at %s:%d)", it.ID, prev.File, prev.Line)}
			}
			it.File, it.Line = s.URI, line
			seen[it.ID], index[it.ID] = it, it
			items = append(items, it)
			return nil
		})
		if err != nil {
			return nil, err
		}
		err = EachLine(ctx, env, ans, func(line int, raw []byte) error {
			var a struct {
				ID          string          `json:"id"`
				GroundTruth json.RawMessage `json:"ground_truth"`
			}
			if err := json.Unmarshal(raw, &a); err != nil {
				return &datasets.InputError{File: ans.URI, Line: line, Msg: "not a JSON object: " + err.Error()}
			}
			it, ok := index[a.ID]
			if !ok {
				return &datasets.InputError{File: ans.URI, Line: line, Msg: fmt.Sprintf("answer id %q has no question in %s", a.ID, s.URI)}
			}
			if it.GroundTruthJSON != "" {
				return &datasets.InputError{File: ans.URI, Line: line, Msg: fmt.Sprintf("duplicate answer id %s", a.ID)}
			}
			gv, err := toolcall.DecodeJSON(a.GroundTruth)
			if err == nil {
				it.Answers, err = scorer.AnswersFromValue(gv)
			}
			if err != nil || len(it.Answers) == 0 {
				return &datasets.InputError{File: ans.URI, Line: line, Msg: fmt.Sprintf(`answer %s: "ground_truth" must be a non-empty list of {function: {param: [values]}}`, a.ID)}
			}
			for _, a := range it.Answers {
				if findFunc(it.Funcs, a.Name) == nil {
					return &datasets.InputError{File: ans.URI, Line: line, Msg: fmt.Sprintf("answer %s: function %q is not among the item's functions", it.ID, a.Name)}
				}
			}
			it.GroundTruthJSON = string(a.GroundTruth)
			return nil
		})
		if err != nil {
			return nil, err
		}
		for _, it := range index {
			if it.GroundTruthJSON == "" {
				return nil, &datasets.InputError{File: it.File, Line: it.Line, Msg: fmt.Sprintf("item %s has no possible answer in %s", it.ID, ans.URI)}
			}
		}
	}
	return items, nil
}

// NewItem decodes one item from a BFCL question line and its possible
// answer's "ground_truth" (JSON), e.g. for tests and single-item tools.
func NewItem(category, questionLine, groundTruth string) (*Item, error) {
	it, err := parseQuestion([]byte(questionLine), category)
	if err != nil {
		return nil, fmt.Errorf("toolpref: %w", err)
	}
	gv, err := toolcall.DecodeJSON([]byte(groundTruth))
	if err != nil {
		return nil, fmt.Errorf("toolpref: item %s: ground truth: %w", it.ID, err)
	}
	if it.Answers, err = scorer.AnswersFromValue(gv); err != nil {
		return nil, fmt.Errorf("toolpref: item %s: %w", it.ID, err)
	}
	it.GroundTruthJSON = groundTruth
	return it, nil
}

func parseQuestion(raw []byte, cat string) (*Item, error) {
	var q struct {
		ID       string            `json:"id"`
		Question []json.RawMessage `json:"question"`
		Function json.RawMessage   `json:"function"`
	}
	if err := json.Unmarshal(raw, &q); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	if q.ID == "" {
		return nil, errors.New(`missing "id"`)
	}
	if len(q.Question) == 0 {
		return nil, fmt.Errorf(`item %s: "question" must be a non-empty list of turns`, q.ID)
	}
	var msgs []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	if err := json.Unmarshal(q.Question[0], &msgs); err != nil || len(msgs) == 0 {
		return nil, fmt.Errorf("item %s: the first turn is not a non-empty list of {role, content} messages", q.ID)
	}
	fv, err := toolcall.DecodeJSON(q.Function)
	if err != nil || q.Function == nil {
		return nil, fmt.Errorf(`item %s: missing or invalid "function"`, q.ID)
	}
	funcs, err := scorer.FunctionsFromValue(fv)
	if err != nil {
		return nil, fmt.Errorf("item %s: %v", q.ID, err)
	}
	turn, _ := json.Marshal(msgs)
	return &Item{ID: q.ID, Category: cat, Lang: scorer.LanguageForCategory(cat), MessagesJSON: string(turn),
		FunctionsJSON: string(q.Function), Funcs: funcs}, nil
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
