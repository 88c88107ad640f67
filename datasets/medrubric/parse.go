// Package medrubric reads QuarkMedBench-style rubric files (one medical
// query, or one multi-turn session, per JSON line, each turn with its
// rubrics) into schemas.MedRubricItem rows, bundles fixtures written for
// benchline, merges rubrics proposed by several writers (Consensus), and
// builds the dataset (Builder): from hand-written rubric files, or from
// rubrics writer models propose at build time (a datasets.Generator; see
// generate.go). Benchmark registers it.
//
// A line:
//
//	{"id": "cc-01", "domain": "clinical_care", "language": "en",
//	 "turns": [{"user": "...", "reference": "...",
//	            "rubrics": [{"id": "r1", "category": "essential", "weight": 3,
//	                         "text": "...", "keywords": ["..."], "proposed_by": ["..."]}]}]}
//
// weight, keywords, proposed_by and reference are optional; a missing weight
// is the category's default (scorers/medrubric.DefaultWeight).
package medrubric

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/source"
	"github.com/benchline/benchline/schemas"
	scorer "github.com/benchline/benchline/scorers/medrubric"
)

// Name is the dataset name.
const Name = "medrubric"

// Embedded is the source URI of the fixtures bundled in the binary:
// queries and sessions written for benchline, not QuarkMedBench's data
// (which is unreleased).
const Embedded = "embedded://medrubric"

//go:embed fixtures
var fixtures embed.FS

// Fixtures returns the bundled fixture files as a source Location.
func Fixtures() source.Location { return datasets.EmbeddedFixtures(fixtures, "fixtures", Embedded) }

// FixtureItems parses every bundled fixture file, in file name order.
func FixtureItems() ([]schemas.MedRubricItem, error) {
	names, err := fs.Glob(fixtures, "fixtures/*.jsonl")
	if err != nil {
		return nil, fmt.Errorf("medrubric: fixtures: %w", err)
	}
	var p Parser
	var items []schemas.MedRubricItem
	for _, n := range names {
		if !IsRubricFile(path.Base(n)) {
			continue
		}
		b, err := fixtures.ReadFile(n)
		if err != nil {
			return nil, fmt.Errorf("medrubric: fixtures: %w", err)
		}
		got, err := p.Parse(bytes.NewReader(b), Embedded+"/"+path.Base(n))
		if err != nil {
			return nil, err
		}
		items = append(items, got...)
	}
	return items, nil
}

// Turns decodes an item's TurnsJSON.
func Turns(it schemas.MedRubricItem) ([]schemas.MedRubricTurn, error) {
	var turns []schemas.MedRubricTurn
	if err := json.Unmarshal([]byte(it.TurnsJSON), &turns); err != nil {
		return nil, fmt.Errorf("medrubric: item %s: turns: %w", it.ID, err)
	}
	return turns, nil
}

// Parser parses rubric files, keeping item ids unique across every file it
// reads. The zero value is ready to use.
type Parser struct {
	// RubricsOptional accepts turns without rubrics, and without an
	// essential one: the queries of a build whose rubrics writer models
	// propose (a turn's own rubrics, if any, are then only what baseline
	// writers answer from).
	RubricsOptional bool

	seen map[string]string // id -> file:line
}

// ReadItems parses one rubric file (uri names it in errors and provenance).
func ReadItems(r io.Reader, uri string) ([]schemas.MedRubricItem, error) {
	var p Parser
	return p.Parse(r, uri)
}

