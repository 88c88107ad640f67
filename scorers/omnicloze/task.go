package omnicloze

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/internal/refkey"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
)

// Dataset is the dataset the task evaluates.
const Dataset = "omnicloze"

// RoleJudge is the judge role of a run's judges (--judge judge=MODEL[,…]):
// one model, or a panel.
const RoleJudge = "judge"

// DefaultJudge judges a run that names no judge: the baseline judge, which
// answers with the lexical filler's choices (the task's oracle).
const DefaultJudge = "baseline/judge"

// SetAccuracy names the panel ratings stored in the details (the labels
// that decide the blanks' outcomes).
const SetAccuracy = "accuracy"

// ErrRoles is returned (wrapped) for judge roles the task cannot run.
var ErrRoles = errors.New("omnicloze: judge roles")

// Task evaluates a captioner on Omni-Cloze items: the model under test
// captions the item's media (CaptionMessages), or the caption is read from
// a captions file (the model "captions/<key>", see CaptionsPrefix); then
// each judge of the panel fills every blank of the item from the caption
// alone, in one call (FillMessages, with the lexical filler's answers as
// the oracle). Each blank's choices are resolved by judge.Resolve (a tie
// goes to Not Given) and counted as correct, omission or hallucination.
// The sample category is "domain/subcategory". See
// docs/benchmarks/omnicloze.md.
type Task struct {
	// Store is where captions files are read from; nil on workers that
	// have none (a captions run then fails its samples as infrastructure
	// errors).
	Store blob.Store
	files *captionFiles
}

// NewTask is the task reading captions files from store.
func NewTask(store blob.Store) Task { return Task{Store: store, files: &captionFiles{}} }

var (
	_ scorers.Task              = Task{}
	_ scorers.ReferenceProvider = Task{}
)

// taskVersion changes whenever scoring or a prompt changes.
const taskVersion = "1"

func (Task) Dataset() string { return Dataset }
func (Task) Version() string { return taskVersion }

// Metrics lists the metrics of every scored sample, accuracy first. The
// rates are absent from a sample none of whose blanks was judged; the
// counts are always there (see MetricJudged).
func (Task) Metrics() []string {
	return []string{MetricAccuracy, MetricOmission, MetricHallucination, MetricJudgeErrorRate,
		MetricJudged, MetricCorrect, MetricOmitted, MetricHallucinated}
}

// Category is a sample's category: "domain/subcategory".
func Category(it *schemas.OmniClozeItem) string { return it.Domain + "/" + it.Subcategory }

// ReadSamples implements scorers.Task.
func (Task) ReadSamples(ctx context.Context, store blob.Store, key string, start, n int64, fn func(scorers.Sample) error) error {
	return scorers.ReadRows(ctx, store, key, start, n, func(r *schemas.OmniClozeItem) string { return r.ID }, Category, fn)
}

// itemOf decodes a sample's row and blanks; a row that breaks the schema
// wraps scorers.ErrBadSample.
func itemOf(s scorers.Sample) (*schemas.OmniClozeItem, []schemas.ClozeBlank, error) {
	it, ok := s.Row.(*schemas.OmniClozeItem)
	if !ok {
		return nil, nil, fmt.Errorf("omnicloze: sample %s: row is %T: %w", s.ID, s.Row, scorers.ErrBadSample)
	}
	blanks, err := DecodeBlanks(it)
	if err != nil {
		return nil, nil, fmt.Errorf("omnicloze: sample %s: %v: %w", s.ID, err, scorers.ErrBadSample)
	}
	return it, blanks, nil
}

// JudgesOf reads the judge panel of a run (DefaultJudge when none is
// named). Any other role is an error, so that a misspelt role is not
// silently ignored.
func JudgesOf(judges map[string]string) ([]string, error) {
	for role := range judges {
		if role != RoleJudge {
			return nil, fmt.Errorf("%w: unknown role %q (want %s)", ErrRoles, role, RoleJudge)
		}
	}
	if p := judge.Panel(judges, RoleJudge); len(p) > 0 {
		return p, nil
	}
	return []string{DefaultJudge}, nil
}

