package ifevalcode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/sandbox/lang"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
)

// Name is the dataset the task evaluates.
const Name = "ifevalcode"

// The original's prompt suffixes (infer_models.py): the prompt is the
// question followed by the suffix of its language.
const (
	PromptSuffixEnglish = "\n\nNote that if you need to use the standard library, you need to import it yourself. \n\nPlease return all the complete code in the first code block."
	PromptSuffixChinese = "\n\n注意如果你需要使用标准库，你需要自行导入。\n\n请在第一个代码块中返回所有的完整代码。"
)

// Prompt returns the user message the original sends for an item, for the
// question language "en" or "zh".
func Prompt(it schemas.IFEvalCodeItem, questionLanguage string) (string, error) {
	switch questionLanguage {
	case "en":
		return it.EnglishQuestion + PromptSuffixEnglish, nil
	case "zh":
		return it.ChineseQuestion + PromptSuffixChinese, nil
	}
	return "", fmt.Errorf("ifevalcode: question language %q (want en or zh)", questionLanguage)
}

// QuestionLanguages are the question languages every item is asked in, in
// the order the task asks them.
var QuestionLanguages = []string{"en", "zh"}

// The task's metrics. Corr and Instr are the means over the two question
// languages of the per-language verdicts (1 pass, 0 fail), so over a run
// they are the mean of the original's en and zh Corr. (or Instr.).
const (
	MetricCorr    = "corr"
	MetricInstr   = "instr"
	MetricCorrEn  = "corr_en"
	MetricInstrEn = "instr_en"
	MetricCorrZh  = "corr_zh"
	MetricInstrZh = "instr_zh"
)

// ScoreQueue is the task queue the task's scoring runs on (the sandbox
// workers').
const ScoreQueue = "sandbox"

// Task evaluates a model on the ifevalcode dataset through the engine. One
// sample is one item (Category: its programming language). Evaluate asks
// the model the English and then the Chinese question (each a single user
// message, as the original's infer_models.py sends it) and only generates;
// Score, a deferred scorer on the "sandbox" queue, runs both checks on
// both replies in the sandbox.
type Task struct {
	scorer *Scorer
	// slots bounds Scorer.Score calls in flight (each runs its two
	// programs one after the other), so a worker runs about one program
	// per CPU however many samples the engine scores at once.
	slots chan struct{}
}

var (
	_ scorers.Task                   = (*Task)(nil)
	_ scorers.DeferredScorer         = (*Task)(nil)
	_ scorers.MultiReferenceProvider = (*Task)(nil)
)

// NewTask returns the task. sb runs the checks; nil on workers without a
// sandbox, whose Score then fails as an infrastructure error (generation
// and references need no sandbox). opts.Concurrency bounds the replies
// scored at once by this task (default: the number of CPUs).
func NewTask(sb lang.Sandboxer, opts Options) *Task {
	n := opts.Concurrency
	if n <= 0 {
		n = runtime.NumCPU()
	}
	t := &Task{slots: make(chan struct{}, n)}
	if sb != nil {
		t.scorer = New(sb, opts)
	}
	return t
}

// Dataset implements scorers.Task.
func (*Task) Dataset() string { return Name }

// Version implements scorers.Task.
func (*Task) Version() string { return "1" }

// Metrics implements scorers.Task: the headline corr first.
func (*Task) Metrics() []string {
	return []string{MetricCorr, MetricInstr, MetricCorrEn, MetricInstrEn, MetricCorrZh, MetricInstrZh}
}

// ScoreQueue implements scorers.DeferredScorer.
func (*Task) ScoreQueue() string { return ScoreQueue }

// ReadSamples implements scorers.Task.
func (*Task) ReadSamples(ctx context.Context, store blob.Store, key string, start, n int64, fn func(scorers.Sample) error) error {
	return scorers.ReadRows(ctx, store, key, start, n,
		func(it *schemas.IFEvalCodeItem) string { return it.ID }, func(it *schemas.IFEvalCodeItem) string { return it.ProgrammingLanguage }, fn)
}

