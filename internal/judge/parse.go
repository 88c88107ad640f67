// Package judge holds what every LLM judge in benchline shares: tolerant
// parsing of a judge's JSON reply into a caller's struct, the audit record
// (Verdict) results store for every judge call, the ask-retry-record helper
// (Ask), the resolution of a panel of judges (Resolve), and agreement
// statistics (Krippendorff's alpha, Cohen's and Fleiss' kappa, position
// consistency). See docs/judges.md.
package judge

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// ErrUnparseable marks a judge reply that holds no JSON object the caller's
// struct accepts. Every *ParseError wraps it.
var ErrUnparseable = errors.New("judge: unparseable reply")

// ParseError says why a reply did not parse, with a short excerpt of the
// reply for the audit record.
type ParseError struct {
	// Reason is what is wrong, e.g. "no JSON object in the reply" or
	// `missing required field "verdicts[0].met"`.
	Reason string
	// Excerpt is up to ExcerptLen characters of the reply where the problem
	// is (the start of the candidate object, or of the reply).
	Excerpt string
	// Err is the underlying error (a JSON syntax or type error, a
	// Validate error), or nil.
	Err error
}

// ExcerptLen is the most characters (runes) a ParseError quotes.
const ExcerptLen = 120

func (e *ParseError) Error() string {
	msg := "judge: unparseable reply: " + e.Reason
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return fmt.Sprintf("%s (reply %q)", msg, e.Excerpt)
}

// Unwrap returns ErrUnparseable and the underlying error.
func (e *ParseError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrUnparseable}
	}
	return []error{ErrUnparseable, e.Err}
}

// Validator is implemented by reply structs with rules beyond required
// fields (e.g. a verdict for every rubric id). Decode calls Validate after
// decoding; its error makes the reply unparseable.
type Validator interface {
	Validate() error
}

// Limits of the search for JSON objects in a reply, so that a hostile or
// degenerate reply costs bounded time.
const (
	// MaxReplyBytes is the longest reply (after <think> blocks are removed)
	// that is searched; a longer one is unparseable.
	MaxReplyBytes = 1 << 20
	// maxStarts is the most plausible object starts ('{' followed by '"'
	// or '}') tried in one reply.
	maxStarts = 256
	// maxCandidates is the most top-level objects collected from a reply.
	maxCandidates = 16
)

var (
	thinkBlock = regexp.MustCompile(`(?is)<(?:think|thinking)>.*?</(?:think|thinking)>`)
	thinkOpen  = regexp.MustCompile(`(?i)<(?:think|thinking)>`)
	thinkClose = regexp.MustCompile(`(?i)</(?:think|thinking)>`)
	fence      = regexp.MustCompile("(?s)```[^\n`]*\n(.*?)```")
)

// StripThinking removes reasoning from a reply: every <think>…</think> (or
// <thinking>…</thinking>) block; then, if a closing tag is left (the opening
// one was in the prompt), everything up to the last closing tag; then, if an
// opening tag is left (the reasoning was cut off), everything from it on.
func StripThinking(reply string) string {
	s := thinkBlock.ReplaceAllString(reply, "")
	if locs := thinkClose.FindAllStringIndex(s, -1); locs != nil {
		s = s[locs[len(locs)-1][1]:]
	}
	if loc := thinkOpen.FindStringIndex(s); loc != nil {
		s = s[:loc[0]]
	}
	return s
}

// span is one top-level JSON object found in a text.
type span struct {
	start  int
	text   string
	fenced bool // inside a ``` code block
}

// candidates returns the top-level JSON objects of text in preference
// order: objects inside fenced code blocks before the others, and within
// each group the last first (a reply that reasons before answering puts its
// answer last). An object nested in another is not a candidate.
func candidates(text string) []span {
	var found []span
	starts := 0
	for i := 0; i < len(text) && len(found) < maxCandidates && starts < maxStarts; {
		j := strings.IndexByte(text[i:], '{')
		if j < 0 {
			break
		}
		i += j
		if !plausibleStart(text[i+1:]) {
			i++
			continue
		}
		starts++
		dec := json.NewDecoder(strings.NewReader(text[i:]))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			i++
			continue
		}
		found = append(found, span{start: i, text: string(raw)})
		i += len(raw)
	}
	fences := fence.FindAllStringSubmatchIndex(text, -1)
	for k := range found {
		for _, f := range fences {
			if found[k].start >= f[2] && found[k].start < f[3] {
				found[k].fenced = true
			}
		}
	}
	// Reverse, then move fenced objects first keeping that order.
	for a, b := 0, len(found)-1; a < b; a, b = a+1, b-1 {
		found[a], found[b] = found[b], found[a]
	}
	sort.SliceStable(found, func(a, b int) bool { return found[a].fenced && !found[b].fenced })
	return found
}

// plausibleStart reports whether the text after a '{' can continue a JSON
// object: optional whitespace, then '"' or '}'. This skips LaTeX and prose
// braces without trying to decode them.
func plausibleStart(rest string) bool {
	rest = strings.TrimLeft(rest, " \t\r\n")
	return rest != "" && (rest[0] == '"' || rest[0] == '}')
}

// prepare strips reasoning and checks the size of a reply.
func prepare(reply string) (string, error) {
	text := StripThinking(reply)
	if len(text) > MaxReplyBytes {
		return "", &ParseError{Reason: fmt.Sprintf("reply is %d bytes, longer than %d", len(text), MaxReplyBytes), Excerpt: excerpt(reply)}
	}
	return text, nil
}

