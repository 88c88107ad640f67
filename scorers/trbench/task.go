package trbench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
)

// Task evaluates a judge model on the trbench dataset: the model under test
// (--model) is the judge. Each row holds one pair in both orders; Evaluate
// asks the judge twice (order 1, then order 2, each a single user message
// holding the critique prompt), parses each verdict with ParseChoice, and
// reports
//
//	w_avg       1 iff both verdicts are right (TRBench's W-Avg, the headline)
//	acc_order1  1 iff the order-1 verdict is right
//	acc_order2  1 iff the order-2 verdict is right
//	avg         the mean of the two
//
// The sample category is the pair's task source (the BFCL category), so the
// run summary gives W-Avg per source. A reply without a valid verdict counts
// as wrong and is reported as the model error "unparseable".
type Task struct{}

var _ scorers.Task = Task{}
var _ scorers.ReferenceProvider = Task{}

func (Task) Dataset() string   { return "trbench" }
func (Task) Version() string   { return "1" }
func (Task) Metrics() []string { return []string{"w_avg", "acc_order1", "acc_order2", "avg"} }

// ReadSamples implements scorers.Task.
func (Task) ReadSamples(ctx context.Context, store blob.Store, key string, start, n int64, fn func(scorers.Sample) error) error {
	return scorers.ReadRows(ctx, store, key, start, n,
		func(r *schemas.TRBenchPair) string { return r.PairID }, func(r *schemas.TRBenchPair) string { return r.TaskSource }, fn)
}

func row(s scorers.Sample) (*schemas.TRBenchPair, error) {
	r, ok := s.Row.(*schemas.TRBenchPair)
	if !ok {
		return nil, fmt.Errorf("trbench: sample %s: row is %T", s.ID, s.Row)
	}
	if r.PromptOrder1 == "" || r.PromptOrder2 == "" {
		return nil, fmt.Errorf("trbench: sample %s: a prompt is empty", s.ID)
	}
	return r, nil
}

// Messages is what is sent for one order (1 or 2) of a pair.
func Messages(r *schemas.TRBenchPair, order int) []openai.ChatCompletionMessage {
	p := r.PromptOrder1
	if order == 2 {
		p = r.PromptOrder2
	}
	return []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: p}}
}

// Verdict is the judge's answer for one order.
type Verdict struct {
	Order       int    `json:"order"`
	Choice      string `json:"choice"` // "1", "2" or "" (none)
	Parsed      string `json:"parsed"` // strict, loose or none
	GroundTruth string `json:"ground_truth"`
	Correct     bool   `json:"correct"`
}

// Evaluate asks the judge both orders and scores the verdicts.
func (Task) Evaluate(ctx context.Context, env scorers.Env, s scorers.Sample) (scorers.Outcome, error) {
	r, err := row(s)
	if err != nil {
		return scorers.Outcome{}, err
	}
	out := scorers.Outcome{PromptHash: promptHash(r)}
	var verdicts [2]Verdict
	var texts [2]string
	for i, gt := range []string{r.GroundTruthOrder1, r.GroundTruthOrder2} {
		resp, err := env.Models.Complete(ctx, env.Request(Messages(r, i+1), nil))
		if err != nil {
			return out, err
		}
		out.Usage.Add(resp.Usage)
		texts[i] = resp.Text()
		c, how := ParseChoice(texts[i])
		verdicts[i] = Verdict{Order: i + 1, Choice: c, Parsed: how, GroundTruth: gt, Correct: c != "" && c == gt}
	}
	a1, a2 := b2f(verdicts[0].Correct), b2f(verdicts[1].Correct)
	out.Metrics = map[string]float64{"w_avg": a1 * a2, "acc_order1": a1, "acc_order2": a2, "avg": (a1 + a2) / 2}
	out.Response = "[order 1]\n" + texts[0] + "\n[order 2]\n" + texts[1]
	for _, v := range verdicts {
		if v.Parsed == ParsedNone {
			out.ModelError = "unparseable"
			out.ModelMsg = fmt.Sprintf("order %d: no <choice>1|2</choice> in the reply", v.Order)
			break
		}
	}
	out.Details = map[string]any{"verdicts": verdicts, "error_type": r.ErrorType, "pair_source": r.PairSource}
	return out, nil
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func promptHash(r *schemas.TRBenchPair) string {
	sum := sha256.Sum256([]byte(r.PromptOrder1 + "\x00" + r.PromptOrder2))
	return hex.EncodeToString(sum[:8])
}

// References are the right verdicts of both orders, as the reference judge
// would give them: one per order, each keyed by that order's prompt.
func References(s scorers.Sample) ([]scorers.Reference, bool) {
	r, err := row(s)
	if err != nil {
		return nil, false
	}
	return []scorers.Reference{
		{Messages: Messages(r, 1), Content: "<choice>\n" + r.GroundTruthOrder1 + "\n</choice>"},
		{Messages: Messages(r, 2), Content: "<choice>\n" + r.GroundTruthOrder2 + "\n</choice>"},
	}, true
}

var _ scorers.MultiReferenceProvider = Task{}

// References implements scorers.MultiReferenceProvider: the correct
// verdict for each of the two orders, so baseline/reference is a judge that
// is right in both (W-Avg 1).
func (Task) References(s scorers.Sample) []scorers.Reference {
	refs, _ := References(s)
	return refs
}

// Reference implements scorers.ReferenceProvider: the order-1 verdict (the
// engine uses References, which gives both).
func (Task) Reference(s scorers.Sample) (scorers.Reference, bool) {
	refs, ok := References(s)
	if !ok {
		return scorers.Reference{}, false
	}
	return refs[0], true
}
