package omnicloze

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/schemas"
)

// Generation. With a writer (the "writer" parameter), Plan reads the
// source's captions and splits them into units of unit_items captions;
// each unit (one activity) asks the writer once per caption for a cloze
// item (WriterMessages; the oracle is MakeCloze over the caption and the
// other captions of its domain), validates the reply (ReplyItem, then
// CheckItem) and saves every reply with its audit record and verdict as a
// JSON-lines file staged by its sha256. Finish adds the units' files to
// the plan's sources; Build keeps the items that passed, after the
// hand-written ones. The writer, blanks, distractors and seed are part of
// the version id; a rebuild with the same parameters reuses the version
// without calling any model.

// WriterPromptVersion is the cloze writer's prompt; a change to it, or to
// the reply it asks for, bumps it (and so the generation units' labels).
const WriterPromptVersion = "omnicloze-writer/1"

// generationVersion changes whenever the requests sent, the validation or
// the way replies are stored change: it is part of the units' labels.
const generationVersion = "1"

// defaultUnitItems is the captions of one generation unit.
const defaultUnitItems = 8

// writerTemperature is the sampling temperature of writer calls.
const writerTemperature = 0.7

// GeneratedPrefix starts the source names of the writer's replies
// ("generated/unit-00000.jsonl").
const GeneratedPrefix = "generated/"

// IsGenerated reports whether a source holds the writer's replies.
func IsGenerated(name string) bool { return strings.HasPrefix(name, GeneratedPrefix) }

// WrittenOption is one option of a written blank.
type WrittenOption struct {
	Text    string `json:"text"`
	Correct bool   `json:"correct"`
}

// WrittenBlank is one blank of a written item.
type WrittenBlank struct {
	Blank   int             `json:"blank"`
	Options []WrittenOption `json:"options"`
}

// WriterReply is what a writer replies: the passage and its blanks, each
// option marked correct or not.
type WriterReply struct {
	Passage string         `json:"passage"`
	Blanks  []WrittenBlank `json:"blanks"`
}

// ErrWriterReply is wrapped by Validate's errors.
var ErrWriterReply = errors.New("omnicloze: invalid cloze item")

// Validate rejects an empty passage and a reply without blanks: a reply
// that is not an item at all (asked again once). Everything else about the
// item is checked by the validation, which counts it by reason.
func (r WriterReply) Validate() error {
	switch {
	case strings.TrimSpace(r.Passage) == "":
		return fmt.Errorf("%w: empty passage", ErrWriterReply)
	case len(r.Blanks) == 0:
		return fmt.Errorf("%w: no blanks", ErrWriterReply)
	}
	return nil
}

// ReplyItem is the item a writer's reply makes of caption c, and whether
// it is kept: every blank must mark exactly one option correct
// (RejectAnswerKey), then the item must pass CheckItem. The options are
// stored in the writer's order.
func ReplyItem(c Caption, r WriterReply, writer string) (schemas.OmniClozeItem, Check) {
	blanks := make([]schemas.ClozeBlank, len(r.Blanks))
	var check Check
	for i, b := range r.Blanks {
		blanks[i] = schemas.ClozeBlank{Blank: b.Blank, Options: make([]string, len(b.Options))}
		correct := 0
		for j, o := range b.Options {
			blanks[i].Options[j] = o.Text
			if o.Correct {
				correct++
				blanks[i].Answer = o.Text
			}
		}
		if correct != 1 && check.Kept() {
			check = Check{Reason: RejectAnswerKey, Detail: fmt.Sprintf("blank %d marks %d options correct, want 1", b.Blank, correct)}
		}
	}
	it := c.Item(r.Passage, blanks, writer)
	if !check.Kept() {
		return it, check
	}
	return it, CheckItem(&it, blanks)
}

