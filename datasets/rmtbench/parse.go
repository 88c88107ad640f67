// Package rmtbench reads RMTBench-style role-play sources (characters and
// dialogues, one per JSON line) into schemas.RMTBenchDialogue rows,
// bundles fixtures written for benchline, and builds the dataset
// (Builder). Benchmark registers it.
//
// A source holds two files. CharactersFile, one character a line, with a
// profile per language:
//
//	{"id": "keeper", "kind": "custom",
//	 "en": {"name": "Mara Voss", "background": "…", "keywords": ["lighthouse"], "forbidden": ["smartphone"]},
//	 "zh": {"name": "玛拉", "background": "…", "keywords": ["灯塔"]}}
//
// (an abstract character has "traits": ["…"] instead of a background).
// DialoguesFile, one dialogue a line, with fixed user turns or a simulated
// user's turn limit:
//
//	{"id": "keeper-en-1", "character": "keeper", "language": "en", "scenario": "user_preference",
//	 "motivation": "…", "topics": ["storms"], "preferences": [{"statement": "I hate the cold.", "keywords": ["cold"]}],
//	 "unsafe": ["step one"], "dimensions": ["character_consistency"],
//	 "turns": [{"user": "…", "reference": "…"}]}
//	{"id": "keeper-en-2", …, "max_turns": 6}
//
// preferences, unsafe, dimensions (default: all five) and reference are
// optional.
package rmtbench

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/source"
	"github.com/benchline/benchline/schemas"
	scorer "github.com/benchline/benchline/scorers/rmtbench"
)

// Name is the dataset name.
const Name = "rmtbench"

// Embedded is the source URI of the fixtures bundled in the binary:
// characters and dialogues written for benchline, not RMTBench's data
// (which is gated).
const Embedded = "embedded://rmtbench"

// The files of a source.
const (
	CharactersFile = "characters.jsonl"
	DialoguesFile  = "dialogues.jsonl"
)

// MaxTurnsLimit bounds a simulated dialogue's max_turns.
const MaxTurnsLimit = 50

//go:embed fixtures
var fixtures embed.FS

// Fixtures returns the bundled fixture files as a source Location.
func Fixtures() source.Location { return datasets.EmbeddedFixtures(fixtures, "fixtures", Embedded) }

// FixtureDialogues parses the bundled fixtures.
func FixtureDialogues() ([]schemas.RMTBenchDialogue, error) {
	read := func(name string) (io.Reader, error) {
		b, err := fixtures.ReadFile("fixtures/" + name)
		if err != nil {
			return nil, fmt.Errorf("rmtbench: fixtures: %w", err)
		}
		return bytes.NewReader(b), nil
	}
	cr, err := read(CharactersFile)
	if err != nil {
		return nil, err
	}
	chars, err := ReadCharacters(cr, Embedded+"/"+CharactersFile)
	if err != nil {
		return nil, err
	}
	dr, err := read(DialoguesFile)
	if err != nil {
		return nil, err
	}
	return ReadDialogues(dr, Embedded+"/"+DialoguesFile, chars)
}

// Character is one character of CharactersFile: its kind and its profile
// in each language.
type Character struct {
	ID       string
	Kind     string
	Profiles map[string]schemas.RMTCharacter // by language
}

// The source shapes of a line; pointers tell a missing field from an
// empty one.
type (
	characterJSON struct {
		ID   *string      `json:"id"`
		Kind *string      `json:"kind"`
		EN   *profileJSON `json:"en"`
		ZH   *profileJSON `json:"zh"`
	}
	profileJSON struct {
		Name       *string  `json:"name"`
		Background *string  `json:"background"`
		Traits     []string `json:"traits"`
		Keywords   []string `json:"keywords"`
		Forbidden  []string `json:"forbidden"`
	}
	dialogueJSON struct {
		ID          *string          `json:"id"`
		Character   *string          `json:"character"`
		Language    *string          `json:"language"`
		Scenario    *string          `json:"scenario"`
		Motivation  *string          `json:"motivation"`
		Topics      []string         `json:"topics"`
		Preferences []preferenceJSON `json:"preferences"`
		Unsafe      []string         `json:"unsafe"`
		Dimensions  []string         `json:"dimensions"`
		Turns       []turnJSON       `json:"turns"`
		MaxTurns    *int             `json:"max_turns"`
	}
	preferenceJSON struct {
		Statement *string  `json:"statement"`
		Keywords  []string `json:"keywords"`
	}
	turnJSON struct {
		User      *string `json:"user"`
		Reference *string `json:"reference"`
	}
)

