package omnicloze

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/schemas"
)

// The prompt versions. A change to a template, or to the reply it asks
// for, bumps its version; every judge call records the version it used
// (judge.Verdict.PromptVersion), and results record the caption prompt's.
const (
	// CaptionPromptVersion is the request to the model under test: caption
	// the clip in detail.
	CaptionPromptVersion = "omnicloze-caption/1"
	// FillPromptVersion is the judge's: fill every blank of the item from
	// the caption alone, in one call.
	FillPromptVersion = "omnicloze-fill/1"
)

// Media parts. The OpenAI API (and go-openai) carries images by URL as an
// image_url content part; it has no URL form for audio (input_audio takes
// base64 data) nor any part for video. So an image (a visual item whose
// MIME type is image/*) is sent as an image_url part, and every other clip
// (audio, video, audio-visual) by its URI in the text part: a provider or
// proxy that fetches media named in the prompt can caption it, and one that
// cannot will say so in its caption.
const (
	PartImageURL = "image_url"
	PartText     = "text"
)

// MediaPart says how the caption request carries an item's media.
func MediaPart(it *schemas.OmniClozeItem) string {
	if it.MediaKind == schemas.MediaVisual && strings.HasPrefix(it.MediaType, "image/") {
		return PartImageURL
	}
	return PartText
}

// captionInstruction is what the model under test is asked, by media kind.
func captionInstruction(it *schemas.OmniClozeItem) string {
	switch {
	case it.MediaKind == schemas.MediaAudio:
		return "Describe in detail everything you hear in this audio clip: every sound source, any speech or singing, " +
			"any music and its instruments, the qualities of the sounds (loudness, pitch, tempo, timbre), the setting " +
			"they suggest, and the order in which things happen."
	case it.MediaKind == schemas.MediaVisual && MediaPart(it) == PartImageURL:
		return "Describe in detail everything you see in this image: the people, animals and objects, their appearance, " +
			"colours, positions and actions, the setting, the lighting and any visible text."
	case it.MediaKind == schemas.MediaVisual:
		return "Describe in detail everything you see in this video (its sound is not part of this task): the people, " +
			"animals and objects, their appearance, colours and actions, the setting, any visible text, and the order " +
			"in which things happen."
	default:
		return "Describe in detail everything you see and hear in this video: the people, animals and objects and what " +
			"they do, the setting, any visible text, every sound source, any speech, singing or music, and the order " +
			"in which things happen."
	}
}

// CaptionMessages is the request to the model under test
// (CaptionPromptVersion): one user message whose text part holds the
// instruction and the media's URI and MIME type, with an image_url part for
// images (see MediaPart). The text names the URI for every kind, so that
// requests for different clips differ in their text (the key of reference
// answers) and a text-only model knows what it was asked about.
func CaptionMessages(it *schemas.OmniClozeItem) []openai.ChatCompletionMessage {
	text := captionInstruction(it) + " Write one caption in plain prose, without lists or headings.\n\n" +
		fmt.Sprintf("Media (%s, %s): %s", it.MediaKind, it.MediaType, it.MediaURI)
	parts := []openai.ChatMessagePart{{Type: openai.ChatMessagePartTypeText, Text: text}}
	if MediaPart(it) == PartImageURL {
		parts = append(parts, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeImageURL,
			ImageURL: &openai.ChatMessageImageURL{URL: it.MediaURI, Detail: openai.ImageURLDetailHigh}})
	}
	return []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, MultiContent: parts}}
}

// BlankAnswer is a judge's answer for one blank: the option's letter (or
// its text).
type BlankAnswer struct {
	Blank  int    `json:"blank"`
	Option string `json:"option"`
}

// FillReply is what the judge replies: one answer per blank. Every field
// is required (judge.Decode).
type FillReply struct {
	Answers []BlankAnswer `json:"answers"`
}

// ErrReply is wrapped by Validate's errors.
var ErrReply = errors.New("omnicloze: invalid fill reply")

// Validate rejects a blank number below 1, a blank answered twice and an
// empty option. A blank the reply leaves out, a number that names no
// blank, or an option that names none of the blank's is not an error of
// the reply's form: the task records it for that blank (see Task).
func (r FillReply) Validate() error { return answeredBlanks.Check(r.Answers) }