// JudgeRecord is one judge's answer for an item: the audit record of the
// call (prompt version, raw reply, parsed reply or parse error, attempts)
// and what the task read from it.
type JudgeRecord struct {
	Verdict judge.Verdict `json:"verdict"`
	// Missing lists the blanks the parsed reply left out, Invalid those
	// whose option names none of the blank's (each a judge error of this
	// judge); Ignored the blank numbers it gave that name no blank.
	Missing []int `json:"missing,omitempty"`
	Invalid []int `json:"invalid,omitempty"`
	Ignored []int `json:"ignored,omitempty"`
	// CallError is set when the call itself was refused for this request
	// (bad request, context too long, content filter): a judge error of
	// every blank, like an unparseable reply.
	CallError string `json:"call_error,omitempty"`
}

// BlankResult is one blank's choices and outcome.
type BlankResult struct {
	Blank  int    `json:"blank"`
	Answer string `json:"answer"`
	// Labels holds each judge's choice, in the panel's order: an option's
	// text, NotGiven, or "" for a judge error.
	Labels []string `json:"labels"`
	// Choice is the panel's (judge.Resolve, a tie going to NotGiven); ""
	// when no judge gave one.
	Choice    string  `json:"choice"`
	Outcome   Outcome `json:"outcome"`
	Tie       bool    `json:"tie,omitempty"`
	Unanimous bool    `json:"unanimous,omitempty"`
}

// Details is what a result row stores (details_json): where the caption
// came from, every judge call's audit record and every blank's choices,
// so that a person can check any judged number.
type Details struct {
	// Ratings are the panel's labels of every blank, for the run's
	// agreement (judge.RatingsKey).
	Ratings []judge.Ratings `json:"panel_ratings"`
	Judges  []string        `json:"judges"`
	// CaptionFrom is "model" (the model under test captioned the media,
	// with CaptionPrompt, carrying it as MediaPart) or the captions file's
	// key.
	CaptionFrom string `json:"caption_from"`
	// CaptionFileSHA256 is the sha256 of the captions file read.
	CaptionFileSHA256 string        `json:"caption_file_sha256,omitempty"`
	CaptionPrompt     string        `json:"caption_prompt,omitempty"`
	MediaPart         string        `json:"media_part,omitempty"`
	Records           []JudgeRecord `json:"records"`
	Blanks            []BlankResult `json:"blanks"`
	Tally             Tally         `json:"tally"`
}

// Evaluate gets the item's caption and has the judges fill its blanks (see
// Task).
func (t Task) Evaluate(ctx context.Context, env scorers.Env, s scorers.Sample) (scorers.Outcome, error) {
	it, blanks, err := itemOf(s)
	if err != nil {
		return scorers.Outcome{}, err
	}
	judges, err := JudgesOf(env.Judges)
	if err != nil {
		// No sample of the run can be judged; the engine has no run-level
		// check of judge roles, so every row reports it, at once and
		// without retries, as not scored (as medrubric does).
		return scorers.Outcome{}, fmt.Errorf("%w: %w", err, scorers.ErrBadSample)
	}
	d := Details{Judges: judges}
	var out scorers.Outcome
	var caption string
	if key, ok := strings.CutPrefix(env.Model, CaptionsPrefix); ok {
		var sha string
		if caption, sha, err = t.fileCaption(ctx, key, it.ID); err != nil {
			return out, fmt.Errorf("omnicloze: sample %s: %w", s.ID, err)
		}
		d.CaptionFrom, d.CaptionFileSHA256 = key, sha
		out.PromptHash = sha[:16]
	} else {
		d.CaptionFrom, d.CaptionPrompt, d.MediaPart = "model", CaptionPromptVersion, MediaPart(it)
		req := env.Request(CaptionMessages(it), nil)
		out.PromptHash = refkey.Conversation(req.Messages)[:16]
		resp, err := env.Models.Complete(ctx, req)
		if err != nil {
			return out, fmt.Errorf("omnicloze: sample %s: caption: %w", s.ID, err)
		}
		out.Usage.Add(resp.Usage)
		caption = resp.Text()
	}
	out.Response = caption
	p := panel{models: env.Models, seed: env.Seed, noCache: env.NoCache}
	if err := p.fill(ctx, judges, caption, it.Passage, blanks, &d); err != nil {
		return out, fmt.Errorf("omnicloze: sample %s: %w", s.ID, err)
	}
	out.Usage.Merge(p.usage)
	out.Metrics = d.Tally.Map()
	ratings := judge.Ratings{Set: SetAccuracy, Judges: judges}
	labels, errs := 0, 0
	for _, b := range d.Blanks {
		ratings.Items = append(ratings.Items, b.Labels)
		for _, l := range b.Labels {
			labels++
			if l == "" {
				errs++
			}
		}
	}
	if labels > 0 {
		out.Metrics[MetricJudgeErrorRate] = float64(errs) / float64(labels)
	}
	// The sample's own agreement counts: blanks with two labels or more,
	// and those on which every label agrees.
	if a := judge.RunAgreement([]judge.Ratings{ratings}); len(judges) > 1 && len(a) == 1 && a[0].Paired > 0 {
		out.Metrics[MetricPanelUnanimous] = float64(a[0].Unanimous) / float64(a[0].Paired)
	}
	d.Ratings = []judge.Ratings{ratings}
	out.Details = d
	return out, nil
}