var slug = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

// decodeLine decodes one JSON object strictly (no unknown field, nothing
// after it) into v, or returns why not.
func decodeLine(raw []byte, v any, what string) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return "not " + what + ": " + err.Error()
	}
	if dec.More() {
		return "more than one JSON value on the line"
	}
	return ""
}

// ReadCharacters parses and validates CharactersFile (uri names it in
// errors). The first broken rule is a *datasets.InputError naming the
// file, the line, the character and, where it applies, the language.
func ReadCharacters(r io.Reader, uri string) (map[string]Character, error) {
	out := map[string]Character{}
	lines := map[string]int{}
	err := datasets.EachLine(r, uri, func(n int, raw []byte) error {
		c, msg := parseCharacter(raw)
		if msg == "" && lines[c.ID] > 0 {
			msg = fmt.Sprintf("duplicate character id %q (first at line %d)", c.ID, lines[c.ID])
		}
		if msg != "" {
			return &datasets.InputError{File: uri, Line: n, Msg: msg}
		}
		lines[c.ID] = n
		out[c.ID] = c
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, &datasets.InputError{File: uri, Msg: "no characters"}
	}
	return out, nil
}

func parseCharacter(raw []byte) (Character, string) {
	var l characterJSON
	if msg := decodeLine(raw, &l, "a character"); msg != "" {
		return Character{}, msg
	}
	if l.ID == nil || !slug.MatchString(*l.ID) {
		return Character{}, fmt.Sprintf(`"id" must be a lower-case slug such as "keeper", got %s`, show(l.ID))
	}
	c := Character{ID: *l.ID, Profiles: map[string]schemas.RMTCharacter{}}
	bad := func(format string, args ...any) (Character, string) {
		return Character{}, fmt.Sprintf("character %s: ", c.ID) + fmt.Sprintf(format, args...)
	}
	if l.Kind == nil || (*l.Kind != "custom" && *l.Kind != "abstract") {
		return bad(`"kind" must be "custom" (a detailed background) or "abstract" (a few traits), got %s`, show(l.Kind))
	}
	c.Kind = *l.Kind
	for _, lp := range []struct {
		lang string
		p    *profileJSON
	}{{scorer.English, l.EN}, {scorer.Chinese, l.ZH}} {
		if lp.p == nil {
			continue
		}
		p, msg := parseProfile(*lp.p, c)
		if msg != "" {
			return bad("%s: %s", lp.lang, msg)
		}
		c.Profiles[lp.lang] = p
	}
	if len(c.Profiles) == 0 {
		return bad(`no profile: give "en", "zh" or both`)
	}
	return c, ""
}

func parseProfile(p profileJSON, c Character) (schemas.RMTCharacter, string) {
	out := schemas.RMTCharacter{ID: c.ID, Kind: c.Kind, Traits: p.Traits, Keywords: p.Keywords, Forbidden: p.Forbidden}
	if p.Name == nil || strings.TrimSpace(*p.Name) == "" || *p.Name != strings.TrimSpace(*p.Name) {
		return out, `"name" is missing, empty or has surrounding white space`
	}
	out.Name = *p.Name
	if p.Background != nil {
		out.Background = *p.Background
	}
	switch {
	case c.Kind == "custom" && (strings.TrimSpace(out.Background) == "" || len(p.Traits) > 0):
		return out, `a custom character has a "background" and no "traits"`
	case c.Kind == "abstract" && (p.Background != nil || len(p.Traits) == 0 || len(p.Traits) > 6):
		return out, `an abstract character has 1 to 6 "traits" and no "background"`
	}
	for i, t := range p.Traits {
		if strings.TrimSpace(t) == "" {
			return out, fmt.Sprintf("trait %d is empty", i+1)
		}
	}
	if msg := keywords("keywords", p.Keywords, true); msg != "" {
		return out, msg
	}
	return out, keywords("forbidden", p.Forbidden, false)
}

// keywords checks a list of lower-case phrases: each non-empty, lower
// case, without surrounding white space, none repeated; at least one when
// required.
func keywords(field string, ks []string, required bool) string {
	if required && len(ks) == 0 {
		return fmt.Sprintf("%q needs at least one entry", field)
	}
	for i, k := range ks {
		switch {
		case strings.TrimSpace(k) == "":
			return fmt.Sprintf("%s entry %d is empty", field, i+1)
		case k != strings.TrimSpace(k) || k != strings.ToLower(k):
			return fmt.Sprintf("%s entry %q must be lower case without surrounding white space", field, k)
		case slices.Contains(ks[:i], k):
			return fmt.Sprintf("%s entry %q repeats", field, k)
		}
	}
	return ""
}

// ReadDialogues parses and validates DialoguesFile (uri names it in
// errors) against the characters. The first broken rule is a
// *datasets.InputError naming the file, the line, the dialogue and, where
// it applies, the turn or the preference.
func ReadDialogues(r io.Reader, uri string, chars map[string]Character) ([]schemas.RMTBenchDialogue, error) {
	var out []schemas.RMTBenchDialogue
	lines := map[string]int{}
	err := datasets.EachLine(r, uri, func(n int, raw []byte) error {
		d, msg := parseDialogue(raw, chars)
		if msg == "" && lines[d.ID] > 0 {
			msg = fmt.Sprintf("duplicate dialogue id %q (first at line %d)", d.ID, lines[d.ID])
		}
		if msg != "" {
			return &datasets.InputError{File: uri, Line: n, Msg: msg}
		}
		lines[d.ID] = n
		d.SourceFile, d.SourceLine = uri, int32(n)
		out = append(out, d)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, &datasets.InputError{File: uri, Msg: "no dialogues"}
	}
	return out, nil
}

func parseDialogue(raw []byte, chars map[string]Character) (schemas.RMTBenchDialogue, string) {
	var l dialogueJSON
	if msg := decodeLine(raw, &l, "a dialogue"); msg != "" {
		return schemas.RMTBenchDialogue{}, msg
	}
	if l.ID == nil || strings.TrimSpace(*l.ID) == "" || *l.ID != strings.TrimSpace(*l.ID) {
		return schemas.RMTBenchDialogue{}, `"id" is missing, empty or has surrounding white space`
	}
	id := *l.ID
	bad := func(format string, args ...any) (schemas.RMTBenchDialogue, string) {
		return schemas.RMTBenchDialogue{}, fmt.Sprintf("dialogue %s: ", id) + fmt.Sprintf(format, args...)
	}
	if l.Language == nil || (*l.Language != scorer.English && *l.Language != scorer.Chinese) {
		return bad(`"language" must be "en" or "zh", got %s`, show(l.Language))
	}
	lang := *l.Language
	if l.Character == nil {
		return bad(`missing "character"`)
	}
	c, ok := chars[*l.Character]
	if !ok {
		return bad("character %q is not in %s", *l.Character, CharactersFile)
	}
	profile, ok := c.Profiles[lang]
	if !ok {
		return bad("character %q has no %q profile", c.ID, lang)
	}
	if l.Scenario == nil || !slug.MatchString(*l.Scenario) || strings.Contains(*l.Scenario, "-") {
		return bad(`"scenario" must be a lower-case slug such as "user_preference", got %s`, show(l.Scenario))
	}
	if l.Motivation == nil || strings.TrimSpace(*l.Motivation) == "" {
		return bad(`missing or empty "motivation"`)
	}
	if msg := keywords("topics", l.Topics, true); msg != "" {
		return bad("%s", msg)
	}
	if msg := keywords("unsafe", l.Unsafe, false); msg != "" {
		return bad("%s", msg)
	}
	spec := schemas.RMTDialogue{Topics: l.Topics, Unsafe: l.Unsafe}
	for i, pj := range l.Preferences {
		if pj.Statement == nil || strings.TrimSpace(*pj.Statement) == "" {
			return bad(`preference %d: missing or empty "statement"`, i+1)
		}
		if msg := keywords("keywords", pj.Keywords, true); msg != "" {
			return bad("preference %d: %s", i+1, msg)
		}
		p := schemas.RMTPreference{Statement: *pj.Statement, Keywords: pj.Keywords}
		if len(scorer.PreferencesStated([]schemas.RMTPreference{p}, []string{p.Statement})) == 0 {
			return bad("preference %d: the statement %q holds none of its keywords, so stating it would not count", i+1, p.Statement)
		}
		spec.Preferences = append(spec.Preferences, p)
	}
	dims, msg := dimensions(l.Dimensions)
	if msg != "" {
		return bad("%s", msg)
	}
	spec.Dimensions = dims
	row := schemas.RMTBenchDialogue{ID: id, Language: lang, Scenario: *l.Scenario, CharacterID: c.ID,
		CharacterName: profile.Name, CharacterKind: c.Kind, Motivation: *l.Motivation}
	switch {
	case len(l.Turns) > 0 && l.MaxTurns != nil:
		return bad(`give "turns" (fixed user turns) or "max_turns" (a simulated user), not both`)
	case len(l.Turns) > 0:
		row.Mode, row.MaxTurns = schemas.RMTModeFixed, int32(len(l.Turns))
		for i, tj := range l.Turns {
			if tj.User == nil || strings.TrimSpace(*tj.User) == "" {
				return bad(`turn %d: missing or empty "user"`, i+1)
			}
			t := schemas.RMTTurn{User: *tj.User}
			if tj.Reference != nil {
				t.Reference = *tj.Reference
			}
			spec.Turns = append(spec.Turns, t)
		}
	case l.MaxTurns != nil:
		if *l.MaxTurns < 1 || *l.MaxTurns > MaxTurnsLimit {
			return bad(`"max_turns" must be in 1..%d, got %d`, MaxTurnsLimit, *l.MaxTurns)
		}
		row.Mode, row.MaxTurns = schemas.RMTModeSimulated, int32(*l.MaxTurns)
	default:
		return bad(`give "turns" (fixed user turns) or "max_turns" (a simulated user)`)
	}
	var err error
	if row.CharacterJSON, err = encode(profile); err != nil {
		return bad("%v", err)
	}
	if row.DialogueJSON, err = encode(spec); err != nil {
		return bad("%v", err)
	}
	return row, ""
}

// dimensions validates a dialogue's dimensions: known, none repeated; all
// of them, in order, when none is given.
func dimensions(names []string) ([]string, string) {
	if len(names) == 0 {
		out := make([]string, len(scorer.Dimensions))
		for i, d := range scorer.Dimensions {
			out[i] = string(d)
		}
		return out, ""
	}
	for i, n := range names {
		if _, err := scorer.ParseDimension(n); err != nil {
			return nil, err.Error()
		}
		if slices.Contains(names[:i], n) {
			return nil, fmt.Sprintf("dimension %q repeats", n)
		}
	}
	return names, ""
}

// encode is v as JSON without HTML escaping or a trailing newline.
func encode(v any) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", fmt.Errorf("encode: %w", err)
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

// show quotes a field's value for an error message, or says it is missing.
func show(s *string) string {
	if s == nil {
		return "nothing"
	}
	return fmt.Sprintf("%q", *s)
}