// WriterSchema is the JSON schema of WriterReply, sent with writer calls.
var WriterSchema = &judge.Schema{Name: "cloze_item", Strict: true, JSON: json.RawMessage(`{
  "type": "object",
  "properties": {
    "passage": {"type": "string"},
    "blanks": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "blank": {"type": "integer"},
          "options": {
            "type": "array",
            "items": {
              "type": "object",
              "properties": {"text": {"type": "string"}, "correct": {"type": "boolean"}},
              "required": ["text", "correct"],
              "additionalProperties": false
            }
          }
        },
        "required": ["blank", "options"],
        "additionalProperties": false
      }
    }
  },
  "required": ["passage", "blanks"],
  "additionalProperties": false
}`)}

const writerSystem = `You write cloze items that test how completely a caption describes a media clip, in the manner of Omni-Cloze. You are given the clip's reference detailed caption.

Copy the caption as the passage, word for word, except that you replace %d of its informative words (objects, sound sources, actions, attributes such as colours, materials or sound qualities) with the markers [BLANK_1], [BLANK_2], … in order of appearance. Choose words that occur only once in the caption, never two neighbouring words, and never a word that the rest of the passage gives away.

For each blank give the word you removed (marked correct) and %d distractors (marked not correct): words of the same kind and form that fit the sentence just as well and are plausible for the clip, but that appear nowhere in the caption. Do not offer "Not Given": every blank offers it anyway.

Reply with one JSON object and nothing else, in this form:
{"passage": "… [BLANK_1] …", "blanks": [{"blank": 1, "options": [{"text": "…", "correct": true}, {"text": "…", "correct": false}]}]}`

// WriterMessages is the writer's prompt (WriterPromptVersion) for caption
// c, asking for blanks blanks of distractors distractors each.
func WriterMessages(c Caption, blanks, distractors int) []openai.ChatCompletionMessage {
	user := fmt.Sprintf("Domain: %s / %s\nMedia: %s\n\n## Reference caption\n\n<<<\n%s\n>>>\n", c.Domain, c.Subcategory, c.Media.Kind, c.Text)
	return []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: fmt.Sprintf(writerSystem, blanks, distractors)},
		{Role: openai.ChatMessageRoleUser, Content: user},
	}
}