// Details is a sample's Outcome.Details: Evaluate fills the replies, Score
// adds the verdicts. It is stored as JSON and read back by Score.
type Details struct {
	// Language is the item's programming language.
	Language string `json:"programming_language"`
	// Replies are the model's replies, en then zh.
	Replies []Reply `json:"replies"`
}

// Reply is the model's reply to one question language and, once scored,
// its verdict.
type Reply struct {
	QuestionLanguage string `json:"question_language"`
	// Response is the whole reply text ("" when the model gave no choice).
	Response string   `json:"response"`
	Verdict  *Verdict `json:"verdict,omitempty"`
}

// Verdict is Score's result for one reply.
type Verdict struct {
	Correct           bool   `json:"correct"`
	Instruction       bool   `json:"instruction"`
	Status            Status `json:"status"`
	CorrectnessStatus Status `json:"correctness_status"`
	InstructionStatus Status `json:"instruction_status"`
	// Detail says why a check failed ("correctness: ...; instruction: ...").
	Detail string `json:"detail,omitempty"`
}

func decodeRow(s scorers.Sample) (*schemas.IFEvalCodeItem, error) {
	row, ok := s.Row.(*schemas.IFEvalCodeItem)
	if !ok || row == nil {
		return nil, fmt.Errorf("ifevalcode: sample %s: row is %T", s.ID, s.Row)
	}
	return row, nil
}

// messages returns the prompt Evaluate sends for a question language.
func messages(row *schemas.IFEvalCodeItem, ql string) ([]openai.ChatCompletionMessage, error) {
	p, err := Prompt(*row, ql)
	if err != nil {
		return nil, err
	}
	return []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: p}}, nil
}

// Evaluate implements scorers.Task: it asks the English then the Chinese
// question and keeps both replies (Response is the English one). It leaves
// Metrics empty: Score fills them on the sandbox queue.
func (*Task) Evaluate(ctx context.Context, env scorers.Env, s scorers.Sample) (scorers.Outcome, error) {
	row, err := decodeRow(s)
	if err != nil {
		return scorers.Outcome{}, err
	}
	d := Details{Language: row.ProgrammingLanguage}
	var prompts [][]openai.ChatCompletionMessage
	for _, ql := range QuestionLanguages {
		msgs, err := messages(row, ql)
		if err != nil {
			return scorers.Outcome{}, fmt.Errorf("ifevalcode: sample %s: %w", s.ID, err)
		}
		prompts = append(prompts, msgs)
	}
	out := scorers.Outcome{PromptHash: promptHash(prompts)}
	for i, ql := range QuestionLanguages {
		resp, err := env.Models.Complete(ctx, env.Request(prompts[i], nil))
		if err != nil {
			return out, err
		}
		out.Usage.Add(resp.Usage)
		d.Replies = append(d.Replies, Reply{QuestionLanguage: ql, Response: resp.Text()})
	}
	out.Response = d.Replies[0].Response
	out.Details = d
	return out, nil
}

func promptHash(prompts [][]openai.ChatCompletionMessage) string {
	b, _ := json.Marshal(prompts)
	return scorers.PromptHash(string(b))
}

// detailsOf recovers Evaluate's Details from an outcome: the value itself
// (in process) or its JSON decoding (as the engine hands it back).
func detailsOf(o scorers.Outcome) (Details, error) {
	var d Details
	switch v := o.Details.(type) {
	case Details:
		d = v
	case *Details:
		if v != nil {
			d = *v
		}
	case nil:
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return d, err
		}
		if err := json.Unmarshal(b, &d); err != nil {
			return d, err
		}
	}
	d.Replies = append([]Reply(nil), d.Replies...) // Score fills verdicts: never alias the caller's
	return d, nil
}