// noObject is the error for a reply without a JSON object. It quotes the
// reply without reasoning, or the reply itself when nothing else is left.
func noObject(reply, text string) error {
	if strings.TrimSpace(text) == "" {
		text = reply
	}
	return &ParseError{Reason: "no JSON object in the reply", Excerpt: excerpt(text)}
}

// Extract returns the JSON object a judge reply holds, as it appears in the
// reply. It tolerates <think> blocks (see StripThinking), code fences,
// leading prose and trailing text. When the reply holds several top-level
// objects it prefers one inside a fenced code block, then the last one. A
// reply with no object is a *ParseError.
func Extract(reply string) (string, error) {
	text, err := prepare(reply)
	if err != nil {
		return "", err
	}
	c := candidates(text)
	if len(c) == 0 {
		return "", noObject(reply, text)
	}
	return c[0].text, nil
}

// Decode finds the JSON object in reply that decodes strictly into v (a
// non-nil pointer to a struct) and stores it there. Strictly means: a key
// that names no field is an error; every field is required unless its json
// tag has omitempty, in nested structs, slices and maps of structs too (a
// JSON null counts as missing); keys equal but for case are duplicates and
// an error; and when v implements Validator, Validate must return nil. The
// candidates are tried in Extract's order and the first that decodes wins,
// so a reply that quotes an example object before its answer still parses.
// When none decodes, the error is the *ParseError of the preferred
// candidate. A v that is not a non-nil pointer is a programming error and
// is returned as a plain error.
func Decode(reply string, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("judge: decode: need a non-nil pointer, got %T", v)
	}
	text, err := prepare(reply)
	if err != nil {
		return err
	}
	cands := candidates(text)
	if len(cands) == 0 {
		return noObject(reply, text)
	}
	var first error
	for _, c := range cands {
		fresh := reflect.New(rv.Elem().Type())
		if err := decodeStrict(c.text, fresh.Interface()); err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		rv.Elem().Set(fresh.Elem())
		return nil
	}
	return first
}

// decodeStrict decodes one JSON object into v under Decode's rules.
func decodeStrict(obj string, v any) error {
	fail := func(reason string, err error) error {
		return &ParseError{Reason: reason, Excerpt: excerpt(obj), Err: err}
	}
	if path := duplicateKey(obj); path != "" {
		return fail(fmt.Sprintf("duplicate key %q", path), nil)
	}
	dec := json.NewDecoder(strings.NewReader(obj))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fail("does not fit the verdict", err)
	}
	if path := missingField(reflect.TypeOf(v), json.RawMessage(obj), ""); path != "" {
		return fail(fmt.Sprintf("missing required field %q", path), nil)
	}
	if val, ok := v.(Validator); ok {
		if err := val.Validate(); err != nil {
			return fail("invalid verdict", err)
		}
	}
	return nil
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// missingField returns the path of the first required field of type t that
// raw lacks, or "". raw has already decoded into t, so shapes match.
func missingField(t reflect.Type, raw json.RawMessage, path string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return ""
	}
	switch t.Kind() {
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return ""
		}
		return missingInStruct(t, obj, path)
	case reflect.Slice, reflect.Array:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return ""
		}
		for i, it := range items {
			if p := missingField(t.Elem(), it, fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	case reflect.Map:
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return ""
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p := missingField(t.Elem(), m[k], join(path, k)); p != "" {
				return p
			}
		}
	}
	return ""
}

func missingInStruct(t reflect.Type, obj map[string]json.RawMessage, path string) string {
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" && opts == "" {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			if p := missingInStruct(ft, obj, path); p != "" {
				return p
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		raw, ok := lookup(obj, name)
		if !ok || string(raw) == "null" {
			if !strings.Contains(","+opts+",", ",omitempty,") {
				return join(path, name)
			}
			continue
		}
		if p := missingField(f.Type, raw, join(path, name)); p != "" {
			return p
		}
	}
	return ""
}

// lookup finds key in obj as encoding/json does: exactly, else ignoring case.
func lookup(obj map[string]json.RawMessage, key string) (json.RawMessage, bool) {
	if v, ok := obj[key]; ok {
		return v, true
	}
	for k, v := range obj {
		if strings.EqualFold(k, key) {
			return v, true
		}
	}
	return nil, false
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// duplicateKey returns the path of the first key that repeats in an object
// of obj (ignoring case, as encoding/json matches fields), or "".
func duplicateKey(obj string) string {
	dec := json.NewDecoder(strings.NewReader(obj))
	var walk func(path string) string
	walk = func(path string) string {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		d, ok := tok.(json.Delim)
		if !ok {
			return ""
		}
		switch d {
		case '{':
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return ""
				}
				k, _ := kt.(string)
				lk := strings.ToLower(k)
				if seen[lk] {
					return join(path, k)
				}
				seen[lk] = true
				if p := walk(join(path, k)); p != "" {
					return p
				}
			}
		case '[':
			for i := 0; dec.More(); i++ {
				if p := walk(fmt.Sprintf("%s[%d]", path, i)); p != "" {
					return p
				}
			}
		}
		_, _ = dec.Token() // the closing delimiter
		return ""
	}
	return walk("")
}

// excerpt returns the start of s, trimmed, at most ExcerptLen runes, with
// "…" when cut.
func excerpt(s string) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= ExcerptLen {
		return s
	}
	n := 0
	for i := range s {
		if n == ExcerptLen {
			return s[:i] + "…"
		}
		n++
	}
	return s
}