var answeredBlanks = judge.UniqueKeys[BlankAnswer, int]{
	Key: func(a BlankAnswer) (int, bool) { return a.Blank, a.Blank >= 1 },
	NoKey: func(i int, a BlankAnswer) error {
		return fmt.Errorf("%w: answer %d names blank %d", ErrReply, i, a.Blank)
	},
	Twice: func(n int) error { return fmt.Errorf("%w: blank %d answered twice", ErrReply, n) },
	Item: func(n int, a BlankAnswer) error {
		if strings.TrimSpace(a.Option) == "" {
			return fmt.Errorf("%w: blank %d has an empty option", ErrReply, n)
		}
		return nil
	},
}

// FillSchema is the JSON schema of FillReply, sent as the response format
// of judge calls (strict: every field required, nothing else).
var FillSchema = &judge.Schema{Name: "cloze_answers", Strict: true, JSON: json.RawMessage(`{
  "type": "object",
  "properties": {
    "answers": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "blank": {"type": "integer"},
          "option": {"type": "string"}
        },
        "required": ["blank", "option"],
        "additionalProperties": false
      }
    }
  },
  "required": ["answers"],
  "additionalProperties": false
}`)}

const fillSystem = `You fill in a cloze passage about a media clip (audio, an image or a video) using only a caption of that clip. You do not see or hear the clip itself.

Each blank [BLANK_k] of the passage has lettered options; the last option of every blank is "Not Given".
- Choose the option that the caption states or clearly describes.
- Choose "Not Given" when the caption does not say. Never guess from the passage, from the other options or from what is usual.
Answer every blank, each on its own.

Reply with one JSON object and nothing else, giving each option by its letter, in this form:
{"answers": [{"blank": 1, "option": "B"}]}`

// Letter is the letter of option i (0-based): A, B, ….
func Letter(i int) string { return string(rune('A' + i)) }

// FillMessages is the judge's prompt (FillPromptVersion): the caption, the
// passage and every blank's lettered options with Not Given last.
func FillMessages(caption, passage string, blanks []schemas.ClozeBlank) []openai.ChatCompletionMessage {
	var b strings.Builder
	b.WriteString("## Caption\n\n<<<\n")
	b.WriteString(caption)
	b.WriteString("\n>>>\n\n## Cloze passage\n\n<<<\n")
	b.WriteString(passage)
	b.WriteString("\n>>>\n\n## Options\n")
	nums := make([]string, len(blanks))
	for i, bl := range blanks {
		nums[i] = fmt.Sprint(bl.Blank)
		fmt.Fprintf(&b, "\n%s\n", Marker(bl.Blank))
		for j, o := range bl.Options {
			fmt.Fprintf(&b, "%s) %s\n", Letter(j), o)
		}
		fmt.Fprintf(&b, "%s) %s\n", Letter(len(bl.Options)), NotGiven)
	}
	fmt.Fprintf(&b, "\nReply with the JSON object: one answer for each of blanks %s.\n", strings.Join(nums, ", "))
	return []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: fillSystem},
		{Role: openai.ChatMessageRoleUser, Content: b.String()},
	}
}

// Choose reads a judge's option for blank b: a letter (A, b), "(C)", "D."
// …) among the blank's options and Not Given, or the text of one of them
// (case and spacing ignored). It returns the option's text or NotGiven,
// and false when the answer names none of them.
func Choose(b schemas.ClozeBlank, option string) (string, bool) {
	s := strings.TrimSpace(option)
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(s, "("), "."), ")"))
	if len(s) == 1 {
		i := int(strings.ToUpper(s)[0]) - 'A'
		switch {
		case i >= 0 && i < len(b.Options):
			return b.Options[i], true
		case i == len(b.Options):
			return NotGiven, true
		}
	}
	n := normalise(option)
	if n == normalise(NotGiven) {
		return NotGiven, true
	}
	for _, o := range b.Options {
		if normalise(o) == n {
			return o, true
		}
	}
	return "", false
}

// FillOracle is the oracle of a judge request: the lexical filler's
// answers (Fill) for caption, as the JSON reply the prompt asks for, with
// each option by its letter.
func FillOracle(caption, passage string, blanks []schemas.ClozeBlank) string {
	r := FillReply{Answers: make([]BlankAnswer, len(blanks))}
	for i, f := range Fill(caption, passage, blanks) {
		letter := Letter(len(blanks[i].Options))
		if j := OptionIndex(blanks[i], f.Choice); j >= 0 {
			letter = Letter(j)
		}
		r.Answers[i] = BlankAnswer{Blank: f.Blank, Option: letter}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(r) // ints and strings: cannot fail
	return strings.TrimSuffix(buf.String(), "\n")
}
