// Package omnicloze builds Omni-Cloze-style caption evaluation items
// (schemas.OmniClozeItem): cloze passages about media clips, each blank
// with its right option and distractors (plus "Not Given", offered to
// every judge). Items are hand-written, or written at build time by a
// writer model from reference detailed captions (a datasets.Generator;
// see generate.go); every item is validated by the lexical filler
// (scorers/omnicloze.Fill) before it is kept (validate.go). It bundles
// fixtures written for benchline. Benchmark registers it.
//
// A caption line (captions.jsonl):
//
//	{"id": "mu-01", "domain": "music", "subcategory": "live_performance",
//	 "media": {"kind": "audio", "uri": "https://…/mu-01.wav", "sha256": "…", "type": "audio/wav"},
//	 "caption": "…"}
//
// A hand-written item line (any other *.jsonl file) adds the passage and
// its blanks:
//
//	"passage": "A [BLANK_1] plays …",
//	"blanks": [{"blank": 1, "options": ["violin", "cello", "flute"], "answer": "violin"}]
package omnicloze

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/source"
	"github.com/benchline/benchline/schemas"
)

// Name is the dataset name.
const Name = "omnicloze"

// Embedded is the source URI of the fixtures bundled in the binary:
// captions and items written for benchline, not Omni-Cloze's data.
const Embedded = "embedded://omnicloze"

//go:embed fixtures
var fixtures embed.FS

// Fixtures returns the bundled fixture files as a source Location.
func Fixtures() source.Location { return datasets.EmbeddedFixtures(fixtures, "fixtures", Embedded) }

// HandWritten is the Origin of items read from item files.
const HandWritten = "hand-written"

// A Caption is one reference detailed caption of a media clip: what a
// writer turns into a cloze item.
type Caption struct {
	ID          string
	Domain      string
	Subcategory string
	Media       Media
	Text        string
	File        string
	Line        int
}

// Media references one clip.
type Media struct {
	Kind   string `json:"kind"`
	URI    string `json:"uri"`
	SHA256 string `json:"sha256"`
	Type   string `json:"type"`
}

// Item is the row of a cloze item on this caption with passage and
// blanks, written by origin (the blanks are encoded without HTML escaping).
func (c Caption) Item(passage string, blanks []schemas.ClozeBlank, origin string) schemas.OmniClozeItem {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(blanks) // strings and ints: cannot fail
	return schemas.OmniClozeItem{
		ID: c.ID, MediaKind: c.Media.Kind, MediaURI: c.Media.URI, MediaSHA256: c.Media.SHA256, MediaType: c.Media.Type,
		Domain: c.Domain, Subcategory: c.Subcategory, Caption: c.Text, Passage: passage,
		NumBlanks: int32(len(blanks)), BlanksJSON: strings.TrimSuffix(buf.String(), "\n"), Origin: origin,
		SourceFile: c.File, SourceLine: int32(c.Line),
	}
}

// Parser parses caption and item files, keeping ids unique across every
// file it reads (a generated item takes its caption's id). The zero value
// is ready to use.
type Parser struct {
	seen map[string]string // id -> file:line
}

// The source shapes of a line; pointers tell a missing field from an empty
// one.
type lineJSON struct {
	ID          *string  `json:"id"`
	Domain      *string  `json:"domain"`
	Subcategory *string  `json:"subcategory"`
	Media       *Media   `json:"media"`
	Caption     *string  `json:"caption"`
	Passage     *string  `json:"passage"`
	Blanks      []blankJ `json:"blanks"`
}

type blankJ struct {
	Blank   *int     `json:"blank"`
	Options []string `json:"options"`
	Answer  *string  `json:"answer"`
}

var (
	slug    = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	sha256H = regexp.MustCompile(`^[0-9a-f]{64}$`)
	mime    = regexp.MustCompile(`^[a-z]+/[a-z0-9.+-]+$`)
	scheme  = regexp.MustCompile(`^[a-z][a-z0-9+.-]*:\S+$`)
)

// ParseCaptions parses a captions file (uri names it in errors and
// provenance). The first broken rule is a *datasets.InputError naming the
// file, the line and the caption.
func (p *Parser) ParseCaptions(r io.Reader, uri string) ([]Caption, error) {
	var out []Caption
	err := p.each(r, uri, false, func(c Caption, _ *lineJSON) error {
		out = append(out, c)
		return nil
	})
	return out, err
}