// Parse parses and validates every line of r. The first broken rule is
// returned as a *datasets.InputError naming the file, the line, the item
// and, where it applies, the turn and the rubric.
func (p *Parser) Parse(r io.Reader, uri string) ([]schemas.MedRubricItem, error) {
	if p.seen == nil {
		p.seen = map[string]string{}
	}
	var items []schemas.MedRubricItem
	err := datasets.EachLine(r, uri, func(n int, raw []byte) error {
		it, msg := parseLine(raw, p.RubricsOptional)
		if msg != "" {
			return &datasets.InputError{File: uri, Line: n, Msg: msg}
		}
		if prev, dup := p.seen[it.ID]; dup {
			return &datasets.InputError{File: uri, Line: n, Msg: fmt.Sprintf("duplicate id %q (first at %s)", it.ID, prev)}
		}
		p.seen[it.ID] = fmt.Sprintf("%s:%d", uri, n)
		it.SourceFile, it.SourceLine = uri, int32(n)
		items = append(items, it)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return items, nil
}

// The source shapes of a line; pointers tell a missing field from an empty
// one.
type (
	lineJSON struct {
		ID       *string    `json:"id"`
		Domain   *string    `json:"domain"`
		Language *string    `json:"language"`
		Turns    []turnJSON `json:"turns"`
	}
	turnJSON struct {
		User      *string      `json:"user"`
		Reference *string      `json:"reference"`
		Rubrics   []rubricJSON `json:"rubrics"`
	}
	rubricJSON struct {
		ID         *string  `json:"id"`
		Category   *string  `json:"category"`
		Weight     *float64 `json:"weight"`
		Text       *string  `json:"text"`
		Keywords   []string `json:"keywords"`
		ProposedBy []string `json:"proposed_by"`
	}
)

var (
	slug     = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	language = regexp.MustCompile(`^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$`)
)

// parseLine validates one line and returns its row, or a message saying
// which rule it breaks; rubricsOptional as Parser.RubricsOptional.
func parseLine(raw []byte, rubricsOptional bool) (schemas.MedRubricItem, string) {
	var l lineJSON
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return schemas.MedRubricItem{}, "not a rubric item: " + err.Error()
	}
	if dec.More() {
		return schemas.MedRubricItem{}, "more than one JSON value on the line"
	}
	switch {
	case l.ID == nil || strings.TrimSpace(*l.ID) == "":
		return schemas.MedRubricItem{}, `missing or empty "id"`
	case *l.ID != strings.TrimSpace(*l.ID):
		return schemas.MedRubricItem{}, fmt.Sprintf("id %q has surrounding white space", *l.ID)
	}
	id := *l.ID
	bad := func(format string, args ...any) (schemas.MedRubricItem, string) {
		return schemas.MedRubricItem{}, fmt.Sprintf("item %s: ", id) + fmt.Sprintf(format, args...)
	}
	if l.Domain == nil || !slug.MatchString(*l.Domain) {
		return bad(`"domain" must be a lower-case slug such as "clinical_care", got %s`, show(l.Domain))
	}
	if l.Language == nil || !language.MatchString(*l.Language) {
		return bad(`"language" must be a language tag such as "en" or "zh", got %s`, show(l.Language))
	}
	if len(l.Turns) == 0 {
		return bad(`"turns" is missing or empty`)
	}
	rubricIDs := map[string]int{} // id -> turn
	turns := make([]schemas.MedRubricTurn, len(l.Turns))
	rubrics := 0
	for ti, t := range l.Turns {
		tn := ti + 1
		if t.User == nil || strings.TrimSpace(*t.User) == "" {
			return bad(`turn %d: missing or empty "user"`, tn)
		}
		turn := schemas.MedRubricTurn{User: *t.User, Rubrics: make([]schemas.MedRubric, 0, len(t.Rubrics))}
		if t.Reference != nil {
			turn.Reference = *t.Reference
		}
		if len(t.Rubrics) == 0 && !rubricsOptional {
			return bad(`turn %d: "rubrics" is missing or empty`, tn)
		}
		essential := false
		for _, rj := range t.Rubrics {
			r, msg := parseRubric(rj)
			if msg != "" {
				return bad("turn %d: %s", tn, msg)
			}
			if prev, dup := rubricIDs[r.ID]; dup {
				return bad("turn %d: rubric id %q repeats (first in turn %d)", tn, r.ID, prev)
			}
			rubricIDs[r.ID] = tn
			essential = essential || r.Category == string(scorer.Essential)
			turn.Rubrics = append(turn.Rubrics, r)
		}
		if !essential && !rubricsOptional {
			return bad("turn %d: no essential rubric (every turn needs one to be scored)", tn)
		}
		rubrics += len(turn.Rubrics)
		turns[ti] = turn
	}
	it, err := newItem(id, *l.Domain, *l.Language, turns)
	if err != nil {
		return bad("%v", err)
	}
	return it, ""
}

// newItem is the row of an item with these turns (TurnsJSON encoded
// without HTML escaping).
func newItem(id, domain, language string, turns []schemas.MedRubricTurn) (schemas.MedRubricItem, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(turns); err != nil {
		return schemas.MedRubricItem{}, fmt.Errorf("encode turns: %w", err)
	}
	rubrics := 0
	for _, t := range turns {
		rubrics += len(t.Rubrics)
	}
	return schemas.MedRubricItem{
		ID: id, Domain: domain, Language: language,
		NumTurns: int32(len(turns)), NumRubrics: int32(rubrics),
		TurnsJSON: strings.TrimSuffix(buf.String(), "\n"),
	}, nil
}

// parseRubric validates one rubric; its messages name the rubric.
func parseRubric(rj rubricJSON) (schemas.MedRubric, string) {
	if rj.ID == nil || strings.TrimSpace(*rj.ID) == "" {
		return schemas.MedRubric{}, `a rubric has a missing or empty "id"`
	}
	id := *rj.ID
	bad := func(format string, args ...any) (schemas.MedRubric, string) {
		return schemas.MedRubric{}, fmt.Sprintf("rubric %s: ", id) + fmt.Sprintf(format, args...)
	}
	if rj.Category == nil {
		return bad(`missing "category"`)
	}
	cat, err := scorer.ParseCategory(*rj.Category)
	if err != nil {
		return bad("category %q is not essential, important, highlight or pitfall", *rj.Category)
	}
	w := scorer.DefaultWeight(cat)
	if rj.Weight != nil {
		if !(*rj.Weight > 0) {
			return bad("weight %v must be positive", *rj.Weight)
		}
		w = *rj.Weight
	}
	if rj.Text == nil || strings.TrimSpace(*rj.Text) == "" {
		return bad(`missing or empty "text"`)
	}
	for i, k := range rj.Keywords {
		switch {
		case strings.TrimSpace(k) == "":
			return bad("keyword %d is empty", i+1)
		case k != strings.TrimSpace(k) || k != strings.ToLower(k):
			return bad("keyword %q must be lower case without surrounding white space", k)
		case slices.Contains(rj.Keywords[:i], k):
			return bad("keyword %q repeats", k)
		}
	}
	proposers := slices.Clone(rj.ProposedBy)
	sort.Strings(proposers)
	for i, p := range proposers {
		switch {
		case strings.TrimSpace(p) == "":
			return bad(`"proposed_by" has an empty name`)
		case i > 0 && proposers[i-1] == p:
			return bad("proposer %q repeats", p)
		}
	}
	return schemas.MedRubric{
		ID: id, Category: string(cat), Weight: w, Text: *rj.Text,
		Keywords: rj.Keywords, ProposedBy: proposers,
	}, ""
}

// show quotes a field's value for an error message, or says it is missing.
func show(s *string) string {
	if s == nil {
		return "nothing"
	}
	return fmt.Sprintf("%q", *s)
}