// Score implements scorers.DeferredScorer: both replies go through both
// checks in the sandbox. A compile error, a failed test or a timeout is the
// model's failure (metrics 0, the reason in Details); a sandbox failure, a
// worker without a sandbox or an outcome without its replies is an error
// (infrastructure: retried, never scored).
func (t *Task) Score(ctx context.Context, s scorers.Sample, o scorers.Outcome) (scorers.Outcome, error) {
	if t.scorer == nil {
		return o, errors.New("ifevalcode: this worker has no sandbox: IFEvalCode is scored on the sandbox queue's workers")
	}
	row, err := decodeRow(s)
	if err != nil {
		return o, err
	}
	d, err := detailsOf(o)
	if err != nil {
		return o, fmt.Errorf("ifevalcode: sample %s: stored details: %w", s.ID, err)
	}
	if len(d.Replies) != len(QuestionLanguages) {
		return o, fmt.Errorf("ifevalcode: sample %s: stored details hold %d replies, want %d (en, zh)", s.ID, len(d.Replies), len(QuestionLanguages))
	}
	d.Language = row.ProgrammingLanguage
	it := ItemFromRow(*row)
	type result struct {
		res Result
		err error
	}
	results := make([]chan result, len(d.Replies))
	for i, r := range d.Replies {
		if r.QuestionLanguage != QuestionLanguages[i] {
			return o, fmt.Errorf("ifevalcode: sample %s: stored reply %d is for %q, want %q", s.ID, i, r.QuestionLanguage, QuestionLanguages[i])
		}
		results[i] = make(chan result, 1)
		go func() {
			res, err := t.score(ctx, it, r.Response)
			results[i] <- result{res, err}
		}()
	}
	m := map[string]float64{}
	var firstErr error
	for i := range d.Replies {
		r := <-results[i]
		if r.err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("ifevalcode: sample %s (%s question): %w", s.ID, d.Replies[i].QuestionLanguage, r.err)
			}
			continue
		}
		d.Replies[i].Verdict = &Verdict{Correct: r.res.Correct, Instruction: r.res.Instruction, Status: r.res.Status,
			CorrectnessStatus: r.res.CorrectnessStatus, InstructionStatus: r.res.InstructionStatus, Detail: r.res.Detail}
		ql := d.Replies[i].QuestionLanguage
		m["corr_"+ql], m["instr_"+ql] = b2f(r.res.Correct), b2f(r.res.Instruction)
	}
	if firstErr != nil {
		return o, firstErr
	}
	m[MetricCorr] = (m[MetricCorrEn] + m[MetricCorrZh]) / 2
	m[MetricInstr] = (m[MetricInstrEn] + m[MetricInstrZh]) / 2
	o.Metrics = m
	o.Details = d
	return o, nil
}

// score runs one reply through the scorer once a slot is free.
func (t *Task) score(ctx context.Context, it Item, response string) (Result, error) {
	select {
	case t.slots <- struct{}{}:
	case <-ctx.Done():
		return Result{Status: StatusSandboxError}, ctx.Err()
	}
	defer func() { <-t.slots }()
	return t.scorer.Score(ctx, it, response)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Reference implements scorers.ReferenceProvider: the English prompt's
// reference (References has both).
func (t *Task) Reference(s scorers.Sample) (scorers.Reference, bool) {
	refs := t.References(s)
	if len(refs) == 0 {
		return scorers.Reference{}, false
	}
	return refs[0], true
}

// References implements scorers.MultiReferenceProvider: the item's
// reference_solution as the reply to each of the prompts Evaluate sends
// (en, zh). None when the item has no reference solution.
func (*Task) References(s scorers.Sample) []scorers.Reference {
	row, err := decodeRow(s)
	if err != nil || row.ReferenceSolution == nil {
		return nil
	}
	var refs []scorers.Reference
	for _, ql := range QuestionLanguages {
		msgs, err := messages(row, ql)
		if err != nil {
			return nil
		}
		refs = append(refs, scorers.Reference{Messages: msgs, Content: *row.ReferenceSolution})
	}
	return refs
}