// ParseItems parses a hand-written item file: caption lines with a
// passage and blanks. Each item must pass the checks of CheckItem: a
// hand-written item that fails them is bad input (a person fixes it),
// not a rejection.
func (p *Parser) ParseItems(r io.Reader, uri string) ([]schemas.OmniClozeItem, error) {
	var out []schemas.OmniClozeItem
	err := p.each(r, uri, true, func(c Caption, l *lineJSON) error {
		bad := func(format string, args ...any) error {
			return &datasets.InputError{File: uri, Line: c.Line, Msg: fmt.Sprintf("item %s: ", c.ID) + fmt.Sprintf(format, args...)}
		}
		if l.Passage == nil || strings.TrimSpace(*l.Passage) == "" {
			return bad(`missing or empty "passage"`)
		}
		blanks := make([]schemas.ClozeBlank, len(l.Blanks))
		for i, b := range l.Blanks {
			if b.Blank == nil || b.Answer == nil {
				return bad(`blank %d of the list needs "blank" and "answer"`, i+1)
			}
			blanks[i] = schemas.ClozeBlank{Blank: *b.Blank, Options: b.Options, Answer: *b.Answer}
		}
		it := c.Item(*l.Passage, blanks, HandWritten)
		if v := CheckItem(&it, blanks); v.Reason != "" {
			return bad("%s: %s", v.Reason, v.Detail)
		}
		out = append(out, it)
		return nil
	})
	return out, err
}

// each parses every line of r as a caption (with a passage and blanks when
// items) and calls fn with it.
func (p *Parser) each(r io.Reader, uri string, items bool, fn func(Caption, *lineJSON) error) error {
	if p.seen == nil {
		p.seen = map[string]string{}
	}
	return datasets.EachLine(r, uri, func(n int, raw []byte) error {
		var l lineJSON
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return &datasets.InputError{File: uri, Line: n, Msg: "not a caption line: " + err.Error()}
		}
		if dec.More() {
			return &datasets.InputError{File: uri, Line: n, Msg: "more than one JSON value on the line"}
		}
		c, msg := caption(&l, items)
		if msg != "" {
			return &datasets.InputError{File: uri, Line: n, Msg: msg}
		}
		if prev, dup := p.seen[c.ID]; dup {
			return &datasets.InputError{File: uri, Line: n, Msg: fmt.Sprintf("duplicate id %q (first at %s)", c.ID, prev)}
		}
		p.seen[c.ID] = fmt.Sprintf("%s:%d", uri, n)
		c.File, c.Line = uri, n
		return fn(c, &l)
	})
}

// caption validates the caption fields of a line, and returns a message
// naming the rule it breaks. A captions file's line has no passage nor
// blanks; an item file's must have them (checked by the caller).
func caption(l *lineJSON, items bool) (Caption, string) {
	if l.ID == nil || strings.TrimSpace(*l.ID) == "" || *l.ID != strings.TrimSpace(*l.ID) {
		return Caption{}, `missing or empty "id", or white space around it`
	}
	id := *l.ID
	bad := func(format string, args ...any) (Caption, string) {
		return Caption{}, fmt.Sprintf("caption %s: ", id) + fmt.Sprintf(format, args...)
	}
	switch {
	case l.Domain == nil || !slug.MatchString(*l.Domain):
		return bad(`"domain" must be a lower-case slug such as "music", got %s`, show(l.Domain))
	case l.Subcategory == nil || !slug.MatchString(*l.Subcategory):
		return bad(`"subcategory" must be a lower-case slug such as "live_performance", got %s`, show(l.Subcategory))
	case l.Caption == nil || strings.TrimSpace(*l.Caption) == "":
		return bad(`missing or empty "caption"`)
	case l.Media == nil:
		return bad(`missing "media"`)
	case !items && (l.Passage != nil || l.Blanks != nil):
		return bad(`a captions file line has no "passage" nor "blanks" (hand-written items go in another .jsonl file)`)
	}
	if msg := checkMedia(*l.Media); msg != "" {
		return bad("media: %s", msg)
	}
	return Caption{ID: id, Domain: *l.Domain, Subcategory: *l.Subcategory, Media: *l.Media, Text: *l.Caption}, ""
}

// checkMedia checks a media reference: a known kind, a URI with a scheme,
// a hex sha256 and a MIME type that fits the kind (audio: audio/*;
// visual: image/* or video/*; audio-visual: video/*).
func checkMedia(m Media) string {
	var fits bool
	switch m.Kind {
	case schemas.MediaAudio:
		fits = strings.HasPrefix(m.Type, "audio/")
	case schemas.MediaVisual:
		fits = strings.HasPrefix(m.Type, "image/") || strings.HasPrefix(m.Type, "video/")
	case schemas.MediaAudioVisual:
		fits = strings.HasPrefix(m.Type, "video/")
	default:
		return fmt.Sprintf("kind %q is not %s, %s or %s", m.Kind, schemas.MediaAudio, schemas.MediaVisual, schemas.MediaAudioVisual)
	}
	switch {
	case !scheme.MatchString(m.URI):
		return fmt.Sprintf("uri %q is not a URI with a scheme (https://, s3://, …)", m.URI)
	case !sha256H.MatchString(m.SHA256):
		return fmt.Sprintf("sha256 %q is not 64 lower-case hex digits", m.SHA256)
	case !mime.MatchString(m.Type):
		return fmt.Sprintf("type %q is not a MIME type", m.Type)
	case !fits:
		return fmt.Sprintf("type %s does not fit kind %s", m.Type, m.Kind)
	}
	return ""
}

// show quotes a field's value for an error message, or says it is missing.
func show(s *string) string {
	if s == nil {
		return "nothing"
	}
	return fmt.Sprintf("%q", *s)
}