// panel asks the judges of one sample.
type panel struct {
	models  judge.Completer
	seed    *int
	noCache bool
	usage   modelapi.Totals
}

// fill asks every judge to fill the blanks from caption and resolves each
// blank, into d's Records, Blanks and Tally.
func (p *panel) fill(ctx context.Context, judges []string, caption, passage string, blanks []schemas.ClozeBlank, d *Details) error {
	msgs := FillMessages(caption, passage, blanks)
	oracle := FillOracle(caption, passage, blanks)
	zero := float32(0)
	labels := make([][]string, len(blanks)) // blank × judge
	for i := range labels {
		labels[i] = make([]string, len(judges))
	}
	for ji, model := range judges {
		var reply FillReply
		v, err := judge.Ask(ctx, p.models, judge.Request{
			Judge: model, PromptVersion: FillPromptVersion, Messages: msgs, Schema: FillSchema,
			Params: modelapi.Params{Temperature: &zero}, Seed: p.seed, NoCache: p.noCache, Oracle: oracle,
		}, &reply)
		p.usage.Merge(v.Usage)
		rec := JudgeRecord{Verdict: v}
		switch {
		case err != nil && !errors.Is(err, modelapi.ErrModelFailure):
			return err
		case err != nil:
			rec.CallError = err.Error()
		case !v.Failed():
			rec.read(reply, blanks, labels, ji)
		}
		d.Records = append(d.Records, rec)
	}
	for i, b := range blanks {
		res := judge.Resolve(labels[i], NotGiven)
		r := BlankResult{Blank: b.Blank, Answer: b.Answer, Labels: labels[i], Choice: res.Label,
			Tie: res.Tie, Unanimous: res.Unanimous && res.Votes > 1}
		r.Outcome = OutcomeOf(r.Choice, b.Answer)
		d.Tally.Add(r.Outcome)
		d.Blanks = append(d.Blanks, r)
	}
	return nil
}

// read writes judge ji's choices from its parsed reply into labels and
// records the blanks it left out, the options it gave that name none of
// the blank's, and the blank numbers that name no blank.
func (r *JudgeRecord) read(reply FillReply, blanks []schemas.ClozeBlank, labels [][]string, ji int) {
	index := make(map[int]int, len(blanks))
	for i, b := range blanks {
		index[b.Blank] = i
	}
	for _, a := range reply.Answers {
		i, ok := index[a.Blank]
		if !ok {
			r.Ignored = append(r.Ignored, a.Blank)
			continue
		}
		choice, ok := Choose(blanks[i], a.Option)
		if !ok {
			r.Invalid = append(r.Invalid, a.Blank)
			continue
		}
		labels[i][ji] = choice
	}
	for i, b := range blanks {
		if labels[i][ji] == "" && !slices.Contains(r.Invalid, b.Blank) {
			r.Missing = append(r.Missing, b.Blank)
		}
	}
}

// Reference implements scorers.ReferenceProvider: baseline/reference
// answers the caption request with the item's reference caption.
func (Task) Reference(s scorers.Sample) (scorers.Reference, bool) {
	it, ok := s.Row.(*schemas.OmniClozeItem)
	if !ok || it.Caption == "" {
		return scorers.Reference{}, false
	}
	return scorers.Reference{Messages: CaptionMessages(it), Content: it.Caption}, true
}