// generationID identifies the calls a build makes: the caption files, the
// writer, blanks, distractors, seed and unit size.
func generationID(srcs []catalog.Source, norm map[string]string, unitItems int) string {
	h := sha256.New()
	fmt.Fprintf(h, "omnicloze generation v%s %s\nwriter=%s\nblanks=%s\ndistractors=%s\nseed=%s\nunit=%d\n",
		generationVersion, WriterPromptVersion, norm["writer"], norm["blanks"], norm["distractors"], norm["seed"], unitItems)
	for _, s := range srcs {
		if s.Name == CaptionsFile {
			fmt.Fprintf(h, "file=%s=%s\n", s.Name, s.SHA256)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// planGeneration plans the units: the version id is derived now, before
// any model call.
func (b Builder) planGeneration(srcs []catalog.Source, captions []Caption, norm map[string]string, o Options) datasets.Plan {
	return datasets.PlanUnits(b, srcs, norm, generationID(srcs, norm, o.UnitItems), len(captions), o.UnitItems, defaultUnitItems)
}

// planOptions parses a plan's parameters with its runtime settings.
func planOptions(plan datasets.Plan) (Options, error) {
	o, _, err := ParseParams(plan.AllParams())
	return o, err
}

// writtenLine is one line of a unit's output: the writer's reply for one
// caption, with the verdict of the validation.
type writtenLine struct {
	ID     string `json:"id"`
	Writer string `json:"writer"`
	// Verdict is the call's audit record: prompt version, raw reply,
	// parsed reply or parse error, attempts.
	Verdict judge.Verdict `json:"verdict"`
	// Skipped is the reason a refused call gave.
	Skipped string `json:"skipped,omitempty"`
	// Check is the validation's verdict: kept when its reason is empty.
	Check Check `json:"check"`
}

// Generate asks the writer for an item for every caption of unit u and
// saves the replies with their validation. A reply that does not parse
// (after one retry) or a call refused for its request (bad request,
// context too long) is recorded and rejected; any other gateway error
// stops the unit, wrapped with the caption and the writer.
func (b Builder) Generate(ctx context.Context, env datasets.Env, plan datasets.Plan, u datasets.Part, progress func(done int64)) (datasets.Generated, error) {
	o, err := planOptions(plan)
	if err != nil {
		return datasets.Generated{}, err
	}
	if env.Models == nil {
		return datasets.Generated{}, errors.New("omnicloze: writing items needs the model gateway, and this worker has none")
	}
	captions, _, err := readStaged(ctx, env, plan.Sources)
	if err != nil {
		return datasets.Generated{}, err
	}
	unit, err := datasets.UnitOf(plan, u, captions, "captions")
	if err != nil {
		return datasets.Generated{}, err
	}
	byDomain := map[string][]Caption{}
	for _, c := range captions {
		byDomain[c.Domain] = append(byDomain[c.Domain], c)
	}
	call := func(ctx context.Context, i int) (writtenLine, error) {
		c := unit[i]
		return write(ctx, env.Models, c, othersOf(c, byDomain[c.Domain]), o)
	}
	count := func(l writtenLine, gen *datasets.Generated) {
		gen.Usage.Merge(l.Verdict.Usage)
		switch {
		case l.Skipped != "":
			gen.Skipped++
		case l.Check.Kept():
			gen.Outputs++
		}
	}
	name := func(l writtenLine) string { return l.Writer + "'s item for " + l.ID }
	return datasets.WriteUnit(ctx, env, plan, u, GeneratedPrefix, len(unit), progress, call, count, name)
}

// othersOf is the captions of c's domain but c.
func othersOf(c Caption, domain []Caption) []Caption {
	out := make([]Caption, 0, len(domain))
	for _, d := range domain {
		if d.ID != c.ID {
			out = append(out, d)
		}
	}
	return out
}

// write asks the writer for an item for caption c and validates it.
func write(ctx context.Context, models datasets.Completer, c Caption, others []Caption, o Options) (writtenLine, error) {
	temp := float32(writerTemperature)
	seed := datasets.RequestSeed("omnicloze writer seed", o.Seed)
	req := judge.Request{
		Judge: o.Writer, PromptVersion: WriterPromptVersion, Schema: WriterSchema,
		Messages: WriterMessages(c, o.Blanks, o.Distractors),
		Params:   modelapi.Params{Temperature: &temp}, Seed: &seed,
	}
	if r, ok := MakeCloze(c, others, o.Blanks, o.Distractors, o.Seed); ok {
		b, _ := json.Marshal(r) // strings, ints and booleans: cannot fail
		req.Oracle = string(b)
	}
	line := writtenLine{ID: c.ID, Writer: o.Writer}
	var reply WriterReply
	v, err := judge.Ask(ctx, models, req, &reply)
	line.Verdict = v
	switch {
	case err != nil && errors.Is(err, modelapi.ErrModelFailure):
		line.Skipped = modelapi.ReasonOf(err)
		line.Check = Check{Reason: RejectRefused, Detail: line.Skipped}
	case err != nil:
		return line, fmt.Errorf("omnicloze: caption %s: writer %s: %w", c.ID, o.Writer, err)
	case v.Failed():
		line.Check = Check{Reason: RejectUnparseable, Detail: v.Error}
	default:
		_, line.Check = ReplyItem(c, reply, o.Writer)
	}
	return line, nil
}

// Finish adds every unit's replies to the plan's sources (the version id
// is unchanged: it was derived before any call), validates the items
// again, records the counts in the plan's Stats and plans one part. A
// build that keeps no item at all is bad input.
func (b Builder) Finish(ctx context.Context, env datasets.Env, plan datasets.Plan) (datasets.Plan, error) {
	o, err := planOptions(plan)
	if err != nil {
		return plan, err
	}
	out := plan
	if out.Sources, err = datasets.FinishSources(ctx, env, plan, IsGenerated); err != nil {
		return plan, err
	}
	rows, st, err := buildGenerated(ctx, env, out.Sources, o)
	if err != nil {
		return plan, err
	}
	if len(rows) == 0 {
		return plan, &datasets.InputError{File: "sources", Msg: fmt.Sprintf("no item kept: the writer %s's %d items were all rejected (%s) and the source has no hand-written items",
			o.Writer, st.Captions, st.rejections())}
	}
	out.Stats = st.Map()
	out.Parts = []datasets.Part{datasets.OnePart("items", out.Sources, len(rows))}
	return out, nil
}

// BuildStats count what a build kept and rejected.
type BuildStats struct {
	// Captions is the captions the writer was asked about; Kept the items
	// it wrote that passed; HandWritten the items read from item files.
	Captions, Kept, HandWritten int
	// Rejected counts the rejected items by reason (RejectReasons).
	Rejected map[string]int
}

// Stats keys (datasets.Plan.Stats, and so the manifest and the card).
const (
	StatCaptions       = "captions"
	StatKept           = "kept"
	StatHandWritten    = "hand_written"
	StatRejectedPrefix = "rejected."
)

// Map is the stats as the plan records them: every reason, zero or not.
func (s BuildStats) Map() map[string]int64 {
	m := map[string]int64{StatCaptions: int64(s.Captions), StatKept: int64(s.Kept), StatHandWritten: int64(s.HandWritten)}
	for _, r := range RejectReasons {
		m[StatRejectedPrefix+r] = int64(s.Rejected[r])
	}
	return m
}

// rejections lists the reasons with their counts, for messages.
func (s BuildStats) rejections() string {
	var parts []string
	for _, r := range RejectReasons {
		if n := s.Rejected[r]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", r, n))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// buildGenerated reads the units' replies and returns the rows of a
// generated build: the hand-written items, then the writer's items that
// pass the validation, in caption order. Each reply is validated again
// here (the stored verdict is what Generate decided, for audit).
func buildGenerated(ctx context.Context, env datasets.Env, srcs []catalog.Source, o Options) ([]schemas.OmniClozeItem, BuildStats, error) {
	st := BuildStats{Rejected: map[string]int{}}
	captions, rows, err := readStaged(ctx, env, srcs)
	if err != nil {
		return nil, st, err
	}
	st.HandWritten, st.Captions = len(rows), len(captions)
	byID := map[string]int{}
	for i, c := range captions {
		byID[c.ID] = i
	}
	kept := make([]*schemas.OmniClozeItem, len(captions))
	answered := make([]bool, len(captions))
	for _, s := range srcs {
		if !IsGenerated(s.Name) {
			continue
		}
		err := datasets.EachStagedLine(ctx, env, s.SHA256, s.URI, func(n int, raw []byte) error {
			var l writtenLine
			if err := json.Unmarshal(raw, &l); err != nil {
				return &datasets.InputError{File: s.URI, Line: n, Msg: "not a JSON object: " + err.Error()}
			}
			i, ok := byID[l.ID]
			switch {
			case !ok:
				return &datasets.InputError{File: s.URI, Line: n, Msg: fmt.Sprintf("an item for caption %q, which the sources do not have", l.ID)}
			case l.Writer != o.Writer:
				return &datasets.InputError{File: s.URI, Line: n, Msg: fmt.Sprintf("an item from %s, which is not the writer of this build", l.Writer)}
			case answered[i]:
				return &datasets.InputError{File: s.URI, Line: n, Msg: fmt.Sprintf("a second item for caption %q", l.ID)}
			}
			answered[i] = true
			check := l.Check
			if check.Reason != RejectRefused && !l.Verdict.Failed() {
				var reply WriterReply
				if err := json.Unmarshal(l.Verdict.Parsed, &reply); err != nil {
					return &datasets.InputError{File: s.URI, Line: n, Msg: "the parsed reply does not decode: " + err.Error()}
				}
				var it schemas.OmniClozeItem
				it, check = ReplyItem(captions[i], reply, o.Writer)
				if check.Kept() {
					kept[i] = &it
				}
			}
			if !check.Kept() {
				st.Rejected[check.Reason]++
			}
			return nil
		})
		if err != nil {
			return nil, st, err
		}
	}
	for i, c := range captions {
		if !answered[i] {
			return nil, st, fmt.Errorf("omnicloze: caption %s has no reply in the generated units", c.ID)
		}
		if kept[i] != nil {
			rows = append(rows, *kept[i])
			st.Kept++
		}
	}
	return rows, st, nil
}
